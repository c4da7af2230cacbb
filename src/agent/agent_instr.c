/* SPDX-License-Identifier: MIT */
/*
 * agent_instr.c - lazy instrumentation.
 *
 * At the first launch of a kernel that a GPU program targets: extract its
 * module's PTX (fatbins: the best PTX for the device, parsed in process),
 * inject the probes of the programs that target it (agent_probes.c), load
 * the result in the current context (agent_jit.c) and launch that function
 * instead from then on.  Results are cached by content hash (module PTX,
 * kernel, probe code), so a module loaded twice is compiled once; the
 * compiles ahead of the first launch (agent_ahead.c) leave theirs there.
 * Any failure: one notice naming the kernel and the reason, and the kernel
 * runs unchanged (fail-open).  The device side it needs (the context, the
 * device maps) is agent_device.c's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "agent_device.h"
#include "agent_impl.h"
#include "agent_jit.h"
#include "agent_mem_signal.h"
#include "agent_probes.h"
#include "agent_tier.h"
#include "cuda/fatbin.h"
#include "ptx/ptx_inject.h"
#include "ptx/ptx_rt.h"

struct agent_cached {
	struct agent_cached *next;
	uint64_t hash;
	CUcontext ctx;
	CUfunction fn;
	CUfunction fn_flat; /* fn's twin for flat launches, or NULL */
	struct ptx_launch_param lid; /* fn's launch id parameter */
	/* made ahead of the first launch (agent_ahead.c) and not yet claimed by
	 * a launch: what the launch says then (the JIT time, what the module
	 * cache did, or why it failed) */
	int ahead;
	double jit;
	const char *cache;
	char *msg;
	struct agent_tier *tier; /* fn is the called form until this is ready */
};
static struct agent_cached *agent_cache;

static uint64_t agent_hash(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull; /* FNV-1a */
	return h;
}

/* ---- building the instrumented module ---------------------------------- */

int agent_next_entry(const char **at, char *name, size_t len)
{
	for (const char *p; (p = strstr(*at, ".entry ")); *at = p + 7) {
		const char *q = p + 7;
		while (*q == ' ' || *q == '\t')
			q++;
		size_t n = strcspn(q, "( \t\r\n");
		if (!n || !q[n] || n >= len)
			continue;
		memcpy(name, q, n);
		name[n] = '\0';
		*at = q + n;
		return 1;
	}
	return 0;
}

/* Does ptx define kernel name? */
static int agent_defines(const char *ptx, const char *name)
{
	char found[512];
	for (const char *at = ptx; agent_next_entry(&at, found, sizeof(found));)
		if (!strcmp(found, name))
			return 1;
	return 0;
}

static const char *agent_module_ptx(struct agent_module *m, const char *kernel, struct err *e)
{
	if (m->kind == AGENT_IMAGE_LINKED) {
		for (size_t i = 0; i < m->input_cnt; i++)
			if (agent_defines(m->inputs[i], kernel))
				return m->inputs[i];
		err_set(e, ENOENT, "no PTX input of the link defines it");
		return NULL;
	}
	if (m->ptx)
		return m->ptx;
	unsigned sm = (unsigned)(agent_gpu0()->cc_major * 10 + agent_gpu0()->cc_minor);
	size_t len;
	switch (m->kind) {
	case AGENT_IMAGE_PTX:
		return m->ptx = strdup(m->image);
	case AGENT_IMAGE_WRAPPER:
	case AGENT_IMAGE_FATBIN:
		if (fatbin_best_ptx(m->image,
				    m->kind == AGENT_IMAGE_WRAPPER ? FATBIN_LEN_UNKNOWN : m->image_len,
				    sm, &m->ptx, &len, NULL, e))
			return NULL;
		return m->ptx;
	case AGENT_IMAGE_CUBIN:
		err_set(e, ENOENT, "no PTX in the image (SASS-only cubin); for NVRTC-compiled "
			"kernels (CuPy), compile to PTX (CUPY_COMPILE_WITH_PTX=1)");
		return NULL;
	default:
		err_set(e, ENOENT, "no PTX captured (module loaded from a file)");
		return NULL;
	}
}


/* GPUEXT_AGENT_NO_PROBES: the kernel goes through all of this with no probe
 * in it, the baseline of bench/gpu_overhead.sh (what the recompilation of
 * the kernel's PTX costs, apart from the probes). */
static int agent_no_probes(void)
{
	return getenv("GPUEXT_AGENT_NO_PROBES") != NULL;
}

/* GPUEXT_BLOCK_EXIT_COUNTED: block_exit programs find the block's last
 * exit with the shared counter even where the barrier would do
 * (ptx_inject_opts), to compare the two in one build
 * (bench/gpu_tools_overhead.sh). */
static int agent_block_exit_counted(void)
{
	return getenv("GPUEXT_BLOCK_EXIT_COUNTED") != NULL;
}

/* Inject pr into kernel's module pm: *text (malloc'd), whether the mem
 * probes were pasted (*inlined), at how many accesses (*sites) and in how
 * many regions (*regions, when not NULL), the bytes that weigh less than
 * the probes' copies (*light, when not NULL): the kernel code its unrolled
 * loops add and what combining the lanes' reductions adds; whether the
 * kernel has a flat twin (*flat, when not NULL: asked for only then). */
static int agent_inject(const struct ptx_module *pm, const char *kernel,
			const struct agent_probes *pr, char **text, int *inlined, size_t *sites,
			size_t *regions, size_t *light, int *flat, struct ptx_launch_param *lid,
			struct agent_timing *tm, struct err *e)
{
	int bare = agent_no_probes();
	size_t agg = 0;
	struct ptx_inject_opts o = {.kernel = kernel,
				    .entry_code = bare ? NULL : pr->site[AGENT_ENTRY],
				    .exit_code = bare ? NULL : pr->site[AGENT_EXIT],
				    .block_entry_code = bare ? NULL : pr->site[AGENT_BLOCK_ENTRY],
				    .block_exit_code = bare ? NULL : pr->site[AGENT_BLOCK_EXIT],
				    .block_exit_counted = agent_block_exit_counted(),
				    .block_arrays = bare ? NULL : pr->block_arrays,
				    .n_block_arrays = bare ? 0 : pr->n_block_arrays,
				    .mem_sym = pr->mem_sym[0] && !bare ? pr->mem_sym : NULL,
				    .mem_code = bare ? NULL : pr->site[AGENT_MEM],
				    .mem_func = bare ? NULL : pr->mem_func,
				    .mem_inline_max = pr->mem_inline_max,
				    .mem_run_loop = agent_mem_run_loop() || pr->mem_run_loop,
				    .mem_simt = agent_mem_simt(),
				    .mem_agg = agent_mem_agg(),
				    .mem_unroll = agent_mem_unroll(),
				    .mem_unroll_in_order = agent_mem_unroll_in_order(),
				    .mem_unrolled_bytes = light,
				    .mem_agg_bytes = &agg,
				    .mem_wait = agent_mem_wait(),
				    .elect_sync = agent_elect_sync(),
				    .flat_twin = flat && !bare && agent_flat_twin(),
				    .flat_made = flat,
				    .mem_inlined = inlined, .mem_sites = sites,
				    .mem_regions = regions,
				    .extra = bare ? NULL : pr->extra,
				    .min_version_major = 7, .min_version_minor = 8,
				    /* each instrumented kernel gets a module of its own:
				     * the driver need not compile the others */
				    .only_kernel = 1,
				    /* a variable it uses would be a second copy */
				    .no_variables = 1,
				    /* every instrumented kernel takes its launch's id */
				    .launch_param = lid};
	struct timespec t0;
	size_t len;
	*inlined = 0;
	*sites = 0;
	*text = NULL;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int err = ptx_inject(pm, &o, text, &len, e);
	tm->inject += agent_ms_since(&t0);
	if (light)
		*light += agg;
	return err;
}

/* Load text, made from pr (linked with the prebuilt runtime when linked),
 * and fill its map table; with no device side yet (compiles ahead with no
 * context) only compiled, *mod NULL. */
static int agent_load(const char *text, const struct agent_probes *pr, int linked, CUmodule *mod,
		      struct agent_timing *tm, struct err *e)
{
	int bare = agent_no_probes();
	double jit0 = tm->jit;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int err = agent_jit_load(text, linked && !bare, mod, tm, e);
	if (err && !bare && pr->n_block_arrays)
		/* most likely the kernel's shared memory plus the arrays' is over
		 * the block's limit: say how much was added */
		err_prefix(e, "with %zu block-local array(s) of %u bytes and the block record's %u "
			   "added to its static shared memory: ", pr->n_block_arrays,
			   pr->block_bytes, PTX_BLOCK_RECORD_BYTES);
	if (!err && !bare && *mod && (err = agent_map_table_fill(*mod, text, e)))
		agent_gpu.rt->cu->module_unload(*mod);
	tm->load += agent_ms_since(&t0) - (tm->jit - jit0);
	return err;
}

/* Inject pr into kernel's module pm and load the result (linked with the
 * prebuilt runtime when pr says so); with no device side yet (compiles
 * ahead with no context) only compiled, *mod NULL. */
static int agent_inject_load(const struct ptx_module *pm, const char *kernel,
			     const struct agent_probes *pr, CUmodule *mod, int *flat,
			     struct ptx_launch_param *lid, struct agent_timing *tm, struct err *e)
{
	char *text;
	int inlined;
	size_t sites, regions = 0;
	int err = agent_inject(pm, kernel, pr, &text, &inlined, &sites, &regions, NULL, flat, lid,
			       tm, e);
	if (err)
		return err;
	size_t bytes = strlen(pr->site[AGENT_MEM] ? pr->site[AGENT_MEM] : "");
	if (pr->mem_sym[0] && !agent_no_probes() && inlined)
		snprintf(tm->mem, sizeof(tm->mem),
			 ", mem probes inline at %zu accesses in %zu regions (%zu bytes%s)", sites,
			 regions, bytes, pr->mem_run_loop ? ", a loop a region" : "");
	else if (pr->mem_sym[0] && !agent_no_probes())
		snprintf(tm->mem, sizeof(tm->mem), ", mem probes called at %zu accesses (%zu bytes)",
			 sites, bytes);
	err = agent_load(text, pr, pr->linked, mod, tm, e);
	free(text);
	return err;
}

/*
 * Tiers (agent_tier.c) for pr on kernel name of pm: when its mem probes
 * would be pasted and that form is predicted slow to compile, a copy a
 * region (a loop over its accesses: pr->mem_run_loop) goes first where
 * that form is not predicted slow, else the called form (pr->mem_inline_max
 * 0), and, in context ctx, *tier is the pasted form's, its compile queued;
 * unless that compile is done already
 * (for another handle, or an earlier load of the module): then *pasted is
 * its text, to load as it is (*lid its launch parameter).  With no context
 * (compiles ahead) the called form only: the first launch queues the
 * pasted one.  Anything failing here leaves the usual path to say it.
 */
static void agent_tier_choose(const struct ptx_module *pm, const char *name,
			      struct agent_probes *pr, CUcontext ctx, struct agent_tier **tier,
			      const char **pasted, struct ptx_launch_param *lid,
			      struct agent_timing *tm)
{
	struct agent_probes own;
	const struct agent_probes *p = pr;
	struct ptx_launch_param lid2 = {0};
	struct err e = {{0}};
	enum agent_tier_state state;
	char *text = NULL;
	int inlined = 0;
	size_t sites, unrolled = 0;

	*tier = NULL;
	*pasted = NULL;
	if (!pr->mem_sym[0] || !pr->mem_inline_max || agent_no_probes() || !agent_tier_on())
		return;
	/* the pasted form goes to a library, which links nothing: the runtime
	 * functions compiled in */
	if (pr->linked) {
		if (agent_build_probes(name, 0, &own, &e))
			return;
		p = &own;
	}
	/* both forms' text: what pasting adds is the predictor */
	struct agent_probes called = *p; /* a view: p keeps what it points to */
	struct ptx_launch_param lid_called = {0};
	char *called_text = NULL;
	int called_inlined;
	called.mem_inline_max = 0;
	int err = agent_inject(pm, name, p, &text, &inlined, &sites, NULL, &unrolled, NULL, &lid2,
			       tm, &e);
	if (!err && inlined)
		err = agent_inject(pm, name, &called, &called_text, &called_inlined, &sites, NULL,
				   NULL, NULL, &lid_called, tm, &e);
	/* a loop's turns unrolled (ptx_unroll.h) are the kernel's own code,
	 * which weighs less than the probes': reduce's 4 turns, 29 ms of ptxas
	 * where the loop as written takes 21 (sm_90, the build machine); the
	 * lanes' reductions combined (ptx_agg.h) are 1.9 KB more text for
	 * reduce, 45 -> 52 ms of ptxas there, and counted they tip it over
	 * the limit (its measured launches would run the called form at 6x
	 * where the combining gains 1.44x -> 1.06x; its first launch, compiled
	 * ahead, adds 11 ms, 15 without: first_launch.sh on the H200) */
	int slow = !err && inlined && agent_tier_slow(strlen(text) - unrolled, strlen(called_text));
	/* reduce's 4 loads a loop turn (6 accesses in 3 regions): a copy an
	 * access adds 5 x memtrace's ~6 KB block, a tier; a copy a region 2 x,
	 * none, and the called form ran 6x the plain kernel where the pasted
	 * ones run ~2x (H200, bench/results/2026-11-22-h200-mem-wrap-s6.md) */
	int loop = 0;
	if (slow && !agent_mem_run_loop()) {
		struct agent_probes looped = *p;
		struct ptx_launch_param lid_loop = {0};
		char *loop_text = NULL;
		int loop_inlined = 0;
		looped.mem_run_loop = 1;
		if (!agent_inject(pm, name, &looped, &loop_text, &loop_inlined, &sites, NULL,
				  &unrolled, NULL, &lid_loop, tm, &e) && loop_inlined)
			loop = !agent_tier_slow(strlen(loop_text) - unrolled, strlen(called_text));
		free(loop_text);
	}
	free(called_text);
	if (p == &own)
		agent_probes_free(&own);
	if (!slow) {
		free(text);
		return;
	}
	if (loop)
		pr->mem_run_loop = 1;
	else
		pr->mem_inline_max = 0;
	if (!ctx) {
		free(text);
		return;
	}
	struct agent_tier *t = agent_tier_want(text, name, ctx, &state);
	if (t && state == AGENT_TIER_BUILT) {
		*pasted = t->text;
		*lid = lid2;
	} else if (t && state == AGENT_TIER_COMPILING) {
		*tier = t;
	}
}

/* Instrument kernel name of ptx in context ctx (current): the new function
 * or NULL (e set), *flat its twin for flat launches or NULL; *hit set to
 * the cache entry when it was there already; *tier when the function is
 * the called form of mem probes whose pasted form compiles in the
 * background (agent_tier.h). */
static CUfunction agent_instrument_ptx(const char *ptx, const char *name, CUcontext ctx,
				       struct agent_cached **hit, CUfunction *flat,
				       struct ptx_launch_param *lid, struct agent_tier **tier,
				       struct agent_timing *tm, struct err *e)
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct agent_probes pr;
	CUfunction fn = NULL;
	*flat = NULL;
	tm->flat = 0;
	/* GPUEXT_AGENT_NO_LINK: the runtime's text compiled with every module
	 * (what linking saves, measured by bench/gpu_overhead.sh's callers);
	 * compiles with no context can link nothing: there too */
	if (agent_build_probes(name, !getenv("GPUEXT_AGENT_NO_LINK") && !agent_ahead_no_context(),
			       &pr, e))
		return NULL;
	uint64_t hash = agent_hash(agent_hash(0xcbf29ce484222325ull, ptx), name);
	hash = agent_hash(hash, pr.extra);
	for (int i = 0; i < AGENT_SITES; i++)
		hash = agent_hash(hash, pr.site[i] ? pr.site[i] : "-");
	hash = agent_hash(hash, pr.mem_func ? pr.mem_func : "-");
	char max[96];
	snprintf(max, sizeof(max), "%zu%s wait %d simt %d agg %u unroll %u%s", pr.mem_inline_max,
		 agent_mem_run_loop() ? " loop" : "", agent_mem_wait(), agent_mem_simt(),
		 agent_mem_agg(), agent_mem_unroll(), agent_mem_unroll_in_order() ? " in order" : "");
	hash = agent_hash(hash, max);
	hash = agent_hash(hash, agent_no_probes() ? "bare" : "-");
	hash = agent_hash(hash, agent_block_exit_counted() ? "exit-counted" : "-");
	hash = agent_hash(hash, agent_flat_twin() ? "flat" : "-");
	for (struct agent_cached *c = agent_cache; c; c = c->next)
		if (c->hash == hash && c->ctx == ctx) {
			agent_probes_free(&pr);
			*hit = c;
			*lid = c->lid;
			*tier = c->tier;
			*flat = c->fn_flat;
			return c->fn;
		}
	struct ptx_module *pm = NULL;
	CUmodule mod = NULL;
	const char *pasted;
	int err = ptx_parse(ptx, strlen(ptx), &pm, e);
	tm->inject = agent_ms_since(&t0);
	*tier = NULL;
	if (!err)
		agent_tier_choose(pm, name, &pr, ctx, tier, &pasted, lid, tm);
	if (!err && pasted && !agent_load(pasted, &pr, 0, &mod, tm, e)) {
		/* compiled in the background for another handle or load */
		snprintf(tm->mem, sizeof(tm->mem), ", mem probes inline, compiled in the background");
		tm->runtime = "runtime compiled";
	} else if (!err && (err = agent_inject_load(pm, name, &pr, &mod, &tm->flat, lid, tm, e)) &&
		   pr.linked &&
		   !agent_no_probes()) {
		/* the prebuilt runtime has no code for this GPU, or anything
		 * else on the linked path failed: once more with the runtime
		 * functions' text compiled with the kernel */
		agent_probes_free(&pr);
		err = agent_build_probes(name, 0, &pr, e);
		if (!err)
			err = agent_inject_load(pm, name, &pr, &mod, &tm->flat, lid, tm, e);
		tm->runtime = "runtime compiled, linking failed";
	} else if (!err) {
		/* runtime functions compiled in: the small ones when linked, all
		 * the used ones when not (nvcc's header of every runtime .func) */
		int compiled = strstr(pr.extra, ".func  (.param .b64 func_retval0) gx_rt_") != NULL;
		tm->runtime = agent_no_probes() ? "no probes"
			      : pr.linked && compiled ? "runtime linked, small functions compiled"
			      : pr.linked   ? "runtime linked"
			      : compiled    ? "runtime compiled"
					    : "no runtime";
		if (*tier && strlen(tm->mem) + 40 < sizeof(tm->mem))
			strcat(tm->mem, ", pasted form compiling in the background");
	}
	if (err)
		*tier = NULL;
	else if (*tier) /* the called form loaded: the compiler is (agent_tier_start) */
		agent_tier_start(*tier);
	if (!err && mod) {
		CUresult r = agent_gpu.rt->cu->module_get_function(&fn, mod, name);
		if (r != CUDA_SUCCESS) {
			cu_err(agent_gpu.rt->cu, e, r, "cuModuleGetFunction on the instrumented module");
			agent_gpu.rt->cu->module_unload(mod);
			fn = NULL;
		} else if (tm->flat) {
			/* no twin: every launch takes the general form */
			char twin[600];
			if (snprintf(twin, sizeof(twin), "%s%s", name, PTX_FLAT_SUFFIX) <
				    (int)sizeof(twin) &&
			    agent_gpu.rt->cu->module_get_function(flat, mod, twin) != CUDA_SUCCESS)
				*flat = NULL;
		}
	}
	/* failures are cached too: the kernel's other handles run unchanged
	 * (compiles with no context, ctx NULL: in the module cache) */
	struct agent_cached *c = ctx ? malloc(sizeof(*c)) : NULL;
	if (c) {
		*c = (struct agent_cached){.next = agent_cache, .hash = hash, .ctx = ctx, .fn = fn,
					   .fn_flat = fn ? *flat : NULL, .lid = *lid, .tier = fn ? *tier : NULL,
					   .jit = tm->jit, .cache = tm->cache,
					   .msg = fn ? NULL : strdup(e->msg)};
		agent_cache = c;
	}
	ptx_module_free(pm);
	agent_probes_free(&pr);
	return fn;
}

/* Instrument k in the current context: the new function or NULL (e set);
 * *hit set to the cache entry when an earlier handle of the same kernel, or
 * the work ahead of the launch, did it already. */
static CUfunction agent_instrument(struct agent_kernel *k, CUcontext ctx, struct agent_cached **hit,
				   struct agent_timing *tm, struct err *e)
{
	const char *ptx = agent_module_ptx(k->module, k->name, e);
	struct agent_tier *tier = NULL;
	CUfunction flat = NULL;
	CUfunction fn = ptx ? agent_instrument_ptx(ptx, k->name, ctx, hit, &flat, &k->lid, &tier,
						   tm, e)
			    : NULL;
	__atomic_store_n(&k->inst_flat, fn ? flat : NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&k->tier, fn ? tier : NULL, __ATOMIC_RELEASE);
	return fn;
}

/* Is this the first failure for a kernel of this name?  (One notice per
 * kernel, however many handles, modules or contexts it has.) */
static int agent_first_failure(const char *name)
{
	static uint64_t seen[256];
	static size_t seen_cnt;
	uint64_t h = agent_hash(0xcbf29ce484222325ull, name);
	for (size_t i = 0; i < seen_cnt; i++)
		if (seen[i] == h)
			return 0;
	if (seen_cnt < sizeof(seen) / sizeof(seen[0]))
		seen[seen_cnt++] = h;
	return 1;
}

/* GPUEXT_AGENT_VERBOSE: where k's first launch's time went (t0: its start),
 * and how long before it the module and the handle were there (the time
 * there was to instrument ahead of the launch). */
static void agent_tell_first_launch(const struct agent_kernel *k, const struct agent_timing *tm,
				    const struct timespec *t0)
{
	agent_notice("kernel %s instrumented (device side %.1f, parse+inject %.1f, JIT %.1f, "
		     "load %.1f, %s%s%s, %s; %.1f ms)", k->name, tm->init, tm->inject, tm->jit,
		     tm->load, tm->runtime, tm->mem, tm->flat ? ", a flat twin" : "", tm->cache,
		     agent_ms_since(t0));
	agent_notice("kernel %s: module loaded %.1f ms, handle made %.1f ms before its first "
		     "launch", k->name, agent_ms_between(&k->module->loaded, t0),
		     agent_ms_between(&k->made, t0));
}

/* The first launch of k found it instrumented ahead (c): say so, as its own
 * instrumentation would have (waited: how long the launch waited). */
static void agent_claim_ahead(const struct agent_kernel *k, struct agent_cached *c, double waited)
{
	c->ahead = 0;
	if (c->fn) {
		session_count(agent_session, SESSION_INSTRUMENTED);
		if (getenv("GPUEXT_AGENT_VERBOSE"))
			agent_notice("kernel %s instrumented (ahead of its first launch, JIT %.1f, "
				     "%s%s; %.1f ms)", k->name, c->jit, c->cache ? c->cache : "-",
				     c->fn_flat ? ", a flat twin" : "", waited);
	} else if (agent_first_failure(k->name)) {
		session_count(agent_session, SESSION_SKIPPED);
		agent_notice("kernel %s runs unchanged: %s", k->name, c->msg ? c->msg : "?");
	}
}

/* The launch of k with dims goes to g: k for the launch when g is its
 * instrumented function or that's flat twin (for a 1-D grid of 1-D blocks). */
static CUfunction agent_target(struct agent_kernel *k, CUfunction f, const unsigned dims[6],
			       struct agent_kernel **kout)
{
	CUfunction g = __atomic_load_n(&k->inst, __ATOMIC_ACQUIRE); /* agent_tier_take swaps it */
	CUfunction flat = __atomic_load_n(&k->inst_flat, __ATOMIC_ACQUIRE);
	*kout = g ? k : NULL;
	if (g && flat && dims[1] == 1 && dims[2] == 1 && dims[4] == 1 && dims[5] == 1)
		return flat;
	return g ? g : f;
}

/* Say once per kernel name (whatever its handles) that its launches carry
 * no id: the failures' set of names, under a key of its own. */
static void agent_tell_no_launch_id(const struct agent_kernel *k)
{
	char key[600];
	if (!k->inst || k->lid.added)
		return;
	snprintf(key, sizeof(key), "no launch id: %s", k->name);
	if (agent_first_failure(key))
		agent_notice("kernel %s: no launch id (%s): bpf_gpu_launch_id() gives 0", k->name,
			     k->lid.why ? k->lid.why : "?");
}

CUfunction agent_launch_target(CUfunction f, CUstream s, const unsigned dims[6],
			       struct agent_kernel **kout)
{
	agent_mem_signal_snapshot();
	struct agent_kernel *k = agent_kernel_find(f);
	*kout = NULL;
	if (!k)
		return f;
	if (__atomic_load_n(&k->decided, __ATOMIC_ACQUIRE)) {
		struct agent_tier *t = __atomic_load_n(&k->tier, __ATOMIC_ACQUIRE);
		if (t)
			agent_tier_take(k, t);
		return agent_target(k, f, dims, kout);
	}
	if (!agent_kernel_targeted(k->name)) {
		/* decided without the lock: never behind work in progress */
		__atomic_store_n(&k->decided, 1, __ATOMIC_RELEASE);
		return f;
	}
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_mutex_lock(&agent_gpu_lock);
	if (!k->decided) {
		struct err e = {{0}};
		/* relaxed capture mode: loading a module while this thread
		 * captures a stream is allowed then, and breaks nothing */
		CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
		int swapped = 0;
		if (!agent_gpu.tried)
			agent_gpu.capture_mode =
				(agent_capture_mode_fn)agent_real_driver("cuThreadExchangeStreamCaptureMode");
		if (agent_gpu.capture_mode)
			swapped = agent_gpu.capture_mode(&mode) == CUDA_SUCCESS;
		CUcontext ctx = NULL;
		struct agent_timing tm = {0};
		struct timespec t1;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		int ready = !agent_gpu_init(&e);
		tm.init = agent_ms_since(&t1);
		if (ready) {
			agent_gpu.ctx_get_current(&ctx);
			struct agent_cached *hit = NULL;
			/* the device maps live in GPU 0's primary context, made
			 * (maybe at process start, agent_ahead.c) before the
			 * application's own: another context fails open */
			k->inst = ctx == agent_gpu.rt->ctx ? agent_instrument(k, ctx, &hit, &tm, &e)
				  : (err_set(&e, ENOTSUP, "the application's context is not GPU 0's "
					     "primary context (the device maps' context)"), NULL);
			if (hit && hit->ahead) {
				agent_claim_ahead(k, hit, agent_ms_since(&t0));
			} else if (k->inst && !hit) {
				session_count(agent_session, SESSION_INSTRUMENTED);
				if (getenv("GPUEXT_AGENT_VERBOSE"))
					agent_tell_first_launch(k, &tm, &t0);
			} else if (!k->inst && agent_first_failure(k->name)) {
				session_count(agent_session, SESSION_SKIPPED);
				agent_notice("kernel %s runs unchanged: %s", k->name,
					     hit && hit->msg ? hit->msg : e.msg);
			}
		}
		if (swapped)
			agent_gpu.capture_mode(&mode);
		agent_tell_no_launch_id(k);
		__atomic_store_n(&k->decided, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&agent_gpu_lock);
	return agent_target(k, f, dims, kout);
}

/* Instrument kernel name of ptx ahead: 1 if a compile was done. */
static int agent_ahead_one(const char *ptx, const char *name, CUcontext ctx)
{
	struct err e = {{0}};
	struct agent_timing tm = {0};
	struct agent_cached *hit = NULL;
	struct timespec t0;
	int done = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_mutex_lock(&agent_gpu_lock);
	agent_gpu.rt->cu->ctx_set_current(agent_gpu.rt->ctx);
	const struct agent_cached *before = agent_cache;
	struct ptx_launch_param lid = {0}; /* kept in the cache entry for the launch */
	struct agent_tier *tier;
	CUfunction flat;
	CUfunction fn = agent_instrument_ptx(ptx, name, ctx, &hit, &flat, &lid, &tier, &tm, &e);
	if (!hit && agent_cache != before) { /* the entry just made: for the first launch */
		agent_cache->ahead = 1;
		done = 1;
		if (fn && getenv("GPUEXT_AGENT_VERBOSE"))
			agent_notice("kernel %s instrumented ahead of its first launch (parse+inject "
				     "%.1f, JIT %.1f, load %.1f, %s%s, %s; %.1f ms)", name, tm.inject,
				     tm.jit, tm.load, tm.runtime, flat ? ", a flat twin" : "", tm.cache,
				     agent_ms_since(&t0));
	}
	pthread_mutex_unlock(&agent_gpu_lock);
	return done;
}

int agent_instrument_ahead(struct agent_module *m, CUcontext ctx, int budget)
{
	struct err e = {{0}};
	char name[512];
	int done = 0;

	pthread_mutex_lock(&agent_gpu_lock);
	int ready = agent_is_primary(ctx) && !agent_gpu_init(&e);
	/* one module's PTX, or each PTX input of a link */
	const char *ptx = ready && m->kind != AGENT_IMAGE_LINKED ? agent_module_ptx(m, "", &e) : NULL;
	pthread_mutex_unlock(&agent_gpu_lock);
	for (size_t i = 0; ready && i < (m->kind == AGENT_IMAGE_LINKED ? m->input_cnt : 1); i++) {
		const char *text = m->kind == AGENT_IMAGE_LINKED ? m->inputs[i] : ptx;
		for (const char *at = text; text && done < budget &&
					    agent_next_entry(&at, name, sizeof(name));)
			if (agent_kernel_targeted(name))
				done += agent_ahead_one(text, name, ctx);
	}
	return done;
}

/* Compile kernel name of ptx as its first launch will want it, with no
 * context, into a library (agent_gpu_lock held; the launch path's own
 * functions, so that the text is the one the launch makes): 1 when done,
 * -errno (e set) if the driver would not. */
static int agent_noctx_one(const char *ptx, const char *name, struct err *e)
{
	struct agent_timing tm = {0};
	struct agent_cached *hit = NULL;
	struct timespec t0;
	struct ptx_launch_param lid = {0}; /* the launch finds it again in its own compile */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct agent_tier *tier;
	CUfunction flat;
	agent_instrument_ptx(ptx, name, NULL, &hit, &flat, &lid, &tier, &tm, e);
	if (!tm.cache) /* set once the library is made */
		return -EINVAL;
	if (getenv("GPUEXT_AGENT_VERBOSE"))
		agent_notice("kernel %s compiled ahead of its first launch, before any context "
			     "(parse+inject %.1f, JIT %.1f, %s%s, %s; %.1f ms)", name, tm.inject,
			     tm.jit, tm.runtime ? tm.runtime : "-", tm.flat ? ", a flat twin" : "",
			     tm.cache ? tm.cache : "-", agent_ms_since(&t0));
	return 1;
}

int agent_compile_ahead_noctx(struct agent_module *m, int budget)
{
	struct err e = {{0}};
	char name[512];
	int done = 0, err = 0;

	pthread_mutex_lock(&agent_gpu_lock);
	/* the device side is there already: its context compiles */
	int here = !agent_gpu.tried && !agent_noctx_open(&e);
	const char *ptx = here ? agent_module_ptx(m, "", &e) : NULL;
	pthread_mutex_unlock(&agent_gpu_lock);
	for (const char *at = ptx; ptx && !err && done < budget &&
				   agent_next_entry(&at, name, sizeof(name));) {
		if (!agent_kernel_targeted(name))
			continue;
		/* one kernel at a time under the lock, so that a launch waits
		 * for one compile at most; once the device side exists (a
		 * launch made it), the launches compile in its context */
		pthread_mutex_lock(&agent_gpu_lock);
		int r = agent_gpu.tried ? 0 : agent_noctx_one(ptx, name, &e);
		pthread_mutex_unlock(&agent_gpu_lock);
		done += r > 0;
		err = r < 0 ? r : 0;
	}
	if (err && getenv("GPUEXT_AGENT_VERBOSE"))
		agent_notice("compiles before any context stopped (the first launches compile): %s",
			     e.msg);
	if (!here && agent_gpu.rt) /* never made here: the application's */
		return agent_instrument_ahead(m, agent_gpu.rt->ctx, budget);
	return done;
}

void agent_launch_refused(CUfunction f, CUresult r)
{
	struct agent_kernel *k = agent_kernel_find(f);
	if (!k || !k->inst)
		return;
	__atomic_store_n(&k->tier, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&k->inst_flat, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&k->inst, NULL, __ATOMIC_RELEASE);
	pthread_mutex_lock(&agent_gpu_lock);
	int first = agent_first_failure(k->name);
	pthread_mutex_unlock(&agent_gpu_lock);
	if (!first)
		return;
	session_count(agent_session, SESSION_SKIPPED);
	agent_notice("kernel %s runs unchanged: the driver refused the instrumented launch "
		     "(CUresult %d)", k->name, (int)r);
}
