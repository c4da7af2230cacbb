/* SPDX-License-Identifier: MIT */
/*
 * example_rt.cuh - runtime-API helpers of the .cu examples: error checks,
 * per-launch timing with CUDA events and the loop's wall time.
 */
#ifndef GPUEXT_EXAMPLE_RT_CUH
#define GPUEXT_EXAMPLE_RT_CUH

#include <time.h>

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

/* Events around one launch; with -time, prints its kernel_ms line.  With
 * -loop, the wall clock from the end of the first launch to the end of the
 * last (timer_loop_end, after the loop's synchronization). */
struct launch_timer {
	cudaEvent_t start, stop;
	int on, loop;
	long launches;
	struct timespec t0;
};

static void timer_init(struct launch_timer *t, const struct example_opts *o)
{
	t->on = o->time;
	t->loop = o->loop;
	t->launches = 0;
	if (t->on) {
		CHECK(cudaEventCreate(&t->start));
		CHECK(cudaEventCreate(&t->stop));
	}
}

static void timer_begin(struct launch_timer *t)
{
	if (t->loop && t->launches++ == 1) {
		CHECK(cudaDeviceSynchronize());
		clock_gettime(CLOCK_MONOTONIC, &t->t0);
	}
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

/* After the loop and its cudaDeviceSynchronize: prints loop_ms (-loop). */
static void timer_loop_end(struct launch_timer *t)
{
	struct timespec t1;

	if (!t->loop || t->launches < 2)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("loop_ms: %.6f\n", ((t1.tv_sec - t->t0.tv_sec) * 1e3 +
				   (t1.tv_nsec - t->t0.tv_nsec) / 1e6) / (t->launches - 1));
}

static void timer_fini(struct launch_timer *t)
{
	if (t->on) {
		CHECK(cudaEventDestroy(t->start));
		CHECK(cudaEventDestroy(t->stop));
	}
}

#endif
