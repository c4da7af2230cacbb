/* SPDX-License-Identifier: MIT */
/*
 * launchapp.c - launches of one kernel through every launch form of the
 * driver API, for the launch id tests (with the fake driver): argv[1] is
 * a PTX module, argv[2] a kernel of it taking (u64, u64, u64, u32), as
 * tests/ptx_corpus/checked.compute_75.ptx's vec_add does.
 *   cuLaunchKernel with kernelParams, then with `extra` (a 28-byte buffer of
 *   bytes 1..28), cuLaunchKernelEx, cuLaunchCooperativeKernel, a graph
 *   kernel node with kernelParams and one with `extra`, and last an `extra`
 *   list with a key the driver does not define and a launch with no
 *   parameters at all (the fake accepts both; the driver would not).
 *   Each of 32-thread blocks in a row of blocks (flat: an instrumented
 *   kernel's flat twin runs, ptx_inject.h) but the cuLaunchKernelEx (a
 *   grid of 4 x 2) and the first graph node (blocks of 16 x 2).
 * With a third argument N, the kernel takes N parameters (each pointed to
 * 0xa1): one cuLaunchKernel with kernelParams only.
 * Prints "launchapp ok" and exits 0 when every call succeeded.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "fakeapp.h"

#define CHECK(call)                                                                   \
	do {                                                                          \
		CUresult r_ = (call);                                                 \
		if (r_ != CUDA_SUCCESS) {                                             \
			fprintf(stderr, "launchapp: %s failed: %d\n", #call, (int)r_); \
			exit(1);                                                      \
		}                                                                     \
	} while (0)

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: launchapp MODULE.ptx KERNEL [NPARAMS]\n");
		return 2;
	}
	char *ptx = fakeapp_read_all(argv[1]);
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction k;
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CHECK(cuCtxSetCurrent(ctx));
	CHECK(cuModuleLoadData(&mod, ptx));
	CHECK(cuModuleGetFunction(&k, mod, argv[2]));

	uint64_t a = 0xa1, b = 0xb2, c = 0xc3;
	if (argc == 4) {
		int np = atoi(argv[3]);
		void **many = calloc((size_t)np + 1, sizeof(*many));
		for (int i = 0; many && i < np; i++)
			many[i] = &a;
		CHECK(cuLaunchKernel(k, 1, 1, 1, 32, 1, 1, 0, NULL, many, NULL));
		free(many);
		printf("launchapp ok\n");
		free(ptx);
		return 0;
	}
	uint32_t n = 28;
	void *params[] = {&a, &b, &c, &n};
	unsigned char buf[28];
	size_t size = sizeof(buf);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i + 1);
	void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
			 CU_LAUNCH_PARAM_END};
	CHECK(cuLaunchKernel(k, 2, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
	CHECK(cuLaunchKernel(k, 3, 1, 1, 32, 1, 1, 0, NULL, NULL, extra));
	CUlaunchConfig cfg = {.gridDimX = 4, .gridDimY = 2, .gridDimZ = 1,
			      .blockDimX = 32, .blockDimY = 1, .blockDimZ = 1};
	CHECK(cuLaunchKernelEx(&cfg, k, params, NULL));
	CHECK(cuLaunchCooperativeKernel(k, 5, 1, 1, 32, 1, 1, 0, NULL, params));
	CUgraphNode node;
	CUDA_KERNEL_NODE_PARAMS np = {.func = k, .gridDimX = 6, .gridDimY = 1, .gridDimZ = 1,
				      .blockDimX = 16, .blockDimY = 2, .blockDimZ = 1,
				      .kernelParams = params};
	CHECK(cuGraphAddKernelNode(&node, NULL, NULL, 0, &np));
	np.blockDimX = 32;
	np.blockDimY = 1;
	np.kernelParams = NULL;
	np.extra = extra;
	np.gridDimX = 7;
	CHECK(cuGraphAddKernelNode(&node, NULL, NULL, 0, &np));
	void *odd[] = {(void *)0x7f, NULL, CU_LAUNCH_PARAM_BUFFER_POINTER, buf,
		       CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
	CHECK(cuLaunchKernel(k, 8, 1, 1, 32, 1, 1, 0, NULL, NULL, odd));
	/* no parameters at all for a kernel that has some: the driver's error
	 * (the fake accepts it), never a crash in the agent */
	CHECK(cuLaunchKernel(k, 9, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
	printf("launchapp ok\n");
	free(ptx);
	return 0;
}
