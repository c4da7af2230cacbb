// SPDX-License-Identifier: MIT
/*
 * reduce_count_cost - what memtrace-like counting costs inside reduce's
 * grid-stride loop when written by hand in CUDA (no gpuext): the floor the
 * translator's pasted mem probe is held against (tools/memtrace.bpf.c).
 *
 *   nvcc -O2 -arch=sm_90 bench/cuda/reduce_count_cost.cu -o build/bench/reduce_count_cost
 *   reduce_count_cost [ROUNDS]
 *
 * examples/cuda/reduce.cu's kernel (256 blocks of 256 threads, 16M ints)
 * with, per variant, what a counting probe adds at each load: the warp's
 * elected lane adds its active lanes to a per-SM slot of the load's 2 MiB
 * region (one red), that and the region's bits (two reds on one line), the
 * two gathered in registers and issued only when the region changes, or
 * the same instructions with no reduction.  ROUNDS (default 15) rounds, 31
 * launches a variant, median of the last 30, ratio to the same round's
 * plain kernel (median and range).  Checks that the gathered form counts
 * every thread access as the direct one does.
 */
#include "cost_rounds.cuh"
__device__ static unsigned smid() { unsigned s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); return s; }
__device__ static void redadd(unsigned long long *p, unsigned long long v) { asm volatile("red.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }
__device__ static void redor(unsigned long long *p, unsigned long long v) { asm volatile("red.global.or.b64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }
enum { PLAIN, ONE_RED, TWO_RED, TWO_RED_GATHER, INSTR_ONLY, TWO_RED_LANE0, NV };
static const char *names[] = { "plain reduce", "1 red per warp access (elected lane, per-SM slot by region)",
  "2 reds per warp access (count + bits, same line)", "2 reds gathered in registers (flush on region change + exit)",
  "the counting's instructions, no red", "2 reds, lane 0 only when full warp (no election)" };
// per SM: 1024 slots x 4 words
template <int V> __global__ void k(const int *in, long n, unsigned long long *sum, unsigned long long *map)
{
	__shared__ long long ws[8];
	long long acc = 0;
	unsigned sm = smid(); if (sm > 131) sm = 131;
	unsigned long long *base = map + (unsigned long long)sm * 1024 * 4;
	unsigned long long gslot = ~0ull, gcnt = 0, gbits = 0; unsigned long long sink = 0;
	for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
		const int *p = &in[i];
		acc += *p;
		if (V != PLAIN) {
			unsigned m = __activemask();
			unsigned lanes = __popc(m);
			bool leader = (threadIdx.x & 31) == (unsigned)(__ffs(m) - 1);
			unsigned long long r = (unsigned long long)p >> 21;
			unsigned slot = r & 1023;
			unsigned long long *w = base + slot * 4;
			unsigned long long bits = (unsigned long long)(unsigned)~(r + 1) << 32 | (unsigned)(r + 1);
			if (V == ONE_RED && leader) redadd(w + 1, lanes);
			if (V == TWO_RED && leader) { redor(w, bits); redadd(w + 1, lanes); }
			if (V == TWO_RED_LANE0 && (threadIdx.x & 31) == 0) { redor(w, bits); redadd(w + 1, lanes); }
			if (V == INSTR_ONLY && leader) sink += slot * 7 + bits + lanes;
			if (V == TWO_RED_GATHER && leader) {
				if (slot == gslot) { gcnt += lanes; gbits |= bits; }
				else { if (gslot != ~0ull) { redor(base + gslot * 4, gbits); redadd(base + gslot * 4 + 1, gcnt); } gslot = slot; gcnt = lanes; gbits = bits; }
			}
		}
	}
	if (V == TWO_RED_GATHER && gslot != ~0ull) { redor(base + gslot * 4, gbits); redadd(base + gslot * 4 + 1, gcnt); }
	if (V == INSTR_ONLY && sink == 12345) map[0] = sink;
	for (int d = 16; d > 0; d /= 2) acc += __shfl_down_sync(0xffffffffu, acc, d);
	if (threadIdx.x % 32 == 0) ws[threadIdx.x / 32] = acc;
	__syncthreads();
	if (threadIdx.x == 0) { long long b = 0; for (int w = 0; w < 8; w++) b += ws[w]; atomicAdd(sum, (unsigned long long)b); }
}
typedef void (*kf)(const int *, long, unsigned long long *, unsigned long long *);
int main(int argc, char **argv)
{
	long n = 1 << 24; int iters = 31, rounds = argc > 1 ? atoi(argv[1]) : 15;
	int *in; unsigned long long *sum, *map;
	CK(cudaMalloc(&in, n * 4)); CK(cudaMalloc(&sum, 8)); CK(cudaMalloc(&map, 132ull * 1024 * 4 * 8));
	CK(cudaMemset(map, 0, 132ull * 1024 * 4 * 8));
	std::vector<int> h(n); for (long i = 0; i < n; i++) h[i] = (int)(i % 977) - 400;
	CK(cudaMemcpy(in, h.data(), n * 4, cudaMemcpyHostToDevice));
	kf f[NV] = { k<0>, k<1>, k<2>, k<3>, k<4>, k<5> };
	// check: the gathered and plain counts agree (one launch each on a zeroed map)
	unsigned long long tot[2] = {0, 0};
	for (int j = 0; j < 2; j++) {
		CK(cudaMemset(map, 0, 132ull * 1024 * 4 * 8));
		f[j ? TWO_RED_GATHER : TWO_RED]<<<256, 256>>>(in, n, sum, map); CK(cudaDeviceSynchronize());
		std::vector<unsigned long long> hm(132ull * 1024 * 4); CK(cudaMemcpy(hm.data(), map, hm.size() * 8, cudaMemcpyDeviceToHost));
		for (size_t q = 1; q < hm.size(); q += 4) tot[j] += hm[q];
	}
	printf("check: thread accesses counted %llu (2 reds) %llu (gathered), n = %ld\n", tot[0], tot[1], n);
	cost_rounds(NV, names, rounds, iters, [&](int v) { f[v]<<<256, 256>>>(in, n, sum, map); });
}
