/* SPDX-License-Identifier: MIT */
/*
 * agent_cuda.c - module capture (what image each CUmodule/CUlibrary came
 * from), kernel tracking (CUfunction and CUkernel handles to their module
 * and name) and launch redirection.
 *
 * The module and kernel functions are called by the generated wrappers of
 * agent_wrap.h, on success only, so CUDA results reach the application
 * unchanged.  The launch wrappers are here: exported under the driver's
 * symbol names and handed out by dlsym and cuGetProcAddress through the
 * resolver at the end.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "agent.h"
#include "agent_impl.h"
#include "agent_wrap.h"
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

void agent_module_add(void *handle, const void *image)
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
void agent_kernel_add(const void *handle, const void *module, const char *name)
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

void agent_kernel_alias(const void *alias, const void *of)
{
	struct agent_kernel *k = agent_kernel_find(of);
	if (k)
		agent_kernel_add(alias, k->module->handle, k->name);
}

/* A module unloaded: its handles may be reused, forget its kernels (the
 * instrumented module stays loaded: a launch may still run it). */
void agent_module_forget(const void *handle)
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

/* ---- what agent_wrap.c's wrappers call ------------------------------- */

/* The library's module has the library's image: record it under both. */
void agent_library_module(CUmodule m, CUlibrary l)
{
	if (!agent_gpu_prog_cnt)
		return;
	pthread_mutex_lock(&agent_lock);
	struct agent_module *lib = agent_module_find_locked(l);
	int known = agent_module_find_locked(m) != NULL;
	const void *image = lib && lib->kind == AGENT_IMAGE_WRAPPER ? lib->image : NULL;
	char *ptx = lib && lib->kind == AGENT_IMAGE_PTX ? lib->owned : NULL;
	const void *fat = lib && lib->kind == AGENT_IMAGE_FATBIN ? lib->owned : NULL;
	pthread_mutex_unlock(&agent_lock);
	if (!known && lib)
		agent_module_add(m, image ? image : ptx ? (const void *)ptx : fat);
}

/* ---- launches ----------------------------------------------------------- */

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
			      unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*launch_coop_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned,
				   unsigned, unsigned, unsigned, CUstream, void **);
typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);

static launch_fn real_launch, real_launch_ptsz;
static launch_coop_fn real_coop, real_coop_ptsz;
static launch_ex_fn real_launch_ex, real_launch_ex_ptsz;

/*
 * Launches: the scheduling session's admission first (when its policy has
 * one), then the function to run instead (f itself unless a program targets
 * it and instrumentation succeeded), with the launch's id after the
 * application's parameters (agent_launch_args_make; a launch that cannot
 * carry it runs f).  A redirected launch the driver refuses (e.g.
 * attributes set on the original function only) is retried with the
 * original and the application's parameters, which then stays in use:
 * fail-open.  A queued redirected launch gets its row of the launch table.
 */
#define AGENT_LAUNCH(real, call_with, dims, ptsz, kind)                           \
	do {                                                                      \
		struct sched_member *sm = agent_sched_member;                     \
		if (sm)                                                           \
			agent_sched_admit dims;                                   \
		struct agent_kernel *k = NULL;                                    \
		const unsigned d[6] = {AGENT_UNPAREN dims};                       \
		CUfunction g = agent_gpu_prog_cnt ? agent_launch_target(f, s, d, &k) : f; \
		AGENT_LAUNCH_ARGS(la);                                            \
		if (g != f && agent_launch_args_make(&la, k, params, extra))      \
			g = f;                                                    \
		CUresult r = g != f ? real call_with(g, la.params, la.extra)     \
				    : real call_with(f, params, extra);           \
		if (g != f && r != CUDA_SUCCESS) {                                \
			agent_launch_refused(f, r);                               \
			r = real call_with(f, params, extra);                     \
		} else if (g != f) {                                              \
			agent_launch_note(&la, k, d, AGENT_SHMEM, s, kind);       \
			agent_launch_done(s);                                     \
		}                                                                 \
		if (sm && r == CUDA_SUCCESS)                                      \
			agent_sched_queued(s, ptsz);                              \
		return r;                                                         \
	} while (0)
#define AGENT_UNPAREN(...) __VA_ARGS__

#define AGENT_ARGS_LAUNCH(fn, p, x) (fn, gx, gy, gz, bx, by, bz, shmem, s, p, x)
#define AGENT_ARGS_COOP(fn, p, x) (fn, gx, gy, gz, bx, by, bz, shmem, s, p)
#define AGENT_ARGS_EX(fn, p, x) (cfg, fn, p, x)
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

/* The dynamic shared memory of a launch (AGENT_LAUNCH's note). */
#define AGENT_SHMEM shmem

AGENT_WRAP(agent_w_launch, "cuLaunchKernel", AGENT_LAUNCH_PARAMS)
CUresult agent_w_launch AGENT_LAUNCH_PARAMS
{
	AGENT_REAL(real_launch, "cuLaunchKernel");
	AGENT_LAUNCH(real_launch, AGENT_ARGS_LAUNCH, AGENT_DIMS, 0, GPUEXT_LAUNCH_KERNEL);
}

AGENT_WRAP(agent_w_launch_ptsz, "cuLaunchKernel_ptsz", AGENT_LAUNCH_PARAMS)
CUresult agent_w_launch_ptsz AGENT_LAUNCH_PARAMS
{
	AGENT_REAL(real_launch_ptsz, "cuLaunchKernel_ptsz");
	AGENT_LAUNCH(real_launch_ptsz, AGENT_ARGS_LAUNCH, AGENT_DIMS, 1, GPUEXT_LAUNCH_KERNEL);
}

AGENT_WRAP(agent_w_coop, "cuLaunchCooperativeKernel", AGENT_COOP_PARAMS)
CUresult agent_w_coop AGENT_COOP_PARAMS
{
	void **extra = NULL; /* cooperative launches have only kernelParams */
	AGENT_REAL(real_coop, "cuLaunchCooperativeKernel");
	AGENT_LAUNCH(real_coop, AGENT_ARGS_COOP, AGENT_DIMS, 0, GPUEXT_LAUNCH_COOPERATIVE);
}

AGENT_WRAP(agent_w_coop_ptsz, "cuLaunchCooperativeKernel_ptsz", AGENT_COOP_PARAMS)
CUresult agent_w_coop_ptsz AGENT_COOP_PARAMS
{
	void **extra = NULL;
	AGENT_REAL(real_coop_ptsz, "cuLaunchCooperativeKernel_ptsz");
	AGENT_LAUNCH(real_coop_ptsz, AGENT_ARGS_COOP, AGENT_DIMS, 1, GPUEXT_LAUNCH_COOPERATIVE);
}

#undef AGENT_SHMEM
#define AGENT_SHMEM AGENT_CFG(sharedMemBytes)

AGENT_WRAP(agent_w_launch_ex, "cuLaunchKernelEx",
	   (const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra))
CUresult agent_w_launch_ex(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
	AGENT_REAL(real_launch_ex, "cuLaunchKernelEx");
	CUstream s = cfg ? cfg->hStream : NULL;
	AGENT_LAUNCH(real_launch_ex, AGENT_ARGS_EX, AGENT_DIMS_EX, 0, GPUEXT_LAUNCH_EX);
}

AGENT_WRAP(agent_w_launch_ex_ptsz, "cuLaunchKernelEx_ptsz",
	   (const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra))
CUresult agent_w_launch_ex_ptsz(const CUlaunchConfig *cfg, CUfunction f, void **params,
				void **extra)
{
	AGENT_REAL(real_launch_ex_ptsz, "cuLaunchKernelEx_ptsz");
	CUstream s = cfg ? cfg->hStream : NULL;
	AGENT_LAUNCH(real_launch_ex_ptsz, AGENT_ARGS_EX, AGENT_DIMS_EX, 1, GPUEXT_LAUNCH_EX);
}

/* ---- the resolver ---------------------------------------------------- */

/* The launch wrappers (the others are agent_wrap.c's). */
static const struct agent_hooked agent_hooked[] = {
	{"cuLaunchKernel", (void *)agent_w_launch, (void **)&real_launch},
	{"cuLaunchKernel_ptsz", (void *)agent_w_launch_ptsz, (void **)&real_launch_ptsz},
	{"cuLaunchCooperativeKernel", (void *)agent_w_coop, (void **)&real_coop},
	{"cuLaunchCooperativeKernel_ptsz", (void *)agent_w_coop_ptsz, (void **)&real_coop_ptsz},
	{"cuLaunchKernelEx", (void *)agent_w_launch_ex, (void **)&real_launch_ex},
	{"cuLaunchKernelEx_ptsz", (void *)agent_w_launch_ex_ptsz, (void **)&real_launch_ex_ptsz},
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
