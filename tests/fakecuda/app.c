/* SPDX-License-Identifier: MIT */
/*
 * app.c - a driver-API application for the agent tests (with the fake
 * driver): like cudart, it retains the primary context, then loads the PTX
 * module of argv[1] and launches kernels argv[2] and argv[3] through every
 * way an application reaches the driver:
 *   exported symbols (linked)                          API "cuLaunchKernel"
 *   cuGetProcAddress_v2 found with dlsym on libcuda,   flags 0 and per-thread
 *   dlsym(libcuda, "cuLaunchKernel")
 *   cuLibraryLoadData + cuLibraryGetKernel, the CUkernel launched as a CUfunction
 *   the JIT linker (cuLinkAddData PTX), its cubin loaded with cuModuleLoadData
 *   graph kernel nodes (cuGraphAddKernelNode) with a CUfunction and a CUkernel
 * Prints "app ok" and exits 0 when every call succeeded.  APP_DELAY_MS=N:
 * N ms between the first module load and the first launch; APP_LINGER_MS=N:
 * N ms after the last launch before it exits (an application still running
 * when the agent's mirror thread wakes).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#include "fakeapp.h"

#define CHECK(call)                                                                   \
	do {                                                                          \
		CUresult r_ = (call);                                                 \
		if (r_ != CUDA_SUCCESS) {                                             \
			fprintf(stderr, "app: %s failed: %d\n", #call, (int)r_);     \
			exit(1);                                                      \
		}                                                                     \
	} while (0)

/* the fake driver's test hook (tests/fakecuda/fakecuda.c) */
void *fakecuda_next_cuinit(void);

typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t,
				CUdriverProcAddressQueryResult *);
typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
			      unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*get_function_fn)(CUfunction *, CUmodule, const char *);

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: app MODULE.ptx KERNEL1 KERNEL2\n");
		return 2;
	}
	char *ptx = fakeapp_read_all(argv[1]);
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction k1, k2;
	void *params[8] = {NULL}; /* a pointer per parameter, as the driver reads them */
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CHECK(cuCtxSetCurrent(ctx));

	/* exported symbols; $APP_DELAY_MS: a pause between loading the module
	 * and launching from it, as an application's setup makes */
	CHECK(cuModuleLoadData(&mod, ptx));
	CHECK(cuModuleGetFunction(&k1, mod, argv[2]));
	CHECK(cuModuleGetFunction(&k2, mod, argv[3]));
	if (getenv("APP_DELAY_MS"))
		usleep((useconds_t)atoi(getenv("APP_DELAY_MS")) * 1000);
	CHECK(cuLaunchKernel(k1, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
	CHECK(cuLaunchKernel(k2, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));

	/* cuGetProcAddress_v2, found the way cudart finds it */
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h)
		return 1;
	get_proc_fn gp = (get_proc_fn)dlsym(h, "cuGetProcAddress_v2");
	launch_fn launch = NULL, launch_ptsz = NULL;
	get_function_fn get_function = NULL;
	if (!gp)
		return 1;
	CHECK(gp("cuLaunchKernel", (void **)&launch, 12000, 0, NULL));
	CHECK(gp("cuLaunchKernel", (void **)&launch_ptsz, 12000,
		 CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, NULL));
	CHECK(gp("cuModuleGetFunction", (void **)&get_function, 12000, 0, NULL));
	CUfunction k1b;
	CHECK(get_function(&k1b, mod, argv[2]));
	CHECK(launch(k1b, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
	CHECK(launch_ptsz(k1, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
	CHECK(launch_ptsz(k2, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));

	/* plain dlsym on the driver's handle */
	launch_fn dl_launch = (launch_fn)dlsym(h, "cuLaunchKernel");
	if (!dl_launch)
		return 1;
	CHECK(dl_launch(k1, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));

	/* libraries: a CUkernel launched as a CUfunction */
	CUlibrary lib;
	CUkernel kern;
	CHECK(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
	CHECK(cuLibraryGetKernel(&kern, lib, argv[2]));
	CHECK(cuLaunchKernel((CUfunction)kern, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
	/* the JIT linker's cubin */
	CUlinkState link;
	void *cubin;
	size_t cubin_len;
	CUmodule linked;
	CUfunction k1c;
	CHECK(cuLinkCreate(0, NULL, NULL, &link));
	CHECK(cuLinkAddData(link, CU_JIT_INPUT_PTX, ptx, strlen(ptx) + 1, "app.ptx", 0, NULL,
			    NULL));
	CHECK(cuLinkComplete(link, &cubin, &cubin_len));
	CHECK(cuModuleLoadData(&linked, cubin));
	CHECK(cuLinkDestroy(link));
	CHECK(cuModuleGetFunction(&k1c, linked, argv[2]));
	CHECK(cuLaunchKernel(k1c, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
	/* graph kernel nodes (the fake driver logs them as launches) */
	CUgraphNode node;
	CUDA_KERNEL_NODE_PARAMS np = {.func = k1, .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1,
				      .blockDimX = 32, .blockDimY = 1, .blockDimZ = 1,
				      .kernelParams = params};
	CHECK(cuGraphAddKernelNode(&node, NULL, NULL, 0, &np));
	np.func = NULL;
	np.kern = kern;
	CHECK(cuGraphAddKernelNode(&node, NULL, NULL, 0, &np));
	/* dlsym(RTLD_NEXT) keeps its meaning under the agent's dlsym */
	if (fakecuda_next_cuinit() != NULL) {
		fprintf(stderr, "app: dlsym(RTLD_NEXT) from libcuda found a cuInit after it\n");
		return 1;
	}
	if (dlsym(RTLD_NEXT, "printf") != dlsym(RTLD_DEFAULT, "printf")) {
		fprintf(stderr, "app: dlsym(RTLD_NEXT, printf) is not libc's\n");
		return 1;
	}
	if (getenv("APP_LINGER_MS"))
		usleep((useconds_t)atoi(getenv("APP_LINGER_MS")) * 1000);
	printf("app ok\n");
	free(ptx);
	return 0;
}
