/* SPDX-License-Identifier: MIT */
/*
 * agent_mem_hook.c - what connects agent_mem.c to the process: the
 * settings `gpuext run --mem-budget` put in the environment, the wrapped
 * cuMemAllocManaged / cuMemFree, and the statistics file at exit.  Without
 * GPUEXT_MEM_BUDGET nothing here does anything: the wrappers pass through.
 */
#include <stdio.h>
#include <stdlib.h>

#include "agent.h"
#include "agent_impl.h"
#include "agent_mem.h"
#include "agent_mem_signal.h"
#include "agent_wrap.h"

/* The wrappers are agent_wrap.h's MEM rows (pass-through without a policy). */
void agent_mem_hook_alloc(CUdeviceptr va, size_t len)
{
	if (agent_mem_active()) {
		agent_mem_alloc((uint64_t)va, len);
		agent_mem_signal_window_changed();
	}
}

void agent_mem_hook_free(CUdeviceptr va)
{
	if (agent_mem_active())
		agent_mem_free((uint64_t)va);
}

static void *agent_mem_resolve(const char *name, void *real)
{
	return agent_wrap_resolve(AGENT_WRAP_MEM, name, real);
}

/* The driver's functions, looked up at first use (libcuda is loaded late). */
#define AGENT_MEM_DRIVER(name, sym, params, args)                                 \
	static CUresult name params                                               \
	{                                                                         \
		static CUresult(*f) params;                                       \
		if (!f)                                                           \
			*(void **)&f = agent_real_driver(sym);                    \
		return f ? f args : CUDA_ERROR_NOT_FOUND;                         \
	}
AGENT_MEM_DRIVER(drv_prefetch, "cuMemPrefetchAsync_v2",
		 (CUdeviceptr va, size_t len, CUmemLocation loc, unsigned flags, CUstream s),
		 (va, len, loc, flags, s))
AGENT_MEM_DRIVER(drv_stream_create, "cuStreamCreate", (CUstream *s, unsigned flags), (s, flags))
AGENT_MEM_DRIVER(drv_ctx_set, "cuCtxSetCurrent", (CUcontext c), (c))
AGENT_MEM_DRIVER(drv_ctx_get, "cuCtxGetCurrent", (CUcontext *c), (c))
AGENT_MEM_DRIVER(drv_ctx_device, "cuCtxGetDevice", (CUdevice *d), (d))

/* The statistics, "name value" lines (what `gpuext run` prints). */
static void agent_mem_atexit(void)
{
	struct agent_mem_stats st;
	const char *path = getenv(AGENT_MEM_STATS_ENV);

	const char *trace = getenv(AGENT_MEM_TRACE_ENV);
	struct err e = {{0}};

	agent_cupti_flush();
	agent_mem_flush();
	agent_mem_async_hints(0); /* hints still queued are of no use now */
	agent_mem_stats_get(&st);
	if (trace && *trace && agent_mem_trace_write(trace, &e))
		agent_notice("memory policy: trace not written: %s", e.msg);
	FILE *f = path && *path ? fopen(path, "w") : NULL;
	if (!f)
		return;
#define AGENT_MEM_STAT(x) fprintf(f, #x " %llu\n", (unsigned long long)st.x);
	AGENT_MEM_STATS(AGENT_MEM_STAT)
#undef AGENT_MEM_STAT
	fclose(f);
}

/* After agent_attach (102); before agent_cupti_init (104) starts CUPTI,
 * which asks agent_mem_active whether unified-memory records are wanted.
 * The atexit handler is registered before any of CUPTI's, so it runs after
 * CUPTI's last flush has delivered every record. */
__attribute__((constructor(103))) static void agent_mem_init(void)
{
	const char *budget = getenv(AGENT_MEM_BUDGET_ENV);
	struct agent_mem_driver drv = {drv_prefetch, drv_stream_create, drv_ctx_set, drv_ctx_get,
				       drv_ctx_device, agent_notice};
	struct err e = {{0}};

	if (!budget || !*budget)
		return;
	if (agent_mem_setup(strtoull(budget, NULL, 0), getenv(AGENT_MEM_POLICY_ENV), &drv, &e)) {
		agent_notice("memory policy disabled, the application runs without it: %s", e.msg);
		return;
	}
	if (agent_hook_register(agent_mem_resolve)) {
		agent_notice("memory policy disabled: too many hook resolvers");
		agent_mem_teardown();
		return;
	}
	const char *trace = getenv(AGENT_MEM_TRACE_ENV);
	agent_mem_trace(trace && *trace);
	const char *async = getenv(AGENT_MEM_ASYNC_ENV);
	agent_mem_async_hints(async && *async == '1');
	atexit(agent_mem_atexit);
}
