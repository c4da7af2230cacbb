/* SPDX-License-Identifier: MIT */
/*
 * memapp.c - a driver-API application for the host tools' tests (with the
 * fake driver): a known set of allocations, frees, copies, memsets,
 * launches and synchronisations, made through the two ways cudart and
 * PyTorch reach the driver: cuGetProcAddress_v2 (API names, flags 0 or
 * per-thread default stream) and dlsym on libcuda (symbol names, _v2).
 * tests/unit/test_hosttools.c checks cudatrace's and syncsnoop's counts
 * against this list:
 *   device allocs: 1000 (GPA), 4096 (GPA, freed GPA), 3149824 (dlsym, the
 *     leak), 512 (dlsym, freed dlsym), a 5th that FAKECUDA_FAIL may fail;
 *   managed: 8192 (leaked); host: 256 (freed);
 *   HtoD: 3 x 1000 (GPA, sync), 2 x 100 (GPA per-thread, async), 1 2D
 *     copy of 16 x 4 bytes (dlsym); DtoH 1 x 1000; DtoD 1 x 64;
 *     cuMemcpy (unified) 1 x 10; memset D32 of 10 words;
 *   7 launches of memapp_kernel (5 GPA, 2 dlsym);
 *   cuCtxSynchronize 2 (dlsym), cuStreamSynchronize 3 (GPA per-thread),
 *   cuEventSynchronize 1 (dlsym).
 * Prints "memapp ok" and exits 0 when every call that must succeed did.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#define CHECK(call)                                                                   \
	do {                                                                          \
		CUresult r_ = (call);                                                 \
		if (r_ != CUDA_SUCCESS) {                                             \
			fprintf(stderr, "memapp: %s failed: %d\n", #call, (int)r_);  \
			exit(1);                                                      \
		}                                                                     \
	} while (0)

typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t,
				CUdriverProcAddressQueryResult *);

static void *lib;
static get_proc_fn get_proc;

static void *by_dlsym(const char *name)
{
	void *f = dlsym(lib, name);
	if (!f) {
		fprintf(stderr, "memapp: dlsym %s: %s\n", name, dlerror());
		exit(1);
	}
	return f;
}

static void *by_proc(const char *name, cuuint64_t flags)
{
	void *f = NULL;
	CHECK(get_proc(name, &f, 13000, flags, NULL));
	return f;
}

static const char ptx[] = ".version 7.0\n.target sm_75\n.address_size 64\n"
			  ".visible .entry memapp_kernel()\n{\n\tret;\n}\n";

int main(void)
{
	const cuuint64_t per_thread = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	CUdeviceptr a, b, leak, d, fail, managed;
	void *host;
	char buf[4096] = {0};

	if (!(lib = dlopen("libcuda.so.1", RTLD_NOW))) {
		fprintf(stderr, "memapp: %s\n", dlerror());
		return 1;
	}
	get_proc = (get_proc_fn)by_dlsym("cuGetProcAddress_v2");
	CHECK(((CUresult(*)(unsigned))by_proc("cuInit", 0))(0));
	CUresult (*gpa_alloc)(CUdeviceptr *, size_t) = by_proc("cuMemAlloc", 0);
	CUresult (*gpa_free)(CUdeviceptr) = by_proc("cuMemFree", 0);
	CUresult (*sym_alloc)(CUdeviceptr *, size_t) = by_dlsym("cuMemAlloc_v2");
	CUresult (*sym_free)(CUdeviceptr) = by_dlsym("cuMemFree_v2");

	CHECK(gpa_alloc(&a, 1000));
	CHECK(gpa_alloc(&b, 4096));
	CHECK(gpa_free(b));
	CHECK(sym_alloc(&leak, 3149824));
	CHECK(sym_alloc(&d, 512));
	CHECK(sym_free(d));
	if (sym_alloc(&fail, 64) == CUDA_SUCCESS) /* FAKECUDA_FAIL=cuMemAlloc_v2:5 fails it */
		CHECK(sym_free(fail));
	CHECK(((CUresult(*)(CUdeviceptr *, size_t, unsigned))by_dlsym("cuMemAllocManaged"))(
		&managed, 8192, CU_MEM_ATTACH_GLOBAL));
	CHECK(((CUresult(*)(void **, size_t))by_dlsym("cuMemAllocHost_v2"))(&host, 256));
	CHECK(((CUresult(*)(void *))by_dlsym("cuMemFreeHost"))(host));

	CUresult (*htod)(CUdeviceptr, const void *, size_t) = by_proc("cuMemcpyHtoD", 0);
	CUresult (*htod_async)(CUdeviceptr, const void *, size_t, CUstream) =
		by_proc("cuMemcpyHtoDAsync", per_thread);
	for (int i = 0; i < 3; i++)
		CHECK(htod(a, buf, 1000));
	for (int i = 0; i < 2; i++)
		CHECK(htod_async(a, buf, 100, NULL));
	CUDA_MEMCPY2D c2 = {.srcMemoryType = CU_MEMORYTYPE_HOST, .srcHost = buf, .srcPitch = 16,
			    .dstMemoryType = CU_MEMORYTYPE_DEVICE, .dstDevice = a, .dstPitch = 16,
			    .WidthInBytes = 16, .Height = 4};
	CHECK(((CUresult(*)(const CUDA_MEMCPY2D *))by_dlsym("cuMemcpy2D_v2"))(&c2));
	CHECK(((CUresult(*)(void *, CUdeviceptr, size_t))by_dlsym("cuMemcpyDtoH_v2"))(buf, a, 1000));
	CHECK(((CUresult(*)(CUdeviceptr, CUdeviceptr, size_t))by_dlsym("cuMemcpyDtoD_v2"))(
		leak, a, 64));
	CHECK(((CUresult(*)(CUdeviceptr, CUdeviceptr, size_t))by_dlsym("cuMemcpy"))(leak, a, 10));
	CHECK(((CUresult(*)(CUdeviceptr, unsigned, size_t))by_dlsym("cuMemsetD32_v2"))(a, 7, 10));

	CUmodule mod;
	CUfunction f;
	CHECK(((CUresult(*)(CUmodule *, const void *))by_proc("cuModuleLoadData", 0))(&mod, ptx));
	CHECK(((CUresult(*)(CUfunction *, CUmodule, const char *))by_proc("cuModuleGetFunction", 0))(
		&f, mod, "memapp_kernel"));
	typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned,
				      unsigned, unsigned, unsigned, CUstream, void **, void **);
	launch_fn gpa_launch = by_proc("cuLaunchKernel", 0), sym_launch = by_dlsym("cuLaunchKernel");
	for (int i = 0; i < 5; i++)
		CHECK(gpa_launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
	for (int i = 0; i < 2; i++)
		CHECK(sym_launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));

	CUresult (*ctx_sync)(void) = by_dlsym("cuCtxSynchronize");
	CUresult (*stream_sync)(CUstream) = by_proc("cuStreamSynchronize", per_thread);
	for (int i = 0; i < 2; i++)
		CHECK(ctx_sync());
	for (int i = 0; i < 3; i++)
		CHECK(stream_sync(NULL));
	CHECK(((CUresult(*)(CUevent))by_dlsym("cuEventSynchronize"))(NULL));
	puts("memapp ok");
	return 0;
}
