// SPDX-License-Identifier: MIT
/*
 * block_end_cost - where a block's end time can be written at least cost,
 * written by hand in CUDA (no gpuext): the question behind kernelretsnoop's
 * record (tools/kernelretsnoop.bpf.c), beside gpu_block_cost's rows.
 *
 *   nvcc -O2 -arch=sm_90 bench/cuda/block_end_cost.cu -o build/bench/block_end_cost
 *   block_end_cost [ROUNDS]
 *
 * vecadd (c = a + b over 16M floats, 256 threads a block: 65,536 blocks of
 * about a microsecond) with, per variant, a way of recording when the block
 * ended: thread 0 after an exit barrier, or each warp's lane 0 with a
 * fire-and-forget red.max at the block's slot and no barrier (the block's
 * end is the max of its warps'), with or without the rest of a record
 * stored at entry once the loads are issued.  ROUNDS (default 15) rounds
 * over the variants, 31 launches each, median of the last 30; the ratio to
 * the same round's plain kernel, median and range over the rounds.  Checks
 * that the red.max variants' records have end >= start.  Rows 8-11: the
 * shapes kernelretsnoop emits since session 7 (three stores past thread 0's
 * loads, each warp's red.max at a slot from the 32-bit linear block index);
 * rows 12-15: where that index's special-register reads go (only for
 * grids that have a y or z, or at the kernel's entry), and the red.max
 * before the warp's store of c.
 */
#include "cost_rounds.cuh"
__device__ static unsigned long long gt() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ static unsigned smid() { unsigned s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); return s; }
__device__ static void redmax(unsigned long long *p, unsigned long long v) { asm volatile("red.global.max.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }
__device__ static void st64(unsigned long long *p, unsigned long long v) { asm volatile("st.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }
struct rec { unsigned long long start, end, a, b, c, d; };
enum { PLAIN, BAR_STORE, WARP_REDMAX, WARP_REDMAX_REC, WARP_STORE_OWN, WARP0_REDMAX_ONLY, BAR_ONLY, WARP_REDMAX_SMID,
       REC3_SUNK, REDMAX3D_REC3_SUNK, REDMAX3D_REC3_ENTRY, WARP_REDMAX3D, WARP_REDMAX1D, REDMAX1D_REC3_SUNK,
       REDMAX1D_EARLY_REC3_SUNK, REDMAX3D_HOISTED_REC3_SUNK, REDMAX3D_SUNKIDX_REC3_SUNK, REDMAX3D_SUNKIDX_EARLY_REC3_SUNK, NV };
static const char *names[] = { "plain", "barrier exit + thread 0 stores end (8 B)", "each warp: lane 0 red.max end at block slot, no barrier",
  "that + entry record (5 x 8 B) by thread 0 after its loads", "each warp: lane 0 stores its own end (slot per warp)",
  "warp 0 only: red.max end after its store", "barrier exit alone", "each warp red.max, + smid in value (shift)",
  "thread 0 after its loads: 3 x 8 B (start read there, launch, index|smid), no end",
  "that + each warp red.max at the 3D slot (kernelretsnoop s7's shape)",
  "the same, the start read at entry", "each warp red.max at the 3D slot (32-bit index, mask), alone",
  "each warp red.max, the slot's index %ctaid.x when gridDim.y = z = 1, else 3D, alone",
  "that + the 3 sunk stores of row 8",
  "that with each warp's red.max issued before its store of c",
  "row 9 with the 3D index read at the kernel's entry (all threads)",
  "row 9 with the 3D index read once each thread's loads are issued (all threads)",
  "row 16 with each warp's red.max before its store of c (kernelretsnoop s7's final shape)" };
/* Special registers read where they are written (asm volatile, a memory
 * clobber: not moved across the loads). */
__device__ static unsigned sreg_ctaid_y() { unsigned v; asm volatile("mov.u32 %0, %%ctaid.y;" : "=r"(v) :: "memory"); return v; }
__device__ static unsigned sreg_ctaid_z() { unsigned v; asm volatile("mov.u32 %0, %%ctaid.z;" : "=r"(v) :: "memory"); return v; }
/* kernelretsnoop's exit program with the 1D path: the y/z reads only where the grid has them. */
__device__ static unsigned linear_block_1d()
{
	if (gridDim.y == 1 && gridDim.z == 1)
		return blockIdx.x;
	return blockIdx.x + gridDim.x * (sreg_ctaid_y() + gridDim.y * sreg_ctaid_z());
}
/* The linear block index as kernelretsnoop's exit program computes it: 32-bit, for any grid. */
__device__ static unsigned linear_block() { return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z); }
template <int V> __global__ void k(const float *a, const float *b, float *c, int n, rec *r)
{
	unsigned long long t0 = 0;
	unsigned hoisted = 0;
	if (V == REDMAX3D_HOISTED_REC3_SUNK)
		hoisted = blockIdx.x + gridDim.x * (sreg_ctaid_y() + gridDim.y * sreg_ctaid_z());
	if (V == WARP_REDMAX_REC || V == BAR_STORE || V == REDMAX3D_REC3_ENTRY) if (threadIdx.x == 0) t0 = gt();
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float x = 0, y = 0;
	if (i < n) { x = a[i]; y = b[i]; }
	if (V == REDMAX3D_SUNKIDX_REC3_SUNK || V == REDMAX3D_SUNKIDX_EARLY_REC3_SUNK)
		hoisted = blockIdx.x + gridDim.x * (sreg_ctaid_y() + gridDim.y * sreg_ctaid_z());
	if (V == WARP_REDMAX_REC && threadIdx.x == 0) {
		rec *q = &r[blockIdx.x];
		st64(&q->start, t0); st64(&q->a, blockIdx.x); st64(&q->b, smid()); st64(&q->c, blockDim.x); st64(&q->d, 1);
	}
	if ((V == REC3_SUNK || V == REDMAX3D_REC3_SUNK || V == REDMAX3D_REC3_ENTRY || V == REDMAX1D_REC3_SUNK ||
	     V == REDMAX1D_EARLY_REC3_SUNK || V == REDMAX3D_HOISTED_REC3_SUNK || V == REDMAX3D_SUNKIDX_REC3_SUNK ||
	     V == REDMAX3D_SUNKIDX_EARLY_REC3_SUNK) &&
	    threadIdx.x == 0 && threadIdx.y == 0 &&
	    threadIdx.z == 0) {
		unsigned lb = linear_block();
		rec *q = &r[lb & 0xffff];
		st64(&q->start, V == REDMAX3D_REC3_ENTRY ? t0 : gt()); st64(&q->a, 1); st64(&q->b, lb | (unsigned long long)smid() << 32);
	}
	unsigned lane = threadIdx.x & 31;
	if (V == REDMAX1D_EARLY_REC3_SUNK && lane == 0)
		redmax(&r[linear_block_1d() & 0xffff].end, gt());
	if (V == REDMAX3D_SUNKIDX_EARLY_REC3_SUNK && lane == 0)
		redmax(&r[hoisted & 0xffff].end, gt());
	if (i < n) c[i] = x + y;
	if ((V == WARP_REDMAX1D || V == REDMAX1D_REC3_SUNK) && lane == 0)
		redmax(&r[linear_block_1d() & 0xffff].end, gt());
	if ((V == REDMAX3D_HOISTED_REC3_SUNK || V == REDMAX3D_SUNKIDX_REC3_SUNK ||
	     V == REDMAX3D_SUNKIDX_EARLY_REC3_SUNK) && lane == 0)
		redmax(&r[hoisted & 0xffff].end, gt());
	if (V == BAR_STORE || V == BAR_ONLY) {
		unsigned cnt = (blockDim.x + 31) / 32 * 32;
		if (threadIdx.x >= 32) { asm volatile("barrier.arrive 0, %0;" ::"r"(cnt) : "memory"); return; }
		asm volatile("barrier.sync 0, %0;" ::"r"(cnt) : "memory");
		if (V == BAR_STORE && threadIdx.x == 0) st64(&r[blockIdx.x].end, gt());
	}
	if ((V == WARP_REDMAX || V == WARP_REDMAX_REC) && lane == 0) redmax(&r[blockIdx.x].end, gt());
	if (V == WARP_REDMAX_SMID && lane == 0) redmax(&r[blockIdx.x].end, gt() << 8 | smid());
	if (V == WARP0_REDMAX_ONLY && threadIdx.x == 0) redmax(&r[blockIdx.x].end, gt());
	if ((V == REDMAX3D_REC3_SUNK || V == REDMAX3D_REC3_ENTRY || V == WARP_REDMAX3D) && lane == 0)
		redmax(&r[linear_block() & 0xffff].end, gt());
	if (V == WARP_STORE_OWN && lane == 0) st64((unsigned long long *)&r[blockIdx.x] + (threadIdx.x >> 5), gt());
}
/* %globaltimer read back to back by one thread: its step (the end time's resolution). */
__global__ void timer_steps(unsigned long long *t, int n)
{
	for (int i = 0; i < n; i++)
		t[i] = gt();
}
typedef void (*kf)(const float *, const float *, float *, int, rec *);
int main(int argc, char **argv)
{
	int n = 1 << 24, iters = 31, rounds = argc > 1 ? atoi(argv[1]) : 15;
	float *a, *b, *c; rec *r;
	cost_vecadd_buffers(n, &a, &b, &c);
	int blocks = (n + 255) / 256;
	CK(cudaMalloc(&r, sizeof(rec) * blocks * 2)); CK(cudaMemset(r, 0, sizeof(rec) * blocks * 2));
	kf f[NV] = { k<0>, k<1>, k<2>, k<3>, k<4>, k<5>, k<6>, k<7>, k<8>, k<9>, k<10>, k<11>, k<12>, k<13>, k<14>, k<15>, k<16>, k<17> };
	// check: the red.max variants' records have end >= start and the right index
	for (int v : { (int)WARP_REDMAX_REC, (int)REDMAX3D_REC3_SUNK, (int)REDMAX1D_REC3_SUNK, (int)REDMAX1D_EARLY_REC3_SUNK,
		       (int)REDMAX3D_HOISTED_REC3_SUNK, (int)REDMAX3D_SUNKIDX_REC3_SUNK,
		       (int)REDMAX3D_SUNKIDX_EARLY_REC3_SUNK }) {
		f[v]<<<blocks, 256>>>(a, b, c, n, r); CK(cudaDeviceSynchronize());
		std::vector<rec> hr(blocks); CK(cudaMemcpy(hr.data(), r, sizeof(rec) * blocks, cudaMemcpyDeviceToHost));
		long bad = 0;
		for (int i = 0; i < blocks; i++)
			if (hr[i].end < hr[i].start || (v == WARP_REDMAX_REC ? hr[i].a : hr[i].b & 0xffffffff) != (unsigned long long)i) bad++;
		printf("check %d: %ld of %d blocks with end < start or wrong index\n", v, bad, blocks);
	}
	{
		const int nt = 4096;
		unsigned long long *dt; std::vector<unsigned long long> ht(nt);
		CK(cudaMalloc(&dt, nt * 8)); timer_steps<<<1, 1>>>(dt, nt); CK(cudaDeviceSynchronize());
		CK(cudaMemcpy(ht.data(), dt, nt * 8, cudaMemcpyDeviceToHost)); CK(cudaFree(dt));
		unsigned long long step = 0; int changes = 0;
		for (int i = 1; i < nt; i++)
			if (ht[i] != ht[i - 1]) { changes++; if (!step || ht[i] - ht[i - 1] < step) step = ht[i] - ht[i - 1]; }
		printf("globaltimer: %d changes in %d back-to-back reads over %llu ns, smallest step %llu ns\n", changes, nt,
		       ht[nt - 1] - ht[0], step);
	}
	cost_rounds(NV, names, rounds, iters, [&](int v) { f[v]<<<blocks, 256>>>(a, b, c, n, r); });
}
