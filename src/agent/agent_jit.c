/* SPDX-License-Identifier: MIT */
/*
 * agent_jit.c - instrumented PTX to a loaded module: the driver's JIT
 * (whole, or linked with the prebuilt runtime), the module cache, the
 * libraries compiled ahead with no context, the JIT options.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "agent_device.h"
#include "agent_impl.h"
#include "agent_jit.h"
#include "ptx/ptx_cache.h"
#include "ptx/ptx_rt.h"

/* The JIT options of instrumented modules: GPUEXT_AGENT_JIT_OPT=0..4 (the
 * driver's optimization level, CU_JIT_OPTIMIZATION_LEVEL, default 4),
 * GPUEXT_AGENT_JIT_THREADS=N (CU_JIT_SPLIT_COMPILE: N threads, 0 all CPUs)
 * and GPUEXT_AGENT_JIT_PIC=0|1 (CU_JIT_POSITION_INDEPENDENT_CODE); unset or
 * invalid: the driver's defaults. */
static struct ptx_rt_jit agent_jit_opts(void)
{
	const char *o = getenv("GPUEXT_AGENT_JIT_OPT"), *t = getenv("GPUEXT_AGENT_JIT_THREADS"),
		   *pic = getenv("GPUEXT_AGENT_JIT_PIC");
	struct ptx_rt_jit j = {.opt_level = -1, .threads = -1, .pic = -1};
	if (pic && (pic[0] == '0' || pic[0] == '1') && !pic[1])
		j.pic = pic[0] - '0';
	if (o && o[0] >= '0' && o[0] <= '4' && !o[1])
		j.opt_level = o[0] - '0';
	if (t && *t && strspn(t, "0123456789") == strlen(t) && strlen(t) < 4)
		j.threads = atoi(t);
	return j;
}

/* What a cubin depends on besides its PTX (the cache entry's tag). */
static void agent_cache_tag(int linked, const struct ptx_rt_jit *jit, char *tag, size_t len)
{
	size_t fb_len = 0;
	const void *fb = linked ? ptx_rt_fatbin(&fb_len) : NULL;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < fb_len; i++) /* the prebuilt runtime linked in */
		h = (h ^ ((const unsigned char *)fb)[i]) * 0x100000001b3ull;
	snprintf(tag, len, "gpuext module cache 1: sm_%d%d, driver %d, O%d, threads %d, pic %d, "
		 "runtime %s %016llx", agent_gpu0()->cc_major, agent_gpu0()->cc_minor,
		 agent_gpu0()->cu->version, jit->opt_level, jit->threads, jit->pic,
		 linked ? "linked" : "none", (unsigned long long)h);
}

int agent_jit_load(const char *text, int linked, CUmodule *mod, struct agent_timing *tm,
		   struct err *e)
{
	struct ptx_rt *rt = agent_gpu.rt;
	char dir[3800], tag[200];
	struct ptx_rt_jit jit = agent_jit_opts();
	int err;
	float jit_ms = 0;

	/* No device side yet: a compile ahead with no context, into a
	 * context-independent library (agent_compile_ahead_noctx); with one,
	 * such a library's module in the current context, when there is one
	 * for this text. */
	*mod = NULL;
	if (!rt) {
		if (linked)
			return err_set(e, ENOTSUP, "a module linked with the runtime needs a context");
		double ms;
		if ((err = agent_ahead_lib_compile(text, &ms, e)))
			return err;
		tm->jit += ms;
		tm->cache = "library";
		return 0;
	}
	if (!linked && agent_ahead_lib_module(text, mod)) {
		tm->cache = "compiled ahead with no context";
		return 0;
	}

	/* A module without the prebuilt runtime goes to cuModuleLoadDataEx,
	 * which compiles it whole (the JIT linker compiles its inputs as
	 * relocatable code: gemm's kernel 1.27x slower on the H200) and keeps
	 * the result in the driver's own cache (ComputeCache), across runs too. */
	int off = ptx_cache_dir(dir, sizeof(dir));
	if (off || !linked) {
		tm->cache = off ? "cache off" : "driver cache";
		err = linked ? ptx_rt_module_link(rt, text, mod, &jit_ms, e)
			     : ptx_rt_module_load_timed(rt, text, mod, &jit_ms, e);
		tm->jit += jit_ms;
		return err;
	}
	agent_cache_tag(linked, &jit, tag, sizeof(tag));
	size_t len = 0;
	const char *why;
	void *cubin = ptx_cache_get(dir, tag, text, &len, &why);
	if (cubin) {
		err = ptx_rt_module_load_image(rt, cubin, mod, NULL);
		free(cubin);
		if (!err) {
			tm->cache = "cache hit";
			return 0;
		}
		why = "the driver refused it";
	}
	if (why) {
		char path[4096];
		ptx_cache_path(dir, tag, text, path, sizeof(path));
		agent_notice("module cache entry %s ignored (%s): compiled again", path, why);
	}
	if ((err = ptx_rt_compile(rt, text, linked, &jit, &cubin, &len, &jit_ms, e)))
		return err;
	tm->jit += jit_ms;
	err = ptx_rt_module_load_image(rt, cubin, mod, e);
	struct err pe = {{0}};
	if (err) {
		tm->cache = "cache miss";
	} else if (ptx_cache_put(dir, tag, text, cubin, len, &pe)) {
		tm->cache = "cache miss, not stored";
		static int told;
		if (!told++)
			agent_notice("module cache: %s", pe.msg);
	} else {
		tm->cache = "cache miss, stored";
	}
	free(cubin);
	return err;
}
