/* SPDX-License-Identifier: MIT */
/*
 * managedapp.c - a driver-API application on managed memory for the memory
 * runtime's end-to-end test (test_agent_mem, with the fake driver and the
 * fake libcupti): one managed allocation of argv[1] MiB, filled and summed
 * on the host (the agent must never change it), freed.  Prints
 * "managedapp ok SUM" and exits 0 when the sum is the expected one.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda.h>

#define CHECK(call)                                                                   \
	do {                                                                          \
		CUresult r_ = (call);                                                 \
		if (r_ != CUDA_SUCCESS) {                                             \
			fprintf(stderr, "managedapp: %s failed: %d\n", #call, (int)r_); \
			return 1;                                                     \
		}                                                                     \
	} while (0)

int main(int argc, char **argv)
{
	size_t n = (size_t)(argc > 1 ? atoi(argv[1]) : 64) << 20;
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr p;

	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CHECK(cuCtxSetCurrent(ctx));
	CHECK(cuMemAllocManaged(&p, n, CU_MEM_ATTACH_GLOBAL));
	uint64_t *v = (uint64_t *)(uintptr_t)p, sum = 0, want = 0;
	for (size_t i = 0; i < n / 8; i++) {
		v[i] = i * 2654435761u;
		want += i * 2654435761u;
	}
	for (size_t i = 0; i < n / 8; i++)
		sum += v[i];
	CHECK(cuMemFree(p));
	printf("managedapp %s %llu\n", sum == want ? "ok" : "BAD", (unsigned long long)sum);
	return sum == want ? 0 : 1;
}
