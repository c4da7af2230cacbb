// SPDX-License-Identifier: MIT
/*
 * cost_rounds.cuh - the timing of the hand-written cost programs
 * (bench/cuda/*_cost.cu): variants interleaved in rounds, so that a drift
 * of the GPU's clocks lands on all of them, each a median of launches, as
 * a ratio to the same round's first variant (the plain kernel).
 */
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CK(call)                                                                     \
	do {                                                                         \
		cudaError_t err_ = (call);                                           \
		if (err_ != cudaSuccess) {                                           \
			printf("%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
			exit(1);                                                     \
		}                                                                    \
	} while (0)

/* vecadd's buffers for n floats: a and b filled alike, c for the sums. */
static void cost_vecadd_buffers(int n, float **a, float **b, float **c)
{
	CK(cudaMalloc(a, n * 4));
	CK(cudaMalloc(b, n * 4));
	CK(cudaMalloc(c, n * 4));
	std::vector<float> h(n);
	for (int i = 0; i < n; i++)
		h[i] = (float)(i % 1000) * 0.5f;
	CK(cudaMemcpy(*a, h.data(), n * 4, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(*b, h.data(), n * 4, cudaMemcpyHostToDevice));
}

/*
 * rounds rounds (plus one warm-up) over variants 0..nv-1: launch(v) queues
 * variant v's kernel once; each variant runs iters launches a round, timed
 * with events, the first left out, its median kept.  Prints a markdown
 * table: per variant the median ms over the rounds and the median and range
 * of its ratio to variant 0 of the same round.
 */
template <class Launch>
static void cost_rounds(int nv, const char *const *names, int rounds, int iters, Launch launch)
{
	cudaEvent_t e0, e1;
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	std::vector<std::vector<double>> ratio(nv), ms(nv);
	std::vector<double> med(nv);
	for (int rd = -1; rd < rounds; rd++) {
		for (int v = 0; v < nv; v++) {
			std::vector<float> t;
			for (int it = 0; it < iters; it++) {
				float x;
				CK(cudaEventRecord(e0));
				launch(v);
				CK(cudaEventRecord(e1));
				CK(cudaEventSynchronize(e1));
				CK(cudaEventElapsedTime(&x, e0, e1));
				if (it)
					t.push_back(x);
			}
			CK(cudaGetLastError());
			std::sort(t.begin(), t.end());
			med[v] = t[t.size() / 2];
		}
		for (int v = 0; rd >= 0 && v < nv; v++) {
			ratio[v].push_back(med[v] / med[0]);
			ms[v].push_back(med[v]);
		}
	}
	printf("| # | variant | median ms | ratio | min | max |\n| ---: | --- | ---: | ---: | ---: | ---: |\n");
	for (int v = 0; v < nv; v++) {
		std::sort(ratio[v].begin(), ratio[v].end());
		std::sort(ms[v].begin(), ms[v].end());
		printf("| %d | %s | %.6f | %.3f | %.3f | %.3f |\n", v, names[v], ms[v][ms[v].size() / 2],
		       ratio[v][ratio[v].size() / 2], ratio[v].front(), ratio[v].back());
	}
}
