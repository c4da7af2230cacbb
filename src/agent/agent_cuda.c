/* SPDX-License-Identifier: MIT */
/*
 * agent_cuda.c - the interposed driver functions: module capture (what
 * image each CUmodule/CUlibrary came from), kernel tracking (CUfunction and
 * CUkernel handles to their module and name) and launch redirection.
 *
 * Every wrapper is exported under the driver's symbol name (asm labels:
 * cuda.h #defines some names to versioned ones) and also handed out by
 * dlsym and cuGetProcAddress through the resolver at the end.  A wrapper
 * calls the real function first and records only on success, so CUDA
 * results reach the application unchanged.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "agent.h"
#include "agent_impl.h"
#include "cuda/fatbin.h"

/* ---- modules and kernels ------------------------------------------------ */

static pthread_mutex_t agent_lock = PTHREAD_MUTEX_INITIALIZER;
static struct agent_module *agent_modules;
enum { AGENT_KERNEL_BUCKETS = 1024 };
static struct agent_kernel *agent_kernels[AGENT_KERNEL_BUCKETS];

static size_t agent_bucket(const void *h)
{
	uintptr_t x = (uintptr_t)h;
	return (size_t)((x >> 4) ^ (x >> 14)) % AGENT_KERNEL_BUCKETS;
}

struct agent_kernel *agent_kernel_find(const void *handle)
{
	pthread_mutex_lock(&agent_lock);
	struct agent_kernel *k = agent_kernels[agent_bucket(handle)];
	while (k && k->handle != handle)
		k = k->next;
	pthread_mutex_unlock(&agent_lock);
	return k;
}

/* The fatbin header's own size (the image passed to the driver may be
 * freed after the call: fatbins and PTX are copied, wrappers point into
 * the application's binary and stay). */
static size_t agent_fatbin_size(const void *image)
{
	const unsigned char *p = image;
	uint16_t hdr;
	uint64_t body;
	memcpy(&hdr, p + 6, 2);
	memcpy(&body, p + 8, 8);
	return body > FATBIN_MAX_SIZE ? 0 : hdr + (size_t)body;
}

static void agent_module_add(void *handle, const void *image)
{
	if (!handle || !agent_gpu_prog_cnt)
		return; /* nothing to instrument: keep no state */
	struct agent_module *m = calloc(1, sizeof(*m));
	if (!m)
		return;
	m->handle = handle;
	clock_gettime(CLOCK_MONOTONIC, &m->loaded);
	uint32_t magic = 0;
	if (image)
		memcpy(&magic, image, 4);
	if (magic == FATBIN_WRAPPER_MAGIC) {
		m->kind = AGENT_IMAGE_WRAPPER;
		m->image = image;
	} else if (magic == FATBIN_MAGIC) {
		size_t len = agent_fatbin_size(image);
		void *copy = len ? malloc(len) : NULL;
		if (copy)
			memcpy(copy, image, len);
		m->kind = AGENT_IMAGE_FATBIN;
		m->image = m->owned = copy;
		m->image_len = len;
	} else if (magic == 0x464c457fu) { /* "\177ELF" */
		m->kind = agent_link_take(image, &m->inputs, &m->input_cnt) ? AGENT_IMAGE_LINKED
									   : AGENT_IMAGE_CUBIN;
	} else if (image) {
		m->kind = AGENT_IMAGE_PTX;
		m->owned = strdup(image);
		m->image = m->owned;
		m->image_len = m->owned ? strlen(m->owned) : 0;
	}
	pthread_mutex_lock(&agent_lock);
	m->next = agent_modules;
	agent_modules = m;
	pthread_mutex_unlock(&agent_lock);
	/* its kernels instrumented in the background, before they are launched */
	static CUresult (*ctx_get_current)(CUcontext *);
	CUcontext ctx = NULL;
	if (!ctx_get_current)
		*(void **)&ctx_get_current = agent_real_driver("cuCtxGetCurrent");
	if (ctx_get_current && ctx_get_current(&ctx) == CUDA_SUCCESS)
		agent_ahead_module(m, ctx);
}

static struct agent_module *agent_module_find_locked(const void *handle)
{
	struct agent_module *m = agent_modules;
	while (m && m->handle != handle)
		m = m->next;
	return m;
}

/* Kernel handle -> its module and name (also a CUfunction of a CUkernel:
 * same module, same name). */
static void agent_kernel_add(const void *handle, const void *module, const char *name)
{
	if (!handle || !agent_gpu_prog_cnt)
		return;
	pthread_mutex_lock(&agent_lock);
	struct agent_module *m = agent_module_find_locked(module);
	struct agent_kernel **b = &agent_kernels[agent_bucket(handle)], *k = *b;
	while (k && k->handle != handle)
		k = k->next;
	if (!k && m && (k = calloc(1, sizeof(*k)))) {
		k->handle = handle;
		k->module = m;
		clock_gettime(CLOCK_MONOTONIC, &k->made);
		k->name = strdup(name);
		k->next = *b;
		*b = k;
		if (!k->name) {
			*b = k->next;
			free(k);
		}
	}
	pthread_mutex_unlock(&agent_lock);
}

static void agent_kernel_alias(const void *alias, const void *of)
{
	struct agent_kernel *k = agent_kernel_find(of);
	if (k)
		agent_kernel_add(alias, k->module->handle, k->name);
}

/* A module unloaded: its handles may be reused, forget its kernels (the
 * instrumented module stays loaded: a launch may still run it). */
static void agent_module_forget(const void *handle)
{
	pthread_mutex_lock(&agent_lock);
	for (struct agent_module **pm = &agent_modules; *pm; pm = &(*pm)->next) {
		if ((*pm)->handle != handle)
			continue;
		struct agent_module *m = *pm;
		for (size_t i = 0; i < AGENT_KERNEL_BUCKETS; i++)
			for (struct agent_kernel **pk = &agent_kernels[i]; *pk;) {
				struct agent_kernel *k = *pk;
				if (k->module != m) {
					pk = &k->next;
					continue;
				}
				*pk = k->next;
				free(k->name);
				free(k);
			}
		*pm = m->next;
		for (size_t i = 0; i < m->input_cnt; i++)
			free(m->inputs[i]);
		free(m->inputs);
		free(m->owned);
		free(m->ptx);
		free(m);
		break;
	}
	pthread_mutex_unlock(&agent_lock);
}

/* ---- the wrappers ---------------------------------------------------- */

typedef CUresult (*load_data_ex_fn)(CUmodule *, const void *, unsigned, CUjit_option *, void **);
typedef CUresult (*load_data_fn)(CUmodule *, const void *);
typedef CUresult (*load_file_fn)(CUmodule *, const char *);
typedef CUresult (*unload_fn)(void *);
typedef CUresult (*get_function_fn)(CUfunction *, CUmodule, const char *);
typedef CUresult (*lib_load_fn)(CUlibrary *, const void *, CUjit_option *, void **, unsigned,
				CUlibraryOption *, void **, unsigned);
typedef CUresult (*lib_get_kernel_fn)(CUkernel *, CUlibrary, const char *);
typedef CUresult (*lib_get_module_fn)(CUmodule *, CUlibrary);
typedef CUresult (*kernel_get_function_fn)(CUfunction *, CUkernel);
typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
			      unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*launch_coop_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned,
				   unsigned, unsigned, unsigned, CUstream, void **);
typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);

static load_data_fn real_load_data;
static load_data_ex_fn real_load_data_ex;
static load_data_fn real_load_fatbin;
static load_file_fn real_load;
static unload_fn real_unload, real_lib_unload;
static get_function_fn real_get_function;
static lib_load_fn real_lib_load;
static lib_get_kernel_fn real_lib_get_kernel;
static lib_get_module_fn real_lib_get_module;
static kernel_get_function_fn real_kernel_get_function;
static launch_fn real_launch, real_launch_ptsz;
static launch_coop_fn real_coop, real_coop_ptsz;
static launch_ex_fn real_launch_ex, real_launch_ex_ptsz;

AGENT_WRAP(agent_w_load_data, "cuModuleLoadData", (CUmodule * m, const void *image))
CUresult agent_w_load_data(CUmodule *m, const void *image)
{
	AGENT_REAL(real_load_data, "cuModuleLoadData");
	CUresult r = real_load_data(m, image);
	if (r == CUDA_SUCCESS)
		agent_module_add(*m, image);
	return r;
}

AGENT_WRAP(agent_w_load_data_ex, "cuModuleLoadDataEx",
	   (CUmodule * m, const void *image, unsigned n, CUjit_option *o, void **v))
CUresult agent_w_load_data_ex(CUmodule *m, const void *image, unsigned n, CUjit_option *o,
			      void **v)
{
	AGENT_REAL(real_load_data_ex, "cuModuleLoadDataEx");
	CUresult r = real_load_data_ex(m, image, n, o, v);
	if (r == CUDA_SUCCESS)
		agent_module_add(*m, image);
	return r;
}

AGENT_WRAP(agent_w_load_fatbin, "cuModuleLoadFatBinary", (CUmodule * m, const void *image))
CUresult agent_w_load_fatbin(CUmodule *m, const void *image)
{
	AGENT_REAL(real_load_fatbin, "cuModuleLoadFatBinary");
	CUresult r = real_load_fatbin(m, image);
	if (r == CUDA_SUCCESS)
		agent_module_add(*m, image);
	return r;
}

/* cuModuleLoad(file): recorded as a module without an image (its kernels
 * are named "no PTX captured" if targeted). */
AGENT_WRAP(agent_w_load, "cuModuleLoad", (CUmodule * m, const char *path))
CUresult agent_w_load(CUmodule *m, const char *path)
{
	AGENT_REAL(real_load, "cuModuleLoad");
	CUresult r = real_load(m, path);
	if (r == CUDA_SUCCESS)
		agent_module_add(*m, NULL);
	return r;
}

AGENT_WRAP(agent_w_unload, "cuModuleUnload", (CUmodule m))
CUresult agent_w_unload(CUmodule m)
{
	AGENT_REAL(real_unload, "cuModuleUnload");
	agent_before_unload(0);
	CUresult r = real_unload(m);
	if (r == CUDA_SUCCESS)
		agent_module_forget(m);
	return r;
}

AGENT_WRAP(agent_w_get_function, "cuModuleGetFunction",
	   (CUfunction * f, CUmodule m, const char *name))
CUresult agent_w_get_function(CUfunction *f, CUmodule m, const char *name)
{
	AGENT_REAL(real_get_function, "cuModuleGetFunction");
	CUresult r = real_get_function(f, m, name);
	if (r == CUDA_SUCCESS)
		agent_kernel_add(*f, m, name);
	return r;
}

AGENT_WRAP(agent_w_lib_load, "cuLibraryLoadData",
	   (CUlibrary * l, const void *code, CUjit_option *jo, void **jv, unsigned jn,
	    CUlibraryOption *lo, void **lv, unsigned ln))
CUresult agent_w_lib_load(CUlibrary *l, const void *code, CUjit_option *jo, void **jv,
			  unsigned jn, CUlibraryOption *lo, void **lv, unsigned ln)
{
	AGENT_REAL(real_lib_load, "cuLibraryLoadData");
	CUresult r = real_lib_load(l, code, jo, jv, jn, lo, lv, ln);
	if (r == CUDA_SUCCESS)
		agent_module_add(*l, code);
	return r;
}

AGENT_WRAP(agent_w_lib_unload, "cuLibraryUnload", (CUlibrary l))
CUresult agent_w_lib_unload(CUlibrary l)
{
	AGENT_REAL(real_lib_unload, "cuLibraryUnload");
	agent_before_unload(0);
	CUresult r = real_lib_unload(l);
	if (r == CUDA_SUCCESS)
		agent_module_forget(l);
	return r;
}

AGENT_WRAP(agent_w_lib_get_kernel, "cuLibraryGetKernel",
	   (CUkernel * k, CUlibrary l, const char *name))
CUresult agent_w_lib_get_kernel(CUkernel *k, CUlibrary l, const char *name)
{
	AGENT_REAL(real_lib_get_kernel, "cuLibraryGetKernel");
	CUresult r = real_lib_get_kernel(k, l, name);
	if (r == CUDA_SUCCESS)
		agent_kernel_add(*k, l, name);
	return r;
}

/* The library's module has the library's image: record it under both. */
AGENT_WRAP(agent_w_lib_get_module, "cuLibraryGetModule", (CUmodule * m, CUlibrary l))
CUresult agent_w_lib_get_module(CUmodule *m, CUlibrary l)
{
	AGENT_REAL(real_lib_get_module, "cuLibraryGetModule");
	CUresult r = real_lib_get_module(m, l);
	if (r == CUDA_SUCCESS && agent_gpu_prog_cnt) {
		pthread_mutex_lock(&agent_lock);
		struct agent_module *lib = agent_module_find_locked(l);
		int known = agent_module_find_locked(*m) != NULL;
		const void *image = lib && lib->kind == AGENT_IMAGE_WRAPPER ? lib->image : NULL;
		char *ptx = lib && lib->kind == AGENT_IMAGE_PTX ? lib->owned : NULL;
		const void *fat = lib && lib->kind == AGENT_IMAGE_FATBIN ? lib->owned : NULL;
		pthread_mutex_unlock(&agent_lock);
		if (!known && lib)
			agent_module_add(*m, image ? image : ptx ? (const void *)ptx : fat);
	}
	return r;
}

AGENT_WRAP(agent_w_kernel_get_function, "cuKernelGetFunction", (CUfunction * f, CUkernel k))
CUresult agent_w_kernel_get_function(CUfunction *f, CUkernel k)
{
	AGENT_REAL(real_kernel_get_function, "cuKernelGetFunction");
	CUresult r = real_kernel_get_function(f, k);
	if (r == CUDA_SUCCESS)
		agent_kernel_alias(*f, k);
	return r;
}

/*
 * Launches: the scheduling session's admission first (when its policy has
 * one), then the function to run instead (f itself unless a program targets
 * it and instrumentation succeeded).  A redirected launch the driver
 * refuses (e.g. attributes set on the original function only) is retried
 * with the original, which then stays in use: fail-open.
 */
#define AGENT_LAUNCH(real, call_with, dims, ptsz)                                \
	do {                                                                     \
		struct sched_member *sm = agent_sched_member;                    \
		if (sm)                                                          \
			agent_sched_admit dims;                                  \
		CUfunction g = agent_gpu_prog_cnt ? agent_launch_target(f, s) : f;    \
		CUresult r = real call_with(g);                                  \
		if (g != f && r != CUDA_SUCCESS) {                               \
			agent_launch_refused(f, r);                              \
			r = real call_with(f);                                   \
		} else if (g != f) {                                             \
			agent_launch_done(s);                                    \
		}                                                                \
		if (sm && r == CUDA_SUCCESS)                                     \
			agent_sched_queued(s, ptsz);                             \
		return r;                                                        \
	} while (0)

#define AGENT_ARGS_LAUNCH(fn) (fn, gx, gy, gz, bx, by, bz, shmem, s, params, extra)
#define AGENT_ARGS_COOP(fn) (fn, gx, gy, gz, bx, by, bz, shmem, s, params)
#define AGENT_ARGS_EX(fn) (cfg, fn, params, extra)
#define AGENT_DIMS (gx, gy, gz, bx, by, bz)
#define AGENT_CFG(field) (cfg ? cfg->field : 0)
#define AGENT_DIMS_EX                                                                   \
	(AGENT_CFG(gridDimX), AGENT_CFG(gridDimY), AGENT_CFG(gridDimZ),                 \
	 AGENT_CFG(blockDimX), AGENT_CFG(blockDimY), AGENT_CFG(blockDimZ))

#define AGENT_LAUNCH_PARAMS                                                             \
	(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, \
	 unsigned bz, unsigned shmem, CUstream s, void **params, void **extra)
#define AGENT_COOP_PARAMS                                                               \
	(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, \
	 unsigned bz, unsigned shmem, CUstream s, void **params)

AGENT_WRAP(agent_w_launch, "cuLaunchKernel", AGENT_LAUNCH_PARAMS)
CUresult agent_w_launch AGENT_LAUNCH_PARAMS
{
	AGENT_REAL(real_launch, "cuLaunchKernel");
	AGENT_LAUNCH(real_launch, AGENT_ARGS_LAUNCH, AGENT_DIMS, 0);
}

AGENT_WRAP(agent_w_launch_ptsz, "cuLaunchKernel_ptsz", AGENT_LAUNCH_PARAMS)
CUresult agent_w_launch_ptsz AGENT_LAUNCH_PARAMS
{
	AGENT_REAL(real_launch_ptsz, "cuLaunchKernel_ptsz");
	AGENT_LAUNCH(real_launch_ptsz, AGENT_ARGS_LAUNCH, AGENT_DIMS, 1);
}

AGENT_WRAP(agent_w_coop, "cuLaunchCooperativeKernel", AGENT_COOP_PARAMS)
CUresult agent_w_coop AGENT_COOP_PARAMS
{
	AGENT_REAL(real_coop, "cuLaunchCooperativeKernel");
	AGENT_LAUNCH(real_coop, AGENT_ARGS_COOP, AGENT_DIMS, 0);
}

AGENT_WRAP(agent_w_coop_ptsz, "cuLaunchCooperativeKernel_ptsz", AGENT_COOP_PARAMS)
CUresult agent_w_coop_ptsz AGENT_COOP_PARAMS
{
	AGENT_REAL(real_coop_ptsz, "cuLaunchCooperativeKernel_ptsz");
	AGENT_LAUNCH(real_coop_ptsz, AGENT_ARGS_COOP, AGENT_DIMS, 1);
}

AGENT_WRAP(agent_w_launch_ex, "cuLaunchKernelEx",
	   (const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra))
CUresult agent_w_launch_ex(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
	AGENT_REAL(real_launch_ex, "cuLaunchKernelEx");
	CUstream s = cfg ? cfg->hStream : NULL;
	AGENT_LAUNCH(real_launch_ex, AGENT_ARGS_EX, AGENT_DIMS_EX, 0);
}

AGENT_WRAP(agent_w_launch_ex_ptsz, "cuLaunchKernelEx_ptsz",
	   (const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra))
CUresult agent_w_launch_ex_ptsz(const CUlaunchConfig *cfg, CUfunction f, void **params,
				void **extra)
{
	AGENT_REAL(real_launch_ex_ptsz, "cuLaunchKernelEx_ptsz");
	CUstream s = cfg ? cfg->hStream : NULL;
	AGENT_LAUNCH(real_launch_ex_ptsz, AGENT_ARGS_EX, AGENT_DIMS_EX, 1);
}

/* ---- context teardown ------------------------------------------------ */

/* The plain and _v2 names of these three have the same arguments. */
typedef CUresult (*device_fn)(CUdevice);
typedef CUresult (*ctx_fn)(CUcontext);
static device_fn real_primary_release, real_primary_reset;
static ctx_fn real_ctx_destroy;

AGENT_WRAP(agent_w_primary_release, "cuDevicePrimaryCtxRelease_v2", (CUdevice d))
CUresult agent_w_primary_release(CUdevice d)
{
	AGENT_REAL(real_primary_release, "cuDevicePrimaryCtxRelease_v2");
	agent_before_unload(1);
	return real_primary_release(d);
}

AGENT_WRAP(agent_w_primary_reset, "cuDevicePrimaryCtxReset_v2", (CUdevice d))
CUresult agent_w_primary_reset(CUdevice d)
{
	AGENT_REAL(real_primary_reset, "cuDevicePrimaryCtxReset_v2");
	agent_before_unload(1);
	return real_primary_reset(d);
}

AGENT_WRAP(agent_w_ctx_destroy, "cuCtxDestroy_v2", (CUcontext c))
CUresult agent_w_ctx_destroy(CUcontext c)
{
	AGENT_REAL(real_ctx_destroy, "cuCtxDestroy_v2");
	agent_before_unload(1);
	return real_ctx_destroy(c);
}

/* ---- the resolver ---------------------------------------------------- */

static const struct agent_hooked agent_hooked[] = {
	{"cuModuleLoadData", (void *)agent_w_load_data, (void **)&real_load_data},
	{"cuModuleLoadDataEx", (void *)agent_w_load_data_ex, (void **)&real_load_data_ex},
	{"cuModuleLoadFatBinary", (void *)agent_w_load_fatbin, (void **)&real_load_fatbin},
	{"cuModuleLoad", (void *)agent_w_load, (void **)&real_load},
	{"cuModuleUnload", (void *)agent_w_unload, (void **)&real_unload},
	{"cuModuleGetFunction", (void *)agent_w_get_function, (void **)&real_get_function},
	{"cuLibraryLoadData", (void *)agent_w_lib_load, (void **)&real_lib_load},
	{"cuLibraryUnload", (void *)agent_w_lib_unload, (void **)&real_lib_unload},
	{"cuLibraryGetKernel", (void *)agent_w_lib_get_kernel, (void **)&real_lib_get_kernel},
	{"cuLibraryGetModule", (void *)agent_w_lib_get_module, (void **)&real_lib_get_module},
	{"cuKernelGetFunction", (void *)agent_w_kernel_get_function,
	 (void **)&real_kernel_get_function},
	{"cuLaunchKernel", (void *)agent_w_launch, (void **)&real_launch},
	{"cuLaunchKernel_ptsz", (void *)agent_w_launch_ptsz, (void **)&real_launch_ptsz},
	{"cuLaunchCooperativeKernel", (void *)agent_w_coop, (void **)&real_coop},
	{"cuLaunchCooperativeKernel_ptsz", (void *)agent_w_coop_ptsz, (void **)&real_coop_ptsz},
	{"cuLaunchKernelEx", (void *)agent_w_launch_ex, (void **)&real_launch_ex},
	{"cuLaunchKernelEx_ptsz", (void *)agent_w_launch_ex_ptsz, (void **)&real_launch_ex_ptsz},
	{"cuDevicePrimaryCtxRelease", (void *)agent_w_primary_release, (void **)&real_primary_release},
	{"cuDevicePrimaryCtxRelease_v2", (void *)agent_w_primary_release,
	 (void **)&real_primary_release},
	{"cuDevicePrimaryCtxReset", (void *)agent_w_primary_reset, (void **)&real_primary_reset},
	{"cuDevicePrimaryCtxReset_v2", (void *)agent_w_primary_reset, (void **)&real_primary_reset},
	{"cuCtxDestroy", (void *)agent_w_ctx_destroy, (void **)&real_ctx_destroy},
	{"cuCtxDestroy_v2", (void *)agent_w_ctx_destroy, (void **)&real_ctx_destroy},
};

static void *agent_resolve_cuda(const char *name, void *real)
{
	const struct agent_hooked *h =
		agent_hooked_find(agent_hooked, sizeof(agent_hooked) / sizeof(agent_hooked[0]), name);
	return h ? agent_hooked_take(h, real) : NULL;
}

__attribute__((constructor(101))) static void agent_cuda_init(void)
{
	agent_hook_register(agent_resolve_cuda);
}
