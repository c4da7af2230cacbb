/* SPDX-License-Identifier: MIT */
/*
 * agent_tier.c - the form a kernel's mem probes take, and tiers.
 *
 * Pasted, the program's block goes before each access (no call: the
 * fastest kernel), and ptxas compiles one copy per access: memtrace's
 * 13 KiB block at reduce's six accesses is a 230-440 ms compile on the
 * H200, longer than a small application takes from its start to its first
 * launch, so the compile ahead cannot hide it.  Called, the block is one
 * function that every access calls: a third to a half of that compile, a
 * slower kernel.  So a kernel whose pasted form is predicted slow
 * (AGENT_TIER_EXTRA_MIN bytes more PTX than the called form) gets the called form at its
 * first launch (compiled ahead like any other), and its first launch queues
 * the pasted form's compile on the background thread (agent_ahead.c): a
 * context-independent library (cuLibraryLoadData), then, in the launches'
 * context, its module with the map table filled and the function.  The
 * first launch after that runs the pasted form, and every one after: same
 * probes, same maps, same launch id parameter (the kernel's parameters
 * decide it), only the code of the accesses differs.  The compile is not
 * queued before the first launch: an nvcc build for another GPU has the
 * driver compile the application's own PTX just before that launch, and
 * two compiles in one process take 1.7-2.1x one each (measured, s4).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "agent_device.h"
#include "agent_jit.h"
#include "agent_tier.h"
#include "ptx/ptx_inject.h"
#include "ptx/ptx_rt.h"

/*
 * The limit: AGENT_MEM_INLINE_MAX, measured (docs/ptx-inject.md, "Mem
 * probes inline"); none for a program with local memory (ptxas gives each
 * copy a frame of its own).  GPUEXT_PTX_MEM_INLINE=1 pastes whatever the
 * size (a copy of the program an access), =loop likewise with a copy a
 * region of accesses (agent_mem_run_loop), =0 calls everywhere, to
 * compare them in one build.
 */
#define AGENT_MEM_INLINE_MAX (128u << 10)

size_t agent_mem_inline_max(int local)
{
	const char *v = getenv("GPUEXT_PTX_MEM_INLINE");
	if (v && (!strcmp(v, "1") || !strcmp(v, "loop")))
		return SIZE_MAX;
	if (v && !strcmp(v, "0"))
		return 0;
	return local ? 0 : AGENT_MEM_INLINE_MAX;
}

int agent_mem_run_loop(void)
{
	const char *v = getenv("GPUEXT_PTX_MEM_INLINE");
	return v && !strcmp(v, "loop");
}

int agent_mem_wait(void)
{
	const char *v = getenv("GPUEXT_PTX_MEM_WAIT");
	return v && !strcmp(v, "1") ? 1 : v && !strcmp(v, "0") ? -1 : 0;
}

int agent_mem_simt(void)
{
	const char *v = getenv("GPUEXT_PTX_MEM_SIMT");
	return !(v && !strcmp(v, "0"));
}

unsigned agent_mem_agg(void)
{
	const char *v = getenv("GPUEXT_PTX_MEM_AGG");
	char *end = NULL;
	unsigned long n = v && *v ? strtoul(v, &end, 10) : AGENT_MEM_AGG_MIN;
	return end && *end ? AGENT_MEM_AGG_MIN : n > 64 ? 64 : (unsigned)n; /* 64: nowhere */
}

unsigned agent_mem_unroll(void)
{
	const char *v = getenv("GPUEXT_PTX_UNROLL");
	return v && !strcmp(v, "0") ? 0 : v && !strcmp(v, "2") ? 2 : v && !strcmp(v, "8") ? 8 : 4;
}

int agent_mem_unroll_in_order(void)
{
	const char *v = getenv("GPUEXT_PTX_UNROLL_ORDER");
	return v && !strcmp(v, "turns");
}

int agent_flat_twin(void)
{
	const char *v = getenv("GPUEXT_PTX_FLAT");
	return !(v && !strcmp(v, "0"));
}

int agent_elect_sync(void)
{
	const char *v = getenv("GPUEXT_PTX_ELECT");
	const struct ptx_rt *rt = agent_gpu0();
	if ((v && !strcmp(v, "0")) || !rt || rt->cc_major * 10 + rt->cc_minor < PTX_ELECT_SYNC_SM)
		return 0;
	return v && !strcmp(v, "all") ? PTX_ELECT_SYNC_ALL : PTX_ELECT_SYNC_OUT_OF_LOOPS;
}

/*
 * What pasting adds to the module's PTX (the pasted form's text minus the
 * called form's) from which the pasted form is predicted slow to compile:
 * ptxas (sm_90) on memtrace's forms, pasted / called: reduce 38.7 / 12.4
 * KB, 114 / 58 ms; gemm 21.7 / 11.0 KB, 56 / 53 ms; vecadd 17.8 / 7.8 KB,
 * 46 / 44 ms (since mem sites run per region); before that, reduce 84 /
 * 20 KB, 220 / 115 ms, a 230-440 ms compile on the H200, and gemm 44 / 18
 * KB, one that missed 20 ms on the sm_90 build.  A kernel's own size
 * weighs less than what is pasted into it: it is in both forms.
 * GPUEXT_AGENT_TIER=1 tiers every pasted form, =0 none.
 */
#define AGENT_TIER_EXTRA_MIN (16u << 10)

int agent_tier_on(void)
{
	const char *v = getenv("GPUEXT_AGENT_TIER");
	return !(v && !strcmp(v, "0")) && !getenv("GPUEXT_PTX_MEM_INLINE");
}

int agent_tier_slow(size_t pasted_len, size_t called_len)
{
	const char *v = getenv("GPUEXT_AGENT_TIER");
	if (v && !strcmp(v, "1"))
		return 1;
	return pasted_len >= called_len + AGENT_TIER_EXTRA_MIN;
}

static pthread_mutex_t agent_tier_lock = PTHREAD_MUTEX_INITIALIZER;
static struct agent_tier *agent_tiers;

/* The pasted form's function in t->ctx, from its library (on the
 * background thread, which makes t->ctx current for it): 0 or -errno. */
static int agent_tier_function(struct agent_tier *t, struct err *e)
{
	const struct cu_driver *cu = agent_gpu.rt->cu;
	struct agent_timing tm = {0};
	CUmodule mod = NULL;
	CUfunction fn = NULL;
	cu->ctx_set_current(t->ctx);
	int err = agent_jit_load(t->text, 0, &mod, &tm, e);
	if (!err && !mod)
		err = err_set(e, ENOENT, "its library has no module in the context");
	if (!err)
		err = agent_map_table_fill(mod, t->text, e);
	CUresult r = err ? CUDA_SUCCESS : cu->module_get_function(&fn, mod, t->kernel);
	if (r != CUDA_SUCCESS)
		err = cu_err(cu, e, r, "cuModuleGetFunction on the pasted form");
	cu->ctx_set_current(NULL);
	if (!err)
		__atomic_store_n(&t->fn, fn, __ATOMIC_RELEASE);
	return err;
}

/* The background thread's job: compile t's library, then, when a launch
 * runs the called form, make the pasted form's function for it. */
static void agent_tier_compile(void *arg)
{
	struct agent_tier *t = arg;
	struct err e = {{0}};
	double ms = 0;
	int err = agent_ahead_lib_compile(t->text, &ms, &e);
	pthread_mutex_lock(&agent_tier_lock);
	t->ms = ms;
	/* at exit the application's context may be gone: nothing to make */
	int wanted = !err && t->ctx && __atomic_load_n(&agent_gpu.rt, __ATOMIC_ACQUIRE) &&
		     !agent_ahead_stopping();
	__atomic_store_n(&t->state, err ? AGENT_TIER_FAILED : AGENT_TIER_BUILT, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&agent_tier_lock);
	if (wanted && (err = agent_tier_function(t, &e)))
		__atomic_store_n(&t->state, AGENT_TIER_FAILED, __ATOMIC_RELEASE);
	if (err && getenv("GPUEXT_AGENT_VERBOSE"))
		agent_notice("kernel %s: its pasted mem probes failed to compile in the background, "
			     "the called ones stay: %s", t->kernel, e.msg);
}

struct agent_tier *agent_tier_want(char *text, const char *kernel, CUcontext ctx,
				   enum agent_tier_state *state)
{
	struct agent_tier *t;
	pthread_mutex_lock(&agent_tier_lock);
	for (t = agent_tiers; t && strcmp(t->text, text); t = t->next)
		;
	if (t) {
		free(text);
	} else if ((t = calloc(1, sizeof(*t))) && (t->kernel = strdup(kernel))) {
		t->text = text;
		t->next = agent_tiers;
		agent_tiers = t;
	} else {
		free(t);
		free(text);
		t = NULL;
	}
	if (t && ctx && !t->ctx)
		t->ctx = ctx;
	if (t)
		*state = __atomic_load_n(&t->state, __ATOMIC_ACQUIRE);
	pthread_mutex_unlock(&agent_tier_lock);
	return t;
}

void agent_tier_start(struct agent_tier *t)
{
	pthread_mutex_lock(&agent_tier_lock);
	int queue = !t->queued;
	t->queued = 1;
	pthread_mutex_unlock(&agent_tier_lock);
	if (queue && agent_ahead_call(agent_tier_compile, t))
		__atomic_store_n(&t->state, AGENT_TIER_FAILED, __ATOMIC_RELEASE);
}

void agent_tier_take(struct agent_kernel *k, struct agent_tier *t)
{
	CUfunction fn = __atomic_load_n(&t->fn, __ATOMIC_ACQUIRE);
	if (fn) {
		/* kernels with mem probes have no flat twin (ptx_inject.h) */
		__atomic_store_n(&k->inst_flat, NULL, __ATOMIC_RELEASE);
		__atomic_store_n(&k->inst, fn, __ATOMIC_RELEASE);
		__atomic_store_n(&k->tier, NULL, __ATOMIC_RELEASE);
		if (!__atomic_exchange_n(&t->told, 1, __ATOMIC_ACQ_REL) &&
		    getenv("GPUEXT_AGENT_VERBOSE"))
			agent_notice("kernel %s: mem probes pasted from launch %lu on (compiled in "
				     "the background, %.1f ms)", t->kernel,
				     __atomic_load_n(&t->called_launches, __ATOMIC_RELAXED) + 2,
				     t->ms);
	} else if (__atomic_load_n(&t->state, __ATOMIC_ACQUIRE) == AGENT_TIER_FAILED) {
		__atomic_store_n(&k->tier, NULL, __ATOMIC_RELEASE);
	} else {
		__atomic_add_fetch(&t->called_launches, 1, __ATOMIC_RELAXED);
	}
}
