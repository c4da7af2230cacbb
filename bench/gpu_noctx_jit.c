/* SPDX-License-Identifier: MIT */
/*
 * gpu_noctx_jit - which of the driver's compiles of a PTX module need a
 * context, and which run beside another (issue 6, the first launch: what
 * the agent can compile ahead, before the application's context exists).
 *
 *   build/gpu/gpu_noctx_jit FILE.ptx [--gemm N]
 *
 * In one fresh process, each step timed (wall ms, CLOCK_MONOTONIC around the
 * driver calls), in this order:
 *   init        cuInit
 *   link-noctx  cuLinkCreate (CU_JIT_TARGET: GPU 0's) + cuLinkAddData(PTX)
 *               + cuLinkComplete with no context current anywhere
 *   link-nopic  the same with CU_JIT_POSITION_INDEPENDENT_CODE 0
 *   lib-noctx   cuLibraryLoadData(PTX), no context
 *   ctx         cuDevicePrimaryCtxRetain + cuCtxSetCurrent (GPU 0)
 *   lib-get     cuLibraryGetKernel + cuKernelGetFunction of lib-noctx's first
 *               kernel in that context (where a deferred compile would go)
 *   image       cuModuleLoadData of link-noctx's cubin
 *   load        cuModuleLoadDataEx(PTX) in the context (the agent's way)
 *   load-2      two threads doing load at once (each with the context
 *               current): about load's time if the driver compiles them
 *               side by side, about twice if it serializes them
 * One line per step: "STEP rc=N ms=X".  With --gemm N (FILE being
 * examples/cuda/gemm.cu's kernel, instrumented or not): then the kernel
 * from each module (load, link-noctx, link-nopic, the library) on N x N
 * matrices, "run-WAY kernel_ms=MEDIAN" of 21 launches (CUDA events): is a
 * module compiled without a context (by the JIT linker, as relocatable
 * code) as fast as the agent's cuModuleLoadDataEx?  Run with
 * CUDA_CACHE_DISABLE=1, so that every compile is real.  Exit 77 without a
 * GPU.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>

#include "testutil.h"

#define DRV(ret, name, params) static ret(*name) params
DRV(CUresult, p_init, (unsigned));
DRV(CUresult, p_device_get, (CUdevice *, int));
DRV(CUresult, p_attr, (int *, CUdevice_attribute, CUdevice));
DRV(CUresult, p_link_create, (unsigned, CUjit_option *, void **, CUlinkState *));
DRV(CUresult, p_link_add, (CUlinkState, CUjitInputType, void *, size_t, const char *, unsigned,
			   CUjit_option *, void **));
DRV(CUresult, p_link_complete, (CUlinkState, void **, size_t *));
DRV(CUresult, p_lib_load, (CUlibrary *, const void *, CUjit_option *, void **, unsigned,
			   CUlibraryOption *, void **, unsigned));
DRV(CUresult, p_lib_kernel, (CUkernel *, CUlibrary, const char *));
DRV(CUresult, p_kernel_fn, (CUfunction *, CUkernel));
DRV(CUresult, p_retain, (CUcontext *, CUdevice));
DRV(CUresult, p_set_current, (CUcontext));
DRV(CUresult, p_load_data, (CUmodule *, const void *));
DRV(CUresult, p_load_data_ex, (CUmodule *, const void *, unsigned, CUjit_option *, void **));
DRV(CUresult, p_get_function, (CUfunction *, CUmodule, const char *));
DRV(CUresult, p_mem_alloc, (CUdeviceptr *, size_t));
DRV(CUresult, p_launch, (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			 unsigned, CUstream, void **, void **));
DRV(CUresult, p_event_create, (CUevent *, unsigned));
DRV(CUresult, p_event_record, (CUevent, CUstream));
DRV(CUresult, p_event_sync, (CUevent));
DRV(CUresult, p_event_elapsed, (float *, CUevent, CUevent));

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void report(const char *step, CUresult r, double t0)
{
	printf("%-10s rc=%d ms=%.1f\n", step, (int)r, now_ms() - t0);
	fflush(stdout);
}

static const char *ptx;
static CUcontext ctx;

static void *load_thread(void *arg)
{
	CUmodule mod;
	p_set_current(ctx);
	*(CUresult *)arg = p_load_data_ex(&mod, ptx, 0, NULL, NULL);
	return NULL;
}

/* A JIT-linker compile of ptx for sm with no context: the cubin (a copy)
 * or NULL; pic < 0: the driver's default. */
static void *link_noctx(const char *step, int sm, int pic)
{
	CUjit_option opt[2] = {CU_JIT_TARGET, CU_JIT_POSITION_INDEPENDENT_CODE};
	void *val[2] = {(void *)(size_t)sm, (void *)(size_t)(pic < 0 ? 0 : pic)};
	CUlinkState st = NULL;
	void *cubin = NULL, *image = NULL;
	size_t len = 0;
	double t0 = now_ms();
	CUresult r = p_link_create(pic < 0 ? 1 : 2, opt, val, &st);
	if (r == CUDA_SUCCESS)
		r = p_link_add(st, CU_JIT_INPUT_PTX, (void *)ptx, strlen(ptx) + 1, "in.ptx", 0, NULL,
			       NULL);
	if (r == CUDA_SUCCESS)
		r = p_link_complete(st, &cubin, &len);
	report(step, r, t0);
	if (r == CUDA_SUCCESS && (image = malloc(len)))
		memcpy(image, cubin, len); /* the link state owns cubin */
	return image;
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

/* gemm_tiled(a, b, c, n) from f on n x n matrices: the median of 21 launches. */
static void run_gemm(const char *way, CUfunction f, int n)
{
	static CUdeviceptr m[3];
	static CUevent ev[2];
	float ms[21];
	if (!f)
		return;
	if (!m[0]) {
		for (int i = 0; i < 3; i++)
			if (p_mem_alloc(&m[i], (size_t)n * n * sizeof(float)) != CUDA_SUCCESS)
				return;
		p_event_create(&ev[0], 0);
		p_event_create(&ev[1], 0);
	}
	void *args[4] = {&m[0], &m[1], &m[2], &n};
	unsigned g = (unsigned)(n + 15) / 16;
	for (int i = 0; i < 21; i++) {
		p_event_record(ev[0], NULL);
		CUresult r = p_launch(f, g, g, 1, 16, 16, 1, 0, NULL, args, NULL);
		p_event_record(ev[1], NULL);
		p_event_sync(ev[1]);
		if (r != CUDA_SUCCESS) {
			printf("run-%s rc=%d\n", way, (int)r);
			return;
		}
		p_event_elapsed(&ms[i], ev[0], ev[1]);
	}
	qsort(ms, 21, sizeof(ms[0]), cmp_float);
	printf("run-%-8s kernel_ms=%.4f\n", way, ms[10]);
}

/* The function name from mod (NULL when there is none). */
static CUfunction function_of(CUmodule mod, const char *name)
{
	CUfunction f = NULL;
	if (mod && p_get_function(&f, mod, name) != CUDA_SUCCESS)
		f = NULL;
	return f;
}

int main(int argc, char **argv)
{
	int gemm_n = 0;
	if (argc == 4 && !strcmp(argv[2], "--gemm"))
		gemm_n = atoi(argv[3]);
	if ((argc != 2 && !gemm_n) || (argc != 2 && argc != 4)) {
		fprintf(stderr, "usage: gpu_noctx_jit FILE.ptx [--gemm N]\n");
		return 2;
	}
	ptx = test_read_file(argv[1], NULL);
	if (!ptx) {
		fprintf(stderr, "gpu_noctx_jit: cannot read %s\n", argv[1]);
		return 1;
	}
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h) {
		fprintf(stderr, "gpu_noctx_jit: no driver: %s\n", dlerror());
		return 77;
	}
	static const struct {
		void **fn;
		const char *sym;
	} syms[] = {
		{(void **)&p_init, "cuInit"},
		{(void **)&p_device_get, "cuDeviceGet"},
		{(void **)&p_attr, "cuDeviceGetAttribute"},
		{(void **)&p_link_create, "cuLinkCreate_v2"},
		{(void **)&p_link_add, "cuLinkAddData_v2"},
		{(void **)&p_link_complete, "cuLinkComplete"},
		{(void **)&p_lib_load, "cuLibraryLoadData"},
		{(void **)&p_lib_kernel, "cuLibraryGetKernel"},
		{(void **)&p_kernel_fn, "cuKernelGetFunction"},
		{(void **)&p_retain, "cuDevicePrimaryCtxRetain"},
		{(void **)&p_set_current, "cuCtxSetCurrent"},
		{(void **)&p_load_data, "cuModuleLoadData"},
		{(void **)&p_load_data_ex, "cuModuleLoadDataEx"},
		{(void **)&p_get_function, "cuModuleGetFunction"},
		{(void **)&p_mem_alloc, "cuMemAlloc_v2"},
		{(void **)&p_launch, "cuLaunchKernel"},
		{(void **)&p_event_create, "cuEventCreate"},
		{(void **)&p_event_record, "cuEventRecord"},
		{(void **)&p_event_sync, "cuEventSynchronize"},
		{(void **)&p_event_elapsed, "cuEventElapsedTime_v2"},
	};
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (!(*syms[i].fn = dlsym(h, syms[i].sym))) {
			fprintf(stderr, "gpu_noctx_jit: no %s in the driver\n", syms[i].sym);
			return 1;
		}
	/* the first kernel's name */
	char name[256] = "";
	const char *e = strstr(ptx, ".entry ");
	if (e)
		sscanf(e + 7, "%255[^( \t\r\n]", name);

	double t0 = now_ms();
	CUresult r = p_init(0);
	report("init", r, t0);
	if (r != CUDA_SUCCESS)
		return 77;
	CUdevice dev;
	int major = 0, minor = 0;
	p_device_get(&dev, 0);
	p_attr(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
	p_attr(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);

	int sm = major * 10 + minor;
	void *image = link_noctx("link-noctx", sm, -1);
	void *image_nopic = link_noctx("link-nopic", sm, 0);

	CUlibrary lib = NULL;
	t0 = now_ms();
	CUresult lib_r = p_lib_load(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0);
	report("lib-noctx", lib_r, t0);

	t0 = now_ms();
	r = p_retain(&ctx, dev);
	if (r == CUDA_SUCCESS)
		r = p_set_current(ctx);
	report("ctx", r, t0);
	if (r != CUDA_SUCCESS)
		return 1;

	CUfunction lib_f = NULL;
	if (lib_r == CUDA_SUCCESS) {
		CUkernel k;
		t0 = now_ms();
		r = p_lib_kernel(&k, lib, name);
		if (r == CUDA_SUCCESS)
			r = p_kernel_fn(&lib_f, k);
		report("lib-get", r, t0);
	}
	CUmodule img_mod = NULL, nopic_mod = NULL, mod = NULL;
	if (image) {
		t0 = now_ms();
		report("image", p_load_data(&img_mod, image), t0);
	}
	if (image_nopic)
		p_load_data(&nopic_mod, image_nopic);
	t0 = now_ms();
	report("load", p_load_data_ex(&mod, ptx, 0, NULL, NULL), t0);
	if (gemm_n) {
		run_gemm("load", function_of(mod, name), gemm_n);
		run_gemm("link", function_of(img_mod, name), gemm_n);
		run_gemm("nopic", function_of(nopic_mod, name), gemm_n);
		run_gemm("library", lib_f, gemm_n);
	}

	pthread_t th[2];
	CUresult rs[2] = {CUDA_SUCCESS, CUDA_SUCCESS};
	t0 = now_ms();
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, load_thread, &rs[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	report("load-2", rs[0] != CUDA_SUCCESS ? rs[0] : rs[1], t0);
	return 0;
}
