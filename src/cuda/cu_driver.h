/* SPDX-License-Identifier: MIT */
/*
 * cu_driver.h - the CUDA driver API, loaded at run time.
 *
 * gpuext never links libcuda: cu_driver_load() dlopens libcuda.so.1 and
 * resolves the few entry points it uses (by their versioned symbol names,
 * the ones cuda.h's macros pick).  Everything else in gpuext calls the
 * driver through `const struct cu_driver *`.  Without a driver or a GPU the
 * load fails with a message saying which.
 */
#ifndef GPUEXT_CU_DRIVER_H
#define GPUEXT_CU_DRIVER_H

#include <cuda.h> /* types and constants only */

#include "bpf/err.h"

/* X(field, "symbol", return, params) */
#define CU_DRIVER_FUNCS(X)                                                               \
	X(init, "cuInit", (unsigned int flags))                                          \
	X(driver_get_version, "cuDriverGetVersion", (int *version))                      \
	X(device_get_count, "cuDeviceGetCount", (int *count))                            \
	X(device_get, "cuDeviceGet", (CUdevice * dev, int ordinal))                      \
	X(device_get_name, "cuDeviceGetName", (char *name, int len, CUdevice dev))        \
	X(device_get_attribute, "cuDeviceGetAttribute",                                  \
	  (int *v, CUdevice_attribute a, CUdevice dev))                                  \
	X(primary_ctx_retain, "cuDevicePrimaryCtxRetain", (CUcontext * ctx, CUdevice dev)) \
	X(primary_ctx_release, "cuDevicePrimaryCtxRelease_v2", (CUdevice dev))           \
	X(ctx_set_current, "cuCtxSetCurrent", (CUcontext ctx))                           \
	X(ctx_synchronize, "cuCtxSynchronize", (void))                                   \
	X(stream_query, "cuStreamQuery", (CUstream s))                                   \
	X(stream_create, "cuStreamCreate", (CUstream * s, unsigned int flags))           \
	X(stream_destroy, "cuStreamDestroy_v2", (CUstream s))                            \
	X(stream_synchronize, "cuStreamSynchronize", (CUstream s))                       \
	X(module_load_data_ex, "cuModuleLoadDataEx",                                     \
	  (CUmodule * m, const void *image, unsigned int n, CUjit_option *opts,          \
	   void **vals))                                                                 \
	X(module_unload, "cuModuleUnload", (CUmodule m))                                 \
	X(module_get_global, "cuModuleGetGlobal_v2",                                     \
	  (CUdeviceptr * p, size_t *bytes, CUmodule m, const char *name))                \
	X(link_create, "cuLinkCreate_v2",                                                \
	  (unsigned int n, CUjit_option *opts, void **vals, CUlinkState *st))             \
	X(link_add_data, "cuLinkAddData_v2",                                             \
	  (CUlinkState st, CUjitInputType type, void *data, size_t size, const char *name, \
	   unsigned int n, CUjit_option *opts, void **vals))                             \
	X(link_complete, "cuLinkComplete", (CUlinkState st, void **cubin, size_t *size))  \
	X(link_destroy, "cuLinkDestroy", (CUlinkState st))                               \
	X(module_get_function, "cuModuleGetFunction",                                    \
	  (CUfunction * f, CUmodule m, const char *name))                                \
	X(launch_kernel, "cuLaunchKernel",                                               \
	  (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, \
	   unsigned bz, unsigned shmem, CUstream s, void **params, void **extra))        \
	X(mem_alloc, "cuMemAlloc_v2", (CUdeviceptr * p, size_t size))                    \
	X(mem_free, "cuMemFree_v2", (CUdeviceptr p))                                     \
	X(memcpy_htod, "cuMemcpyHtoD_v2", (CUdeviceptr dst, const void *src, size_t n))  \
	X(memcpy_dtoh, "cuMemcpyDtoH_v2", (void *dst, CUdeviceptr src, size_t n))        \
	X(memcpy_dtoh_async, "cuMemcpyDtoHAsync_v2",                                     \
	  (void *dst, CUdeviceptr src, size_t n, CUstream s))                            \
	X(memset_d8, "cuMemsetD8_v2", (CUdeviceptr dst, unsigned char v, size_t n))      \
	X(mem_host_alloc, "cuMemHostAlloc", (void **p, size_t size, unsigned int flags)) \
	X(mem_host_get_device_pointer, "cuMemHostGetDevicePointer_v2",                   \
	  (CUdeviceptr * d, void *p, unsigned int flags))                                \
	X(mem_free_host, "cuMemFreeHost", (void *p))                                     \
	X(mem_address_reserve, "cuMemAddressReserve",                                    \
	  (CUdeviceptr * p, size_t size, size_t align, CUdeviceptr addr,                 \
	   unsigned long long flags))                                                    \
	X(mem_address_free, "cuMemAddressFree", (CUdeviceptr p, size_t size))            \
	X(mem_create, "cuMemCreate",                                                     \
	  (CUmemGenericAllocationHandle * h, size_t size, const CUmemAllocationProp *prop, \
	   unsigned long long flags))                                                    \
	X(mem_release, "cuMemRelease", (CUmemGenericAllocationHandle h))                 \
	X(mem_map, "cuMemMap",                                                           \
	  (CUdeviceptr p, size_t size, size_t off, CUmemGenericAllocationHandle h,       \
	   unsigned long long flags))                                                    \
	X(mem_unmap, "cuMemUnmap", (CUdeviceptr p, size_t size))                         \
	X(mem_set_access, "cuMemSetAccess",                                              \
	  (CUdeviceptr p, size_t size, const CUmemAccessDesc *desc, size_t n))           \
	X(mem_get_allocation_granularity, "cuMemGetAllocationGranularity",               \
	  (size_t *g, const CUmemAllocationProp *prop, CUmemAllocationGranularity_flags o)) \
	X(get_error_string, "cuGetErrorString", (CUresult r, const char **s))            \
	X(get_error_name, "cuGetErrorName", (CUresult r, const char **s))

#define CU_DRIVER_FIELD(field, sym, params) CUresult(*field) params;
struct cu_driver {
	CU_DRIVER_FUNCS(CU_DRIVER_FIELD)
	int version; /* cuDriverGetVersion: 13000 for CUDA 13.0 */
};
#undef CU_DRIVER_FIELD

/*
 * Load the driver once per process and cuInit it.  Thread-safe.  Fails with
 * "no CUDA driver: ..." when libcuda.so.1 cannot be loaded and with the
 * driver's own error name ("CUDA_ERROR_NO_DEVICE") when cuInit fails.
 */
int cu_driver_load(const struct cu_driver **out, struct err *e);

/* "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for a result code. */
const char *cu_errstr(const struct cu_driver *d, CUresult r, char *buf, size_t len);

/* err_set() for a failed driver call: "what: CUDA_ERROR_... (text)". */
int cu_err(const struct cu_driver *d, struct err *e, CUresult r, const char *what);

#endif /* GPUEXT_CU_DRIVER_H */
