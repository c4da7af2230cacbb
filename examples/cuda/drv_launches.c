/* SPDX-License-Identifier: MIT */
/*
 * drv_launches - the vector-add kernel (vecadd_kernel.cuh, PTX embedded as
 * in drv_vecadd) launched through every way the driver API has, each into
 * an output buffer of its own:
 *   0 cuLaunchKernel with kernelParams
 *   1 cuLaunchKernel with `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER; the
 *     buffer's size is the end of the last parameter, 28 bytes, as
 *     hand-packed buffers have it)
 *   2 cuLaunchKernelEx
 *   3 cuLaunchCooperativeKernel
 *   4 a graph kernel node (cuGraphAddKernelNode), the graph launched twice
 *   5 a launch captured from a stream, the graph launched twice
 * Every output is checked against the CPU's sums; the checksum covers them
 * all.  The first line says launches=8 (the kernel runs 8 times) and
 * paths=6 (6 launch ids under gpuext: a graph's replays repeat its ids).
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

enum { PATHS = 6, BLOCK = 256 };

/* Launch the graph twice on s and wait. */
static void run_graph_twice(CUgraph g, CUstream s)
{
	CUgraphExec exec;
	CU_CHECK(cuGraphInstantiate(&exec, g, 0));
	CU_CHECK(cuGraphLaunch(exec, s));
	CU_CHECK(cuGraphLaunch(exec, s));
	CU_CHECK(cuStreamSynchronize(s));
	CU_CHECK(cuGraphExecDestroy(exec));
}

int main(int argc, char **argv)
{
	struct example_opts o = example_parse(argc, argv, 1 << 16, 1 << 20, "elements");
	size_t bytes = (size_t)o.n * sizeof(float);
	float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(PATHS * bytes), *ref = malloc(PATHS * bytes);
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction fn;
	CUstream s;
	CUdeviceptr da, db, dc[PATHS];
	int n = (int)o.n;

	if (!a || !b || !c || !ref)
		return perror("malloc"), 1;
	for (long i = 0; i < o.n; i++) {
		a[i] = example_value(i, 1);
		b[i] = example_value(i, 2);
		for (int p = 0; p < PATHS; p++)
			ref[p * o.n + i] = a[i] + b[i];
	}
	CU_CHECK(cuInit(0));
	CU_CHECK(cuDeviceGet(&dev, 0));
	CU_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CU_CHECK(cuCtxSetCurrent(ctx));
	CU_CHECK(cuModuleLoadData(&mod, vecadd_ptx));
	CU_CHECK(cuModuleGetFunction(&fn, mod, "vecadd"));
	CU_CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CU_CHECK(cuMemAlloc(&da, bytes));
	CU_CHECK(cuMemAlloc(&db, bytes));
	CU_CHECK(cuMemcpyHtoD(da, a, bytes));
	CU_CHECK(cuMemcpyHtoD(db, b, bytes));
	for (int p = 0; p < PATHS; p++) {
		CU_CHECK(cuMemAlloc(&dc[p], bytes));
		CU_CHECK(cuMemsetD8(dc[p], 0, bytes));
	}
	unsigned blocks = (unsigned)((o.n + BLOCK - 1) / BLOCK);

	/* 0: kernelParams */
	void *params0[] = {&da, &db, &dc[0], &n};
	CU_CHECK(cuLaunchKernel(fn, blocks, 1, 1, BLOCK, 1, 1, 0, s, params0, NULL));

	/* 1: one packed parameter buffer, ending where the last parameter does */
	unsigned char buf[28];
	size_t size = sizeof(buf);
	memcpy(buf, &da, 8);
	memcpy(buf + 8, &db, 8);
	memcpy(buf + 16, &dc[1], 8);
	memcpy(buf + 24, &n, 4);
	void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
			 CU_LAUNCH_PARAM_END};
	CU_CHECK(cuLaunchKernel(fn, blocks, 1, 1, BLOCK, 1, 1, 0, s, NULL, extra));

	/* 2: cuLaunchKernelEx */
	void *params2[] = {&da, &db, &dc[2], &n};
	CUlaunchConfig cfg = {.gridDimX = blocks, .gridDimY = 1, .gridDimZ = 1,
			      .blockDimX = BLOCK, .blockDimY = 1, .blockDimZ = 1, .hStream = s};
	CU_CHECK(cuLaunchKernelEx(&cfg, fn, params2, NULL));

	/* 3: cooperative (the grid fits on the GPU at once at the default n) */
	void *params3[] = {&da, &db, &dc[3], &n};
	CU_CHECK(cuLaunchCooperativeKernel(fn, blocks, 1, 1, BLOCK, 1, 1, 0, s, params3));
	CU_CHECK(cuStreamSynchronize(s));

	/* 4: a kernel node, the graph run twice */
	CUgraph g;
	CUgraphNode node;
	void *params4[] = {&da, &db, &dc[4], &n};
	CUDA_KERNEL_NODE_PARAMS np = {.func = fn, .gridDimX = blocks, .gridDimY = 1, .gridDimZ = 1,
				      .blockDimX = BLOCK, .blockDimY = 1, .blockDimZ = 1,
				      .kernelParams = params4};
	CU_CHECK(cuGraphCreate(&g, 0));
	CU_CHECK(cuGraphAddKernelNode(&node, g, NULL, 0, &np));
	run_graph_twice(g, s);
	CU_CHECK(cuGraphDestroy(g));

	/* 5: a launch captured from the stream, the graph run twice */
	void *params5[] = {&da, &db, &dc[5], &n};
	CU_CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CU_CHECK(cuLaunchKernel(fn, blocks, 1, 1, BLOCK, 1, 1, 0, s, params5, NULL));
	CU_CHECK(cuStreamEndCapture(s, &g));
	run_graph_twice(g, s);
	CU_CHECK(cuGraphDestroy(g));

	CU_CHECK(cuCtxSynchronize());
	for (int p = 0; p < PATHS; p++)
		CU_CHECK(cuMemcpyDtoH(c + p * o.n, dc[p], bytes));
	printf("drv_launches: n=%ld launches=8 paths=%d grid=%u block=%d\n", o.n, PATHS, blocks,
	       BLOCK);
	int rc = example_finish("drv_launches", c, ref, PATHS * bytes);
	for (int p = 0; p < PATHS; p++)
		CU_CHECK(cuMemFree(dc[p]));
	CU_CHECK(cuMemFree(da));
	CU_CHECK(cuMemFree(db));
	CU_CHECK(cuStreamDestroy(s));
	CU_CHECK(cuModuleUnload(mod));
	CU_CHECK(cuDevicePrimaryCtxRelease(dev));
	free(a), free(b), free(c), free(ref);
	return rc;
}
