// SPDX-License-Identifier: MIT
/*
 * gpu_block_cost - what global and shared-memory updates cost inside a
 * short memory-bound kernel, written by hand in CUDA (no gpuext): the cost
 * model behind block probes (docs/ptx-inject.md, "Block probes").
 *
 *   nvcc -O2 -arch=sm_90 bench/cuda/gpu_block_cost.cu -o build/bench/gpu_block_cost
 *   gpu_block_cost [-n ELEMENTS] [-iters N] [-rounds R] [-only V,V,...]
 *   gpu_block_cost -check    (the barrier exit with partial warps: exit 0 if right)
 *
 * vecadd (c = a + b, 256 threads a block) with, per variant, what a probe
 * would add: the entry barrier and record of block probes, a shared atomic
 * per warp exit, fire-and-forget global reductions (`red`, what eBPF's
 * __sync_fetch_and_add with an unused result becomes) per block or per
 * warp into per-block or per-SM slots, a 40-byte store per block.  Prints
 * per variant the median kernel time of N launches (CUDA events; the first
 * left out) and its ratio to the plain kernel's of the same round, over R
 * rounds that interleave the variants: the median ratio and its range.
 * -only V,...: the plain kernel and the variants of these numbers (the
 * table's first column), e.g. to profile a few with Nsight Compute.
 */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#define CHECK(call)                                                                  \
	do {                                                                         \
		cudaError_t err_ = (call);                                           \
		if (err_ != cudaSuccess) {                                           \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,          \
				cudaGetErrorString(err_));                           \
			exit(1);                                                     \
		}                                                                    \
	} while (0)

enum {
	V_PLAIN,
	V_BARRIER,       // thread 0 fills a 48-byte shared record, then __syncthreads
	V_BLOCK_PROBES,  // that, and one shared atomic per warp at exit (the scaffold)
	V_RED_BLOCK,     // one red per block at its block index (8-byte slots)
	V_RED_BLOCK_PAD, // one red per block, one 128-byte line per block index
	V_RED_SM,        // one red per block on its SM's line (8 lines an SM)
	V_RED_SM_2,      // two reds per block on its SM's line
	V_RED_4,         // two on its SM's line and two at its block index (threadhist)
	V_STORE_BLOCK,   // a 40-byte record per block and one red on its SM's line
	V_RED_WARP,      // one red per warp on its SM's line
	V_RED_WARP_4,    // two per warp on its SM's line, two at its block index
	V_SMID,          // thread 0 reads %smid into the shared record, nothing else
	V_RED_LINE_BID,  // one red per block on line bid % 1056 (as many lines as SM x 8)
	V_WAIT_EXIT,     // start stamped at entry, no entry barrier; at exit warps 1..
			 // barrier.arrive, warp 0 barrier.sync, thread 0 fills the record
	V_WAIT_RED_SM,   // that, and thread 0 then one red on its SM's line
	V_WAIT_RED_BID,  // that, and thread 0 then one red at its block index
	V_WAIT_STORE,    // that, and thread 0 then a 40-byte store at its block index
	V_WAIT_STORE_RED, // that store and a red on its SM's line (kernelretsnoop's pattern)
	V_STORE_ONLY,    // a 40-byte store per block at its block index, at entry
	V_RED_SM_1K,     // one red per block on its SM's line, the lines 1 KiB apart
	V_RED_SM_4K,     // the same, 4 KiB apart (spread over more of the L2)
	V_WAIT_BARE,     // the barrier exit alone: no timer at entry, nothing after it
	V_WAIT_TIME,     // the barrier exit, %globaltimer at entry and after it only
	// per warp memory instruction (vecadd's 2 loads and 1 store), what a
	// counting mem probe adds: the warp's lowest lane makes two updates
	V_ACC_GLOBAL,    // two global reds on its SM's line (memtrace on global maps)
	V_ACC_GENERIC,   // two reds on the block's shared counters by generic address
	V_ACC_SHARED,    // the same with .shared-space reds
	// session 6: where a block's first global write costs (the W_* kernels)
	V_W_BARE,        // the barrier exit alone (as V_WAIT_BARE; the W rows' base)
	V_W_ST,          // + thread 0 one 8-byte store at the block index after it
	V_W_ST_SM,       // + that store on its SM's line (hot: stays in the L2)
	V_W_ST_ONE,      // + that store, every block on the same word
	V_W_ST_CS,       // + the store at the block index with .cs (streaming)
	V_W_ST_NA,       // + with .L1::no_allocate
	V_W_ST_EF,       // + with an L2 evict_first cache policy
	V_W_ST6,         // + six 8-byte stores (a 48-byte record) at 48 x block index
	V_W_V2X3,        // + the record as three 16-byte stores (st.v2.u64)
	V_W_LANES,       // + the record stored by 6 lanes of warp 0, one instruction
	V_W_BULK,        // + the record from shared by cp.async.bulk, wait_group.read 0
	V_W_BULK_NOWAIT, // + the same, warp 0 leaves without waiting (timing only)
	V_W_RED,         // + one red at the block index
	V_W_LAST,        // no barrier: the last warp to leave (shared count) stores
			 // (the count zeroed at entry without a barrier: racy, timing only)
	V_W_WARP7,       // + the store after the barrier, by warp 7 (it waits, not warp 0)
	V_E_ST,          // no exit code: thread 0 one 8-byte store at entry
	V_E_ST_MID,      // thread 0 the store once its two loads are issued
	V_E_ST_END,      // thread 0 the store after its own store of c
	V_E_ST_W7,       // the store at entry by warp 7's lane 0
	V_E_ST_HALF,     // the store at entry, even blocks only
	V_E_RED_SM,      // thread 0 one red on its SM's line at entry (threadhist)
	V_E_RED_SM_MID,  // the same once its loads are issued
	V_E_RED_ONE,     // thread 0 one red at entry at (SM, block size): 1 line an SM
	V_E_SREG,        // thread 0 reads %smid and %globaltimer at entry (no write)
	V_W_ST_PRE,      // barrier exit; thread 0 stores 8 B before it waits, not after
	V_W_TIME,        // barrier exit + %globaltimer after it into shared (no global write)
	V_W_CODE,        // barrier exit + 32 dependent integer instructions after it
	V_W_LANES32,     // barrier exit + all of warp 0 stores 8 B each (256 B, one st)
	V_E_ST6_MID,     // thread 0 six 8-byte stores (a 48-byte record) once its loads are issued
	V_E_V2X3_MID,    // the record as three 16-byte stores there
	V_E_RED3_MID,    // three reds on its SM's line there (smload's entry)
	V_E_ST6_MID_T,   // six stores there, one of them the %globaltimer read at entry
	V_COUNT
};
static const char *const names[] = {
	"plain", "entry barrier + record", "block probes (barrier, shared atomic per warp exit)",
	"1 red/block, block index", "1 red/block, block index, 128-B lines",
	"1 red/block, SM line", "2 red/block, SM line", "4 red/block (2 SM, 2 block index)",
	"40-B store/block + 1 red/block SM", "1 red/warp, SM line",
	"4 red/warp (2 SM, 2 block index)", "%smid read to shared, thread 0",
	"1 red/block, line bid % 1056", "barrier exit (arrive/sync), no entry barrier",
	"barrier exit + 1 red/block SM line", "barrier exit + 1 red/block block index",
	"barrier exit + 40-B store/block", "barrier exit + 40-B store + 1 red SM line",
	"40-B store/block at entry", "1 red/block, SM line, lines 1 KiB apart",
	"1 red/block, SM line, lines 4 KiB apart", "barrier exit alone (no timer, no record)",
	"barrier exit, %globaltimer at entry and exit only",
	"barrier + 2 global red/warp access, SM line",
	"barrier + 2 shared red/warp access, generic address (cvta)",
	"barrier + 2 shared red/warp access, .shared space",
	"W: barrier exit alone", "W: + 8-B store at block index", "W: + 8-B store on SM line",
	"W: + 8-B store, one word for all", "W: + 8-B store .cs", "W: + 8-B store .L1::no_allocate",
	"W: + 8-B store L2 evict_first", "W: + six 8-B stores (48-B record)",
	"W: + three 16-B stores (48-B record)", "W: + 48-B record by 6 lanes, one st",
	"W: + 48-B record by cp.async.bulk (wait read)", "W: + cp.async.bulk, no wait",
	"W: + 1 red at block index", "W: no barrier, last warp (shared count) stores 8 B",
	"W: + 8-B store by warp 7 after the barrier", "E: 8-B store at entry",
	"E: 8-B store after the loads are issued", "E: 8-B store after the c store",
	"E: 8-B store at entry by warp 7", "E: 8-B store at entry, even blocks only",
	"E: 1 red on SM line at entry", "E: 1 red on SM line after the loads are issued",
	"E: 1 red at (SM, size), one word an SM", "E: %smid + %globaltimer at entry, no write",
	"W: 8-B store by thread 0 before it waits", "W: + %globaltimer to shared, no write",
	"W: + 32 dependent integer instructions", "W: + warp 0 stores 256 B (one st)",
	"E: six 8-B stores after the loads are issued", "E: three 16-B stores after the loads",
	"E: 3 reds on SM line after the loads", "E: six stores after the loads, timer from entry",
};

__device__ static unsigned smid()
{
	unsigned s;
	asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
	return s;
}

__device__ static void red(unsigned long long *p, unsigned long long v)
{
	asm volatile("red.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ static unsigned long long globaltimer()
{
	unsigned long long now;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
	return now;
}

/* The barrier exit: warps 1.. arrive at barrier 0 without waiting, warp 0
 * waits for all of them (the count is the block's warps x 32: a barrier
 * counts a warp's arrival as 32); true in thread 0 once every warp has
 * arrived. */
__device__ static bool barrier_exit()
{
	unsigned t = threadIdx.x, count = (blockDim.x + 31) / 32 * 32;
	if (t >= 32) {
		asm volatile("barrier.arrive 0, %0;" ::"r"(count) : "memory");
		return false;
	}
	asm volatile("barrier.sync 0, %0;" ::"r"(count) : "memory");
	return t == 0;
}

/* gpu_block_cost -check: the barrier exit with blocks of 200 threads (a
 * partial last warp) over n not a multiple of it, some threads returning
 * early: thread 0 of every block, after the barrier, sees every thread of
 * its block's flag. */
__global__ void barrier_exit_check(int n, unsigned *flag, unsigned *seen)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		flag[i] = 1;
	if (!barrier_exit())
		return;
	unsigned sum = 0;
	for (unsigned k = 0; k < blockDim.x; k++) {
		int j = blockIdx.x * blockDim.x + k;
		if (j < n)
			sum += *(volatile unsigned *)&flag[j];
	}
	seen[blockIdx.x] = sum;
}

/* A counting probe at one warp memory instruction: the lowest active lane
 * adds to two counters (V_ACC_*); cnt: the block's shared counters. */
template <int V>
__device__ static void access_probe(unsigned *cnt, unsigned long long *sm)
{
	if (V != V_ACC_GLOBAL && V != V_ACC_GENERIC && V != V_ACC_SHARED)
		return;
	unsigned mask = __activemask(), lt;
	asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
	if (lt & mask)
		return;
	if (V == V_ACC_GLOBAL) {
		red(sm, 1);
		red(sm + 1, __popc(mask));
	} else if (V == V_ACC_GENERIC) {
		asm volatile("red.add.u32 [%0], 1;" ::"l"(cnt) : "memory");
		asm volatile("red.add.u32 [%0], %1;" ::"l"(cnt + 1), "r"(__popc(mask)) : "memory");
	} else {
		unsigned s = (unsigned)__cvta_generic_to_shared(cnt);
		asm volatile("red.shared.add.u32 [%0], 1;" ::"r"(s) : "memory");
		asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(s + 4), "r"(__popc(mask)) : "memory");
	}
}

template <int V>
__global__ void vecadd(const float *a, const float *b, float *c, int n,
		       unsigned long long *slots, unsigned long long nslots)
{
	__shared__ unsigned long long rec[6];
	__shared__ unsigned cnt[2];
	volatile unsigned long long *vrec = rec; // the new variants' stores stay
	unsigned t = threadIdx.x, lane = t & 31, bid = blockIdx.x;
	unsigned long long *sm = slots + ((smid() * 8 + (bid & 7)) * 16) % nslots;
	if (V == V_BARRIER || V == V_BLOCK_PROBES || V >= V_ACC_GLOBAL) {
		if (t < 2)
			cnt[t] = 0;
		if (t == 0) {
			unsigned long long now;
			asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
			rec[0] = now, rec[1] = 0, rec[2] = bid, rec[3] = smid();
			rec[4] = blockDim.x, rec[5] = 0;
		}
		__syncthreads();
	}
	if (V == V_SMID && t == 0)
		vrec[3] = smid();
	if (V >= V_WAIT_EXIT && V <= V_WAIT_STORE_RED && t == 0)
		vrec[0] = globaltimer();
	if ((V == V_RED_WARP || V == V_RED_WARP_4) && lane == 0) {
		red(sm, 32);
		if (V == V_RED_WARP_4) {
			red(sm + 1, 1);
			red(slots + (2 * bid) % nslots, 32);
			red(slots + (2 * bid + 1) % nslots, 1);
		}
	}
	if (t == 0) {
		switch (V) {
		case V_RED_BLOCK: red(slots + bid % nslots, 256); break;
		case V_RED_BLOCK_PAD: red(slots + (bid * 16ull) % nslots, 256); break;
		case V_RED_SM: red(sm, 256); break;
		case V_RED_LINE_BID: red(slots + (bid % 1056) * 16, 256); break;
		case V_RED_SM_1K: red(slots + ((smid() * 8 + (bid & 7)) * 128ull) % nslots, 256); break;
		case V_RED_SM_4K: red(slots + ((smid() * 8 + (bid & 7)) * 512ull) % nslots, 256); break;
		case V_RED_SM_2: red(sm, 256), red(sm + 1, 8); break;
		case V_RED_4:
			red(sm, 256), red(sm + 1, 8);
			red(slots + (2 * bid) % nslots, 256), red(slots + (2 * bid + 1) % nslots, 8);
			break;
		case V_STORE_ONLY: {
			unsigned long long *r = slots + (bid * 5ull) % (nslots - 5);
			r[0] = bid, r[1] = bid + 1, r[2] = bid, r[3] = 256, r[4] = 8;
			break;
		}
		case V_STORE_BLOCK: {
			unsigned long long *r = slots + (bid * 5ull) % (nslots - 5);
			r[0] = bid, r[1] = bid + 1, r[2] = bid, r[3] = 256, r[4] = 8;
			red(sm + 2, 1);
			break;
		}
		}
	}
	int i = blockIdx.x * blockDim.x + t;
	if (i < n) {
		access_probe<V>(cnt, sm);
		float x = a[i];
		access_probe<V>(cnt, sm);
		float y = b[i];
		access_probe<V>(cnt, sm);
		c[i] = x + y;
	}
	if (V >= V_ACC_GENERIC && t == 0 && cnt[0] == 0xffffffffu)
		slots[0] = cnt[1]; // keeps the counters live
	if (V == V_BLOCK_PROBES) {
		unsigned mask = __activemask();
		if (lane == __ffs(mask) - 1) {
			unsigned long long old =
				atomicAdd(&rec[5], (unsigned long long)__popc(mask) | 1ull << 32);
			if ((unsigned)old + __popc(mask) == blockDim.x)
				rec[1] = old; // the block's last exit
		}
	}
	if (V == V_WAIT_TIME && t == 0)
		vrec[0] = globaltimer();
	if ((V == V_WAIT_BARE || V == V_WAIT_TIME) && barrier_exit() && V == V_WAIT_TIME)
		vrec[1] = globaltimer();
	if (V >= V_WAIT_EXIT && V <= V_WAIT_STORE_RED && barrier_exit()) {
		vrec[1] = globaltimer(), vrec[2] = bid, vrec[3] = smid(), vrec[4] = blockDim.x;
		if (V == V_WAIT_RED_SM)
			red(sm, 1);
		else if (V == V_WAIT_RED_BID)
			red(slots + bid % nslots, 1);
		else if (V == V_WAIT_STORE || V == V_WAIT_STORE_RED) {
			unsigned long long *r = slots + (bid * 5ull) % (nslots - 5);
			r[0] = vrec[0], r[1] = vrec[1], r[2] = bid, r[3] = vrec[3], r[4] = 8;
			if (V == V_WAIT_STORE_RED)
				red(sm, 1);
		}
	}
}

/* Session 6's question: why the first global write of a block costs vecadd
 * about 4% (bench/results/2026-11-22-h200-block-probes-s6.md).  The W rows
 * add one write (or one record) to the barrier exit, the E rows one to the
 * plain kernel at some point of thread 0's path; what changes between rows
 * is where the write lands (a new word each block, a hot line, one word),
 * its cache hints, its width, how many instructions carry it, and where on
 * the block's path it is issued. */
__device__ static void st64(unsigned long long *p, unsigned long long v)
{
	asm volatile("st.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

/* The W/E rows' write, once the block's thread 0 (or the warp that does it)
 * gets there. */
template <int V>
__device__ static void w_write(unsigned long long *slots, unsigned long long nslots,
			       unsigned long long *rec)
{
	unsigned bid = blockIdx.x, lane = threadIdx.x & 31;
	unsigned long long *at = slots + bid % nslots;
	unsigned long long *r48 = slots + (bid * 6ull) % (nslots - 6);
	/* its SM's line, as in vecadd<> (read %smid only where used) */
#define SM_LINE (slots + ((smid() * 8 + (bid & 7)) * 16) % nslots)
	switch (V) {
	case V_W_ST: case V_W_LAST: case V_W_WARP7: case V_E_ST: case V_E_ST_MID:
	case V_E_ST_END: case V_E_ST_W7: case V_E_ST_HALF:
		st64(at, bid);
		break;
	case V_W_ST_SM: st64(SM_LINE, bid); break;
	case V_W_ST_ONE: st64(slots, bid); break;
	case V_W_ST_CS:
		asm volatile("st.global.cs.u64 [%0], %1;" ::"l"(at), "l"((unsigned long long)bid)
			     : "memory");
		break;
	case V_W_ST_NA:
		asm volatile("st.global.L1::no_allocate.u64 [%0], %1;" ::"l"(at),
			     "l"((unsigned long long)bid) : "memory");
		break;
	case V_W_ST_EF:
		asm volatile("{ .reg .b64 pol; createpolicy.fractional.L2::evict_first.b64 pol, 1.0;\n"
			     "st.global.L2::cache_hint.u64 [%0], %1, pol; }" ::"l"(at),
			     "l"((unsigned long long)bid) : "memory");
		break;
	case V_W_ST6: case V_E_ST6_MID:
		for (int k = 0; k < 6; k++)
			st64(r48 + k, bid + k);
		break;
	case V_E_ST6_MID_T:
		st64(r48, rec[0]);
		for (int k = 1; k < 6; k++)
			st64(r48 + k, bid + k);
		break;
	case V_E_RED3_MID: {
		unsigned long long *l = SM_LINE;
		red(l, 1), red(l + 1, 8), red(l + 2, 256);
		break;
	}
	case V_W_V2X3: case V_E_V2X3_MID:
		for (int k = 0; k < 6; k += 2)
			asm volatile("st.global.v2.u64 [%0], {%1, %2};" ::"l"(r48 + k),
				     "l"((unsigned long long)bid + k), "l"((unsigned long long)bid)
				     : "memory");
		break;
	case V_W_LANES: /* in warp 0, lanes 0..5 */
		if (lane < 6)
			st64(r48 + lane, bid + lane);
		break;
	case V_W_BULK: case V_W_BULK_NOWAIT: {
		for (int k = 0; k < 6; k++)
			rec[k] = bid + k;
		unsigned s = (unsigned)__cvta_generic_to_shared(rec);
		asm volatile("fence.proxy.async.shared::cta;\n"
			     "cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], 48;\n"
			     "cp.async.bulk.commit_group;" ::"l"(r48), "r"(s) : "memory");
		if (V == V_W_BULK)
			asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
		break;
	}
	case V_W_RED: red(at, 1); break;
	case V_E_RED_SM: case V_E_RED_SM_MID: red(SM_LINE, 256); break;
	case V_E_RED_ONE: red(slots + (smid() * 1024ull + blockDim.x - 1) % nslots, 1); break;
	case V_E_SREG: rec[3] = smid() + globaltimer(); break;
	case V_W_ST_PRE: st64(at, bid); break;
	case V_W_TIME: rec[1] = globaltimer(); break;
	case V_W_CODE: {
		unsigned x = bid;
		for (int k = 0; k < 32; k++) /* a chain ptxas cannot fold */
			asm volatile("mad.lo.u32 %0, %0, %0, 7;" : "+r"(x));
		rec[2] = x;
		break;
	}
	case V_W_LANES32: st64(slots + (bid * 32ull + lane) % nslots, bid); break;
	}
#undef SM_LINE
}

template <int V>
__global__ void vecadd_w(const float *a, const float *b, float *c, int n,
			 unsigned long long *slots, unsigned long long nslots)
{
	__shared__ __align__(16) unsigned long long rec[6];
	__shared__ unsigned count;
	volatile unsigned long long *vrec = rec;
	unsigned t = threadIdx.x, bid = blockIdx.x;
	bool entry_writer = V == V_E_ST_W7 ? t == 224 : t == 0;
	if (V == V_W_LAST && t == 0)
		*(volatile unsigned *)&count = 0;
	if (V == V_E_ST6_MID_T && t == 0)
		rec[0] = globaltimer();
	if ((V == V_E_ST || V == V_E_ST_W7 || V == V_E_RED_SM || V == V_E_RED_ONE ||
	     V == V_E_SREG || (V == V_E_ST_HALF && !(bid & 1))) && entry_writer)
		w_write<V>(slots, nslots, (unsigned long long *)vrec);
	int i = blockIdx.x * blockDim.x + t;
	if (i < n) {
		float x = a[i], y = b[i];
		if ((V == V_E_ST_MID || V == V_E_RED_SM_MID || V == V_E_ST6_MID || V == V_E_V2X3_MID ||
		     V == V_E_RED3_MID || V == V_E_ST6_MID_T) && t == 0)
			w_write<V>(slots, nslots, rec);
		c[i] = x + y;
	}
	if (V == V_E_ST_END && t == 0)
		w_write<V>(slots, nslots, rec);
	if (V == V_W_LAST) {
		unsigned mask = __activemask(), lt;
		asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
		if (!(lt & mask) && atomicAdd(&count, 1) == blockDim.x / 32 - 1)
			w_write<V>(slots, nslots, rec);
		return;
	}
	if (V == V_W_WARP7) { /* warp 7 waits, the others arrive */
		unsigned count32 = blockDim.x;
		if (t < 224) {
			asm volatile("barrier.arrive 0, %0;" ::"r"(count32) : "memory");
			return;
		}
		asm volatile("barrier.sync 0, %0;" ::"r"(count32) : "memory");
		if (t == 224)
			w_write<V>(slots, nslots, rec);
		return;
	}
	if (V == V_W_ST_PRE) { /* barrier_exit() with the store before the wait */
		unsigned count32 = (blockDim.x + 31) / 32 * 32;
		if (t >= 32) {
			asm volatile("barrier.arrive 0, %0;" ::"r"(count32) : "memory");
			return;
		}
		if (t == 0)
			w_write<V>(slots, nslots, rec);
		asm volatile("barrier.sync 0, %0;" ::"r"(count32) : "memory");
		return;
	}
	if ((V >= V_W_BARE && V < V_W_LAST) || (V > V_W_ST_PRE && V <= V_W_LANES32)) {
		bool last = barrier_exit();
		bool warp0 = V == V_W_LANES || V == V_W_LANES32;
		if (warp0 ? threadIdx.x < 32 && __shfl_sync(~0u, (int)last, 0) : last)
			w_write<V>(slots, nslots, (unsigned long long *)vrec);
	}
}

typedef void (*kernel_fn)(const float *, const float *, float *, int, unsigned long long *,
			  unsigned long long);
static const kernel_fn kernels[V_COUNT] = {
	vecadd<0>, vecadd<1>, vecadd<2>, vecadd<3>, vecadd<4>, vecadd<5>,
	vecadd<6>, vecadd<7>, vecadd<8>, vecadd<9>, vecadd<10>, vecadd<11>,
	vecadd<12>, vecadd<13>, vecadd<14>, vecadd<15>, vecadd<16>, vecadd<17>,
	vecadd<18>, vecadd<19>, vecadd<20>, vecadd<21>, vecadd<22>,
	vecadd<23>, vecadd<24>, vecadd<25>,
	vecadd_w<V_W_BARE>, vecadd_w<V_W_ST>, vecadd_w<V_W_ST_SM>, vecadd_w<V_W_ST_ONE>,
	vecadd_w<V_W_ST_CS>, vecadd_w<V_W_ST_NA>, vecadd_w<V_W_ST_EF>, vecadd_w<V_W_ST6>,
	vecadd_w<V_W_V2X3>, vecadd_w<V_W_LANES>, vecadd_w<V_W_BULK>, vecadd_w<V_W_BULK_NOWAIT>,
	vecadd_w<V_W_RED>, vecadd_w<V_W_LAST>, vecadd_w<V_W_WARP7>, vecadd_w<V_E_ST>,
	vecadd_w<V_E_ST_MID>, vecadd_w<V_E_ST_END>, vecadd_w<V_E_ST_W7>, vecadd_w<V_E_ST_HALF>,
	vecadd_w<V_E_RED_SM>, vecadd_w<V_E_RED_SM_MID>, vecadd_w<V_E_RED_ONE>, vecadd_w<V_E_SREG>,
	vecadd_w<V_W_ST_PRE>, vecadd_w<V_W_TIME>, vecadd_w<V_W_CODE>, vecadd_w<V_W_LANES32>,
	vecadd_w<V_E_ST6_MID>, vecadd_w<V_E_V2X3_MID>, vecadd_w<V_E_RED3_MID>,
	vecadd_w<V_E_ST6_MID_T>,
};
static_assert(sizeof(kernels) / sizeof(kernels[0]) == V_COUNT, "a kernel per variant");
static_assert(sizeof(names) / sizeof(names[0]) == V_COUNT, "a name per variant");

/* -check: barrier_exit_check's blocks each saw all their threads. */
static int check_barrier_exit(void)
{
	const int n = 100003, threads = 200, blocks = (n + threads - 1) / threads;
	unsigned *flag, *seen;
	CHECK(cudaMalloc(&flag, n * sizeof(unsigned)));
	CHECK(cudaMalloc(&seen, blocks * sizeof(unsigned)));
	CHECK(cudaMemset(flag, 0, n * sizeof(unsigned)));
	CHECK(cudaMemset(seen, 0, blocks * sizeof(unsigned)));
	barrier_exit_check<<<blocks, threads>>>(n, flag, seen);
	CHECK(cudaDeviceSynchronize());
	std::vector<unsigned> h(blocks);
	CHECK(cudaMemcpy(h.data(), seen, blocks * sizeof(unsigned), cudaMemcpyDeviceToHost));
	int bad = 0;
	for (int b = 0; b < blocks; b++) {
		unsigned want = b + 1 < blocks ? threads : n - b * threads;
		bad += h[b] != want;
	}
	printf("barrier exit check: %d blocks of %d threads (n=%d): %d blocks saw fewer than all "
	       "their threads\n", blocks, threads, n, bad);
	return bad ? 1 : 0;
}

/* Is variant v in the comma-separated list of numbers `only` (all if NULL)? */
static bool chosen(const char *only, int v)
{
	if (!only)
		return true;
	for (const char *p = only; *p;) {
		char *end;
		long k = strtol(p, &end, 10);
		if (end == p)
			return false;
		if (k == v)
			return true;
		p = *end == ',' ? end + 1 : end;
	}
	return false;
}

/* The median of v (sorted in place). */
static double median(std::vector<double> &v)
{
	std::sort(v.begin(), v.end());
	size_t k = v.size();
	return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

int main(int argc, char **argv)
{
	int n = 16 << 20, iters = 31, rounds = 5;
	const char *only = NULL;
	if (argc == 2 && !strcmp(argv[1], "-check"))
		return check_barrier_exit();
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-n"))
			n = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-iters"))
			iters = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-rounds"))
			rounds = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-only"))
			only = argv[i + 1];
	}
	if (n <= 0 || iters < 2 || rounds < 1) {
		fprintf(stderr, "usage: gpu_block_cost [-n ELEMENTS] [-iters N>=2] [-rounds R>=1] "
				"[-only V,V,...]\n");
		return 2;
	}
	const unsigned long long nslots = 1ull << 24; // 128 MiB of counters
	float *a, *b, *c;
	unsigned long long *slots;
	CHECK(cudaMalloc(&a, n * sizeof(float)));
	CHECK(cudaMalloc(&b, n * sizeof(float)));
	CHECK(cudaMalloc(&c, n * sizeof(float)));
	CHECK(cudaMalloc(&slots, nslots * sizeof(*slots)));
	CHECK(cudaMemset(a, 0, n * sizeof(float)));
	CHECK(cudaMemset(b, 0, n * sizeof(float)));
	CHECK(cudaMemset(slots, 0, nslots * sizeof(*slots)));
	cudaEvent_t e0, e1;
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));
	int blocks = (n + 255) / 256;
	cudaDeviceProp prop;
	CHECK(cudaGetDeviceProperties(&prop, 0));
	printf("gpu_block_cost: %s, vecadd n=%d (%d blocks of 256), %d launches a variant, "
	       "median of the last %d; %d rounds over the variants (plus one warm-up), the "
	       "ratio to the same round's plain kernel: median and range over the rounds\n",
	       prop.name, n, blocks, iters, iters - 1, rounds);
	printf("| # | variant | median ms | ratio | min ratio | max ratio |\n"
	       "| ---: | --- | ---: | ---: | ---: | ---: |\n");
	std::vector<std::vector<double>> ms(V_COUNT), ratio(V_COUNT);
	// rounds over the variants, interleaved (the first a warm-up, not counted)
	for (int round = 0; round <= rounds; round++) {
		double plain = 0;
		for (int v = 0; v < V_COUNT; v++) {
			if (v != V_PLAIN && !chosen(only, v))
				continue;
			std::vector<double> t;
			for (int it = 0; it < iters; it++) {
				CHECK(cudaEventRecord(e0));
				kernels[v]<<<blocks, 256>>>(a, b, c, n, slots, nslots);
				CHECK(cudaEventRecord(e1));
				CHECK(cudaEventSynchronize(e1));
				float f;
				CHECK(cudaEventElapsedTime(&f, e0, e1));
				if (it)
					t.push_back(f);
			}
			CHECK(cudaGetLastError());
			double med = median(t);
			if (v == V_PLAIN)
				plain = med;
			if (round) {
				ms[v].push_back(med);
				ratio[v].push_back(med / plain);
			}
		}
	}
	for (int v = 0; v < V_COUNT; v++) {
		if (ms[v].empty())
			continue;
		double m = median(ms[v]), r = median(ratio[v]);
		printf("| %d | %s | %.6f | %.3f | %.3f | %.3f |\n", v, names[v], m, r, ratio[v].front(),
		       ratio[v].back());
	}
	return 0;
}
