/* SPDX-License-Identifier: MIT */
/*
 * drv_vecadd - vector add through the CUDA driver API alone, no cudart:
 * the kernel's PTX (vecadd_kernel.cuh compiled with nvcc -ptx at build
 * time) is embedded as a string and loaded with cuModuleLoadData, the
 * kernel found with cuModuleGetFunction and launched with cuLaunchKernel.
 *
 * Built twice (see the Makefile):
 *   drv_vecadd   cuModuleLoadData(PTX): the driver JIT-compiles the PTX.
 *   link_vecadd  (-DEXAMPLE_USE_LINKER) cuLinkCreate / cuLinkAddData(PTX) /
 *                cuLinkComplete, then cuModuleLoadData(the linked cubin):
 *                the JIT-linker path that Numba and other JIT linkers take.
 * Linked against libcuda (the toolkit's stub at build time), so the driver
 * symbols are called directly, as CuPy and Triton's launcher do.
 */
#include <cuda.h>

#include "example.h"
#include "vecadd_ptx.h" /* generated: const unsigned char vecadd_ptx[], NUL-terminated */

#define CU_CHECK(call)                                                                   \
	do {                                                                             \
		CUresult r_ = (call);                                                    \
		if (r_ != CUDA_SUCCESS) {                                                \
			const char *s_ = NULL;                                           \
			cuGetErrorString(r_, &s_);                                       \
			fprintf(stderr, "%s:%d: %s: %s (%d)\n", __FILE__, __LINE__, #call, \
				s_ ? s_ : "?", (int)r_);                                 \
			exit(1);                                                         \
		}                                                                        \
	} while (0)

#ifdef EXAMPLE_USE_LINKER
#define EXAMPLE_NAME "link_vecadd"
/* Link the PTX into a cubin with the driver's JIT linker and load that. */
static CUmodule load_module(void)
{
	CUlinkState link;
	CUmodule mod;
	void *cubin;
	size_t cubin_size;

	CU_CHECK(cuLinkCreate(0, NULL, NULL, &link));
	CU_CHECK(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)vecadd_ptx, sizeof(vecadd_ptx),
			       "vecadd.ptx", 0, NULL, NULL));
	CU_CHECK(cuLinkComplete(link, &cubin, &cubin_size));
	CU_CHECK(cuModuleLoadData(&mod, cubin));
	/* The cubin belongs to the link state: destroy it only after loading. */
	CU_CHECK(cuLinkDestroy(link));
	return mod;
}
#else
#define EXAMPLE_NAME "drv_vecadd"
static CUmodule load_module(void)
{
	CUmodule mod;

	CU_CHECK(cuModuleLoadData(&mod, vecadd_ptx));
	return mod;
}
#endif

int main(int argc, char **argv)
{
	struct example_opts o = example_parse(argc, argv, 1 << 20, 1L << 28, "elements");
	size_t bytes = (size_t)o.n * sizeof(float);
	float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes), *ref = malloc(bytes);
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction fn;
	CUdeviceptr da, db, dc;
	CUevent start = NULL, stop = NULL;
	int n = (int)o.n;

	if (!a || !b || !c || !ref)
		return perror("malloc"), 1;
	for (long i = 0; i < o.n; i++) {
		a[i] = example_value(i, 1);
		b[i] = example_value(i, 2);
		ref[i] = a[i] + b[i];
	}
	CU_CHECK(cuInit(0));
	CU_CHECK(cuDeviceGet(&dev, 0));
	CU_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CU_CHECK(cuCtxSetCurrent(ctx));
	mod = load_module();
	CU_CHECK(cuModuleGetFunction(&fn, mod, "vecadd"));
	CU_CHECK(cuMemAlloc(&da, bytes));
	CU_CHECK(cuMemAlloc(&db, bytes));
	CU_CHECK(cuMemAlloc(&dc, bytes));
	CU_CHECK(cuMemcpyHtoD(da, a, bytes));
	CU_CHECK(cuMemcpyHtoD(db, b, bytes));
	if (o.time) {
		CU_CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT));
		CU_CHECK(cuEventCreate(&stop, CU_EVENT_DEFAULT));
	}

	unsigned blocks = (unsigned)((o.n + 255) / 256);
	void *params[] = {&da, &db, &dc, &n};
	for (long it = 0; it < o.iters; it++) {
		if (o.time)
			CU_CHECK(cuEventRecord(start, NULL));
		CU_CHECK(cuLaunchKernel(fn, blocks, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
		if (o.time) {
			float ms;
			CU_CHECK(cuEventRecord(stop, NULL));
			CU_CHECK(cuEventSynchronize(stop));
			CU_CHECK(cuEventElapsedTime(&ms, start, stop));
			printf("kernel_ms: %.6f\n", ms);
		}
	}
	CU_CHECK(cuCtxSynchronize());
	CU_CHECK(cuMemcpyDtoH(c, dc, bytes));
	printf("%s: n=%ld launches=%ld grid=%u block=256\n", EXAMPLE_NAME, o.n, o.iters, blocks);
	int rc = example_finish(EXAMPLE_NAME, c, ref, bytes);
	if (o.time) {
		CU_CHECK(cuEventDestroy(start));
		CU_CHECK(cuEventDestroy(stop));
	}
	CU_CHECK(cuMemFree(da));
	CU_CHECK(cuMemFree(db));
	CU_CHECK(cuMemFree(dc));
	CU_CHECK(cuModuleUnload(mod));
	CU_CHECK(cuDevicePrimaryCtxRelease(dev));
	free(a), free(b), free(c), free(ref);
	return rc;
}
