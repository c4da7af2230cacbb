/* SPDX-License-Identifier: MIT */
/*
 * rtapp.c - an application laid out like an nvcc-built one, for the agent's
 * work from process start (agent_ahead.c; with the fake driver): its fatbin
 * (one uncompressed PTX entry: RTAPP_PTX, given at build time) lies in
 * .nv_fatbin and cudart's wrapper for it in .nvFatBinSegment, and, like
 * cudart 13, it hands the driver that wrapper only at its first launch
 * (cuLibraryLoadData), after its own set-up: APP_INIT_DELAY_MS of work
 * before any CUDA call (a real application's start: its arguments, files,
 * libraries), cuInit, the primary context, then APP_DELAY_MS of work.  Launches argv[1] and argv[2] APP_REPS times
 * each (default 2), APP_REP_DELAY_MS apart.
 * Prints "rtapp ok" and exits 0 when every call succeeded.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cuda.h>

#ifndef RTAPP_PTX
#error "build with -DRTAPP_PTX=path/of/file.ptx"
#endif
#define RTAPP_STR(x) #x
#define RTAPP_XSTR(x) RTAPP_STR(x)

#define CHECK(call)                                                                   \
	do {                                                                          \
		CUresult r_ = (call);                                                 \
		if (r_ != CUDA_SUCCESS) {                                             \
			fprintf(stderr, "rtapp: %s failed: %d\n", #call, (int)r_);   \
			exit(1);                                                      \
		}                                                                     \
	} while (0)

/* The fatbin (docs/fatbin.md): header, one PTX entry of 64 header bytes
 * (kind 1, PTX ISA 9.0, compute_75, flags 0x11), the PTX NUL-terminated
 * and padded to 8. */
__asm__(".section .nv_fatbin, \"a\"\n"
	".balign 8\n"
	"rtapp_fatbin:\n"
	".long 0xba55ed50\n.short 1\n.short 16\n.quad rtapp_end - rtapp_entry\n"
	"rtapp_entry:\n"
	".short 1\n.short 0x0101\n.long 64\n.quad rtapp_end - rtapp_ptx\n"
	".long 0\n.long 0\n.short 0\n.short 9\n.long 75\n.long 0\n.long 0\n"
	".quad 0x11\n.quad 0\n.quad 0\n"
	"rtapp_ptx:\n.incbin \"" RTAPP_XSTR(RTAPP_PTX) "\"\n.byte 0\n.balign 8, 0\n"
	"rtapp_end:\n"
	".previous\n");

extern const char rtapp_fatbin[];

/* cudart's wrapper: magic, version 1, the fatbin, no file name. */
struct rtapp_wrapper {
	uint32_t magic, version;
	const void *data;
	const void *unused;
};
__attribute__((section(".nvFatBinSegment"), used)) static const struct rtapp_wrapper
	rtapp_wrapper = {0x466243b1u, 1, rtapp_fatbin, NULL};

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: rtapp KERNEL1 KERNEL2\n");
		return 2;
	}
	CUdevice dev;
	CUcontext ctx;
	CUlibrary lib;
	CUkernel k[2];
	void *params[1] = {NULL};
	if (getenv("APP_INIT_DELAY_MS"))
		usleep((useconds_t)atoi(getenv("APP_INIT_DELAY_MS")) * 1000);
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CHECK(cuCtxSetCurrent(ctx));
	if (getenv("APP_DELAY_MS"))
		usleep((useconds_t)atoi(getenv("APP_DELAY_MS")) * 1000);
	CHECK(cuLibraryLoadData(&lib, &rtapp_wrapper, NULL, NULL, 0, NULL, NULL, 0));
	for (int i = 0; i < 2; i++)
		CHECK(cuLibraryGetKernel(&k[i], lib, argv[1 + i]));
	int reps = getenv("APP_REPS") ? atoi(getenv("APP_REPS")) : 2;
	for (int rep = 0; rep < reps; rep++) {
		for (int i = 0; i < 2; i++)
			CHECK(cuLaunchKernel((CUfunction)k[i], 1, 1, 1, 32, 1, 1, 0, NULL, params,
					     NULL));
		if (getenv("APP_REP_DELAY_MS"))
			usleep((useconds_t)atoi(getenv("APP_REP_DELAY_MS")) * 1000);
	}
	CHECK(cuLibraryUnload(lib));
	CHECK(cuDevicePrimaryCtxRelease(dev));
	printf("rtapp ok\n");
	return 0;
}
