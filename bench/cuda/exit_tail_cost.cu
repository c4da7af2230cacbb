// SPDX-License-Identifier: MIT
/*
 * exit_tail_cost - what each piece of the code gpuext emits on a warp's way
 * out costs, written by hand in CUDA (no gpuext), on vecadd's 1-us blocks.
 *
 *   nvcc -O2 -arch=sm_90 bench/cuda/exit_tail_cost.cu -o build/bench/exit_tail_cost
 *   exit_tail_cost [ROUNDS]
 *
 * The base (row 1) is block_end_cost's row 16, the cheapest correct record
 * of a block's start and end measured by hand: thread (0,0,0) stores the
 * start time, the launch and index|SM once its loads are issued; every
 * thread computes the 3D linear block index past its loads; each warp's
 * lane 0 issues a red.max of its exit time at the block's slot after its
 * store of c.  Rows 2-8 add, one at a time, what the emitted tail has and
 * the hand one has not (bench/results/2026-11-22-h200-block-probes-s7.md,
 * round 4's SASS): the lane that runs the program chosen by elect.sync
 * over the active mask (VOTE.ANY, R2UR, BRA.DIV, ELECT) or as the lowest
 * active lane (no .sync); the map's base from a __constant__ variable
 * (the module's map table, c[0x3]) rather than a kernel parameter; the
 * program's NULL test of the looked-up slot; the slot's address prepared
 * past the loads; all 32 lanes issuing the red.  Rows 9-10: the barrier
 * form (thread 0 stores the end after the exit barrier) with the same
 * entry stores.  Rows 11-13: what the end time's read costs (the red of a
 * constant, of %clock64) and the entry stores alone; rows 14-18: other
 * ways of writing it (CTA scope, 32 bits, a plain store per warp with and
 * without an evict-first hint, an add).  ROUNDS (default 15) rounds of 31 launches a variant,
 * median of the last 30, ratio to the same round's plain kernel, median
 * and range over the rounds (cost_rounds.cuh).  Checks that every record
 * has end >= start and its own index.
 */
#include "cost_rounds.cuh"
struct rec { unsigned long long start, end, launch, index; };
__constant__ rec *cmap; /* the map table's entry, as the emitted module has it */
__device__ static unsigned long long gt() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ static unsigned smid() { unsigned s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); return s; }
__device__ static void redmax(unsigned long long *p, unsigned long long v) { asm volatile("red.global.max.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }
__device__ static void redmax_cta(unsigned long long *p, unsigned long long v) { asm volatile("red.relaxed.cta.global.max.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }
__device__ static void redmax32(unsigned long long *p, unsigned long long v) { asm volatile("red.global.max.u32 [%0], %1;" ::"l"(p), "r"((unsigned)v) : "memory"); }
__device__ static void redadd(unsigned long long *p, unsigned long long v) { asm volatile("red.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }
__device__ static void st64cs(unsigned long long *p, unsigned long long v) { asm volatile("st.global.cs.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }
__device__ static void st64(unsigned long long *p, unsigned long long v) { asm volatile("st.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }
__device__ static unsigned sreg(int which)
{
	unsigned v;
	if (which == 1) asm volatile("mov.u32 %0, %%ctaid.y;" : "=r"(v) :: "memory");
	else asm volatile("mov.u32 %0, %%ctaid.z;" : "=r"(v) :: "memory");
	return v;
}
__device__ static bool elect_sync(unsigned mask)
{
	unsigned e;
	asm volatile("{ .reg .pred p; elect.sync _|p, %1; selp.u32 %0, 1, 0, p; }" : "=r"(e) : "r"(mask));
	return e;
}
__device__ static bool lowest_active()
{
	unsigned m = __activemask(), lane;
	asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
	return lane == (unsigned)__ffs(m) - 1;
}
enum { PLAIN, BASE, ELECT, LOWEST, CONSTBASE, NULLTEST, PREPARED, EMITTED, ALL_LANES, BARRIER_END, BARRIER_END_CONST,
       VALUE_CONST, VALUE_CLOCK, NO_EXIT, RED_CTA, RED_U32, ST_OWN, ST_OWN_CS, RED_ADD, NV };
static const char *names[] = { "plain", "base: block_end_cost row 16 (lane 0 red.max, param base)",
  "base, lane by elect.sync over the active mask", "base, lane = lowest active lane (no .sync)",
  "base, map base from a __constant__ variable", "base, NULL test of the slot",
  "base, slot address prepared past the loads", "base, elect.sync + __constant__ base + NULL test (as emitted)",
  "base, all 32 lanes red.max (no election)", "entry stores + exit barrier + thread 0 stores end",
  "that, map base from a __constant__ variable + NULL test",
  "base, the red's value a constant (no timer read)", "base, the red's value %clock64", "base without the exit red (entry stores only)",
  "base, red.relaxed.cta (CTA scope)", "base, red.max.u32 of %globaltimer_lo", "base, each warp st.global its own end (slot per warp)",
  "that, st.global.cs (evict first)", "base, red.add instead of red.max" };
__device__ unsigned long long ends[65536 * 8]; /* ST_OWN*: a word per warp */
template <int V> __global__ void k(const float *a, const float *b, float *c, int n, rec *r)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float x = 0, y = 0;
	if (i < n) { x = a[i]; y = b[i]; }
	if (V == PLAIN) {
		if (i < n) c[i] = x + y;
		return;
	}
	unsigned lb = blockIdx.x + gridDim.x * (sreg(1) + gridDim.y * sreg(2));
	rec *base = (V == CONSTBASE || V == EMITTED || V == BARRIER_END_CONST) ? cmap : r;
	rec *q = &base[lb & 0xffff];
	if (V == PREPARED)
		asm volatile("" : "+l"(q)); /* the address made here, not on the tail */
	if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0)
		if ((V != NULLTEST && V != EMITTED && V != BARRIER_END_CONST) || q) {
			st64(&q->start, gt()); st64(&q->launch, 1); st64(&q->index, lb | (unsigned long long)smid() << 32);
		}
	if (i < n) c[i] = x + y;
	if (V == BARRIER_END || V == BARRIER_END_CONST) {
		unsigned cnt = (blockDim.x + 31) / 32 * 32;
		if (threadIdx.x >= 32) { asm volatile("barrier.arrive 0, %0;" ::"r"(cnt) : "memory"); return; }
		asm volatile("barrier.sync 0, %0;" ::"r"(cnt) : "memory");
		if (threadIdx.x == 0 && (V == BARRIER_END || q)) st64(&q->end, gt());
		return;
	}
	bool run;
	if (V == ELECT || V == EMITTED) run = elect_sync(__activemask());
	else if (V == LOWEST) run = lowest_active();
	else if (V == ALL_LANES) run = true;
	else run = (threadIdx.x & 31) == 0;
	if (V == NO_EXIT)
		return;
	unsigned long long end = V == VALUE_CONST ? ~0ull : V == VALUE_CLOCK ? clock64() : gt();
	if (!run || ((V == NULLTEST || V == EMITTED) && !q))
		return;
	unsigned long long *own = ends + ((size_t)(lb & 0xffff) * 8 + (threadIdx.x >> 5));
	if (V == RED_CTA) redmax_cta(&q->end, end);
	else if (V == RED_U32) redmax32(&q->end, end);
	else if (V == ST_OWN) st64(own, end);
	else if (V == ST_OWN_CS) st64cs(own, end);
	else if (V == RED_ADD) redadd(&q->end, end);
	else redmax(&q->end, end);
}
typedef void (*kf)(const float *, const float *, float *, int, rec *);
int main(int argc, char **argv)
{
	int n = 1 << 24, iters = 31, rounds = argc > 1 ? atoi(argv[1]) : 15;
	float *a, *b, *c; rec *r;
	cost_vecadd_buffers(n, &a, &b, &c);
	int blocks = (n + 255) / 256;
	CK(cudaMalloc(&r, sizeof(rec) * blocks)); CK(cudaMemset(r, 0, sizeof(rec) * blocks));
	CK(cudaMemcpyToSymbol(cmap, &r, sizeof r));
	kf f[NV] = { k<0>, k<1>, k<2>, k<3>, k<4>, k<5>, k<6>, k<7>, k<8>, k<9>, k<10>, k<11>, k<12>, k<13>,
		     k<14>, k<15>, k<16>, k<17>, k<18> };
	for (int v = 1; v < NV; v++) {
		if (v == VALUE_CLOCK || v == NO_EXIT || v == RED_U32 || v == ST_OWN || v == ST_OWN_CS || v == RED_ADD)
			continue; /* ends not comparable with starts, elsewhere, or none */
		CK(cudaMemset(r, 0, sizeof(rec) * blocks));
		f[v]<<<blocks, 256>>>(a, b, c, n, r); CK(cudaDeviceSynchronize());
		std::vector<rec> hr(blocks); CK(cudaMemcpy(hr.data(), r, sizeof(rec) * blocks, cudaMemcpyDeviceToHost));
		long bad = 0;
		for (int i = 0; i < blocks; i++)
			if (hr[i].end < hr[i].start || !hr[i].start || (hr[i].index & 0xffffffff) != (unsigned long long)i) bad++;
		printf("check %d: %ld of %d blocks with end < start, no start or a wrong index\n", v, bad, blocks);
	}
	cost_rounds(NV, names, rounds, iters, [&](int v) { f[v]<<<blocks, 256>>>(a, b, c, n, r); });
}
