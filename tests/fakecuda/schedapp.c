/* SPDX-License-Identifier: MIT */
/*
 * schedapp - a tenant for the scheduling tests (tests/unit/test_sched.c),
 * linked against the fake libcuda: creates a stream and launches argv[1]
 * kernels on it, timing each cuLaunchKernel call (what an admission hold
 * adds), then prints "schedapp ok launches=N max_launch_us=M".
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda.h>

#define CHECK(x)                                                              \
	do {                                                                  \
		CUresult r_ = (x);                                            \
		if (r_ != CUDA_SUCCESS) {                                     \
			fprintf(stderr, "schedapp: %s: %d\n", #x, (int)r_);   \
			return 1;                                             \
		}                                                             \
	} while (0)

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	static const char ptx[] = ".version 8.0\n.target sm_75\n.address_size 64\n"
				  ".visible .entry k()\n{\n\tret;\n}\n";
	int n = argc > 1 ? atoi(argv[1]) : 1;
	CUmodule mod;
	CUfunction k;
	CUstream s;
	double max = 0;

	CHECK(cuInit(0));
	CHECK(cuModuleLoadData(&mod, ptx));
	CHECK(cuModuleGetFunction(&k, mod, "k"));
	CHECK(cuStreamCreate(&s, 0));
	for (int i = 0; i < n; i++) {
		double t0 = now_us();
		CHECK(cuLaunchKernel(k, 4, 1, 1, 128, 1, 1, 0, s, NULL, NULL));
		double dt = now_us() - t0;
		max = dt > max ? dt : max;
	}
	CHECK(cuStreamSynchronize(s));
	printf("schedapp ok launches=%d max_launch_us=%.0f\n", n, max);
	return 0;
}
