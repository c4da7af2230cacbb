/* SPDX-License-Identifier: MIT */
/*
 * example_rt.cuh - runtime-API helpers of the .cu examples: error checks
 * and per-launch timing with CUDA events.
 */
#ifndef GPUEXT_EXAMPLE_RT_CUH
#define GPUEXT_EXAMPLE_RT_CUH

#include <cuda_runtime.h>

#include "example.h"

#define CHECK(call)                                                                      \
	do {                                                                             \
		cudaError_t err_ = (call);                                               \
		if (err_ != cudaSuccess) {                                               \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,    \
				cudaGetErrorString(err_));                               \
			exit(1);                                                         \
		}                                                                        \
	} while (0)

/* Events around one launch; with -time, prints its kernel_ms line. */
struct launch_timer {
	cudaEvent_t start, stop;
	int on;
};

static void timer_init(struct launch_timer *t, int on)
{
	t->on = on;
	if (on) {
		CHECK(cudaEventCreate(&t->start));
		CHECK(cudaEventCreate(&t->stop));
	}
}

static void timer_begin(struct launch_timer *t)
{
	if (t->on)
		CHECK(cudaEventRecord(t->start));
}

/* After the launch: checks for a launch error, prints the time. */
static void timer_end(struct launch_timer *t)
{
	CHECK(cudaGetLastError());
	if (t->on) {
		float ms;
		CHECK(cudaEventRecord(t->stop));
		CHECK(cudaEventSynchronize(t->stop));
		CHECK(cudaEventElapsedTime(&ms, t->start, t->stop));
		printf("kernel_ms: %.6f\n", ms);
	}
}

static void timer_fini(struct launch_timer *t)
{
	if (t->on) {
		CHECK(cudaEventDestroy(t->start));
		CHECK(cudaEventDestroy(t->stop));
	}
}

#endif
