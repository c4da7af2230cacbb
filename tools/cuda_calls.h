/* SPDX-License-Identifier: MIT */
/*
 * cuda_calls.h - the driver calls the host tools probe (cudatrace,
 * syncsnoop, launchlat), one list for the programs (which generate their
 * uprobe/uretprobe pairs from it) and the CLI (names, directions).
 *
 * X(name, class, detail, arg, blocking):
 *   class   what the call does (CC_*): decides what the tools account;
 *   detail  ALLOC*: the memory kind (CM_*); COPY: the direction (CD_*);
 *           MEMSET: the element size in bytes; others 0;
 *   arg     the index (0-based) of the argument that holds the size (ALLOC,
 *           COPY, MEMSET: the element count), the freed pointer (FREE) or
 *           the kernel handle (LAUNCH); ALLOC_PITCH and COPY_2D compute it
 *           (tools/cudatrace.bpf.c);
 *   blocking Y where the host thread waits for the device (syncsnoop).
 * Both the driver's symbol names (what dlsym finds: cuMemAlloc_v2) and the
 * API names (what cuGetProcAddress is asked for: cuMemAlloc, handing out
 * the _v2 function) are listed: one call reaches the driver through one of
 * them, never both.  A probe on NAME also covers NAME_ptsz and NAME_ptds.
 * The pre-3.2 ABIs of the un-suffixed names (32-bit sizes) are not used
 * by any current runtime and are read as the _v2 ones.
 */
#ifndef GPUEXT_TOOLS_CUDA_CALLS_H
#define GPUEXT_TOOLS_CUDA_CALLS_H

enum cuda_call_class {
	CC_ALLOC = 1,    /* (CUdeviceptr *out or void **out, size, ...) */
	CC_ALLOC_PITCH,  /* (CUdeviceptr *out, size_t *pitch, width, height, elem) */
	CC_FREE,         /* (ptr, ...) */
	CC_COPY,         /* (dst, src, size, ...) or peer: size at arg 4 */
	CC_COPY_2D,      /* (const CUDA_MEMCPY2D *, ...) */
	CC_MEMSET,       /* (dst, value, count, ...) */
	CC_LAUNCH,       /* kernel handle at arg */
	CC_SYNC,         /* synchronize / wait */
};

/* Memory kinds of allocations. */
enum { CM_DEVICE, CM_MANAGED, CM_POOL, CM_HOST, CM_COUNT };
/* Copy directions.  DEFAULT: unified addressing (cuMemcpy, cuMemcpyAsync),
 * the driver decides from the pointers; PEER: device to another device. */
enum { CD_HTOD, CD_DTOH, CD_DTOD, CD_HTOH, CD_DEFAULT, CD_PEER, CD_COUNT };

#define CUDA_CALLS(X)                                                                  \
	X(cuMemAlloc, CC_ALLOC, CM_DEVICE, 1, N)                                       \
	X(cuMemAlloc_v2, CC_ALLOC, CM_DEVICE, 1, N)                                    \
	X(cuMemAllocManaged, CC_ALLOC, CM_MANAGED, 1, N)                               \
	X(cuMemAllocAsync, CC_ALLOC, CM_POOL, 1, N)                                    \
	X(cuMemAllocFromPoolAsync, CC_ALLOC, CM_POOL, 1, N)                            \
	X(cuMemAllocHost, CC_ALLOC, CM_HOST, 1, N)                                     \
	X(cuMemAllocHost_v2, CC_ALLOC, CM_HOST, 1, N)                                  \
	X(cuMemHostAlloc, CC_ALLOC, CM_HOST, 1, N)                                     \
	X(cuMemAllocPitch, CC_ALLOC_PITCH, CM_DEVICE, 0, N)                            \
	X(cuMemAllocPitch_v2, CC_ALLOC_PITCH, CM_DEVICE, 0, N)                         \
	X(cuMemFree, CC_FREE, CM_DEVICE, 0, N)                                         \
	X(cuMemFree_v2, CC_FREE, CM_DEVICE, 0, N)                                      \
	X(cuMemFreeAsync, CC_FREE, CM_POOL, 0, N)                                      \
	X(cuMemFreeHost, CC_FREE, CM_HOST, 0, N)                                       \
	X(cuMemcpy, CC_COPY, CD_DEFAULT, 2, Y)                                         \
	X(cuMemcpyAsync, CC_COPY, CD_DEFAULT, 2, N)                                    \
	X(cuMemcpyHtoD, CC_COPY, CD_HTOD, 2, Y)                                        \
	X(cuMemcpyHtoD_v2, CC_COPY, CD_HTOD, 2, Y)                                     \
	X(cuMemcpyHtoDAsync, CC_COPY, CD_HTOD, 2, N)                                   \
	X(cuMemcpyHtoDAsync_v2, CC_COPY, CD_HTOD, 2, N)                                \
	X(cuMemcpyDtoH, CC_COPY, CD_DTOH, 2, Y)                                        \
	X(cuMemcpyDtoH_v2, CC_COPY, CD_DTOH, 2, Y)                                     \
	X(cuMemcpyDtoHAsync, CC_COPY, CD_DTOH, 2, N)                                   \
	X(cuMemcpyDtoHAsync_v2, CC_COPY, CD_DTOH, 2, N)                                \
	X(cuMemcpyDtoD, CC_COPY, CD_DTOD, 2, Y)                                        \
	X(cuMemcpyDtoD_v2, CC_COPY, CD_DTOD, 2, Y)                                     \
	X(cuMemcpyDtoDAsync, CC_COPY, CD_DTOD, 2, N)                                   \
	X(cuMemcpyDtoDAsync_v2, CC_COPY, CD_DTOD, 2, N)                                \
	X(cuMemcpyPeer, CC_COPY, CD_PEER, 4, Y)                                        \
	X(cuMemcpyPeerAsync, CC_COPY, CD_PEER, 4, N)                                   \
	X(cuMemcpy2D, CC_COPY_2D, 0, 0, Y)                                             \
	X(cuMemcpy2D_v2, CC_COPY_2D, 0, 0, Y)                                          \
	X(cuMemcpy2DUnaligned, CC_COPY_2D, 0, 0, Y)                                    \
	X(cuMemcpy2DUnaligned_v2, CC_COPY_2D, 0, 0, Y)                                 \
	X(cuMemcpy2DAsync, CC_COPY_2D, 0, 0, N)                                        \
	X(cuMemcpy2DAsync_v2, CC_COPY_2D, 0, 0, N)                                     \
	X(cuMemsetD8, CC_MEMSET, 1, 2, N)                                              \
	X(cuMemsetD8_v2, CC_MEMSET, 1, 2, N)                                           \
	X(cuMemsetD16, CC_MEMSET, 2, 2, N)                                             \
	X(cuMemsetD16_v2, CC_MEMSET, 2, 2, N)                                          \
	X(cuMemsetD32, CC_MEMSET, 4, 2, N)                                             \
	X(cuMemsetD32_v2, CC_MEMSET, 4, 2, N)                                          \
	X(cuMemsetD8Async, CC_MEMSET, 1, 2, N)                                         \
	X(cuMemsetD16Async, CC_MEMSET, 2, 2, N)                                        \
	X(cuMemsetD32Async, CC_MEMSET, 4, 2, N)                                        \
	X(cuLaunchKernel, CC_LAUNCH, 0, 0, N)                                          \
	X(cuLaunchKernelEx, CC_LAUNCH, 0, 1, N)                                        \
	X(cuLaunchCooperativeKernel, CC_LAUNCH, 0, 0, N)                               \
	X(cuCtxSynchronize, CC_SYNC, 0, 0, Y)                                          \
	X(cuStreamSynchronize, CC_SYNC, 0, 0, Y)                                       \
	X(cuEventSynchronize, CC_SYNC, 0, 0, Y)                                        \
	X(cuStreamWaitEvent, CC_SYNC, 0, 0, Y)

#define CUDA_CALL_ENUM(name, cls, detail, arg, blocking) CALL_##name,
enum cuda_call { CALL_NONE, CUDA_CALLS(CUDA_CALL_ENUM) CALL_COUNT };
#undef CUDA_CALL_ENUM

#endif
