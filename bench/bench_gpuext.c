/* SPDX-License-Identifier: MIT */
/*
 * bench_gpuext.c - gpuext's interpreter and x86-64 JIT as benchmark engines.
 *
 * The programs run as raw programs (PROG_TYPE_RAW): r1 = memory, r2 = its
 * length, no helpers, no maps.  The interpreter runs with bounds checking
 * off, as it does for verified programs.  A backend that libgpuext does not
 * have yet (the Makefile tells by its source file) is left out of the table
 * rather than faked.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

#ifdef BENCH_HAVE_INTERP
#include "bpf/interp.h"
#include "bpf/prog.h"

static int gpuext_prepare(const char *name, const struct isa_insn *insns, size_t cnt,
			  void **state, char *err, size_t err_len)
{
	struct prog *p;
	struct err e = {{0}};

	if (prog_from_insns(name, insns, cnt, &p, &e) < 0) {
		snprintf(err, err_len, "%s: gpuext: %s", name, e.msg);
		return -1;
	}
	*state = p;
	return 0;
}

static uint64_t gpuext_run_interp(void *state, uint8_t *mem, uint64_t len)
{
	struct prog_run_opts opts = {.args = {(uintptr_t)mem, len}};
	uint64_t r0 = 0;

	/* A failed run (never expected here) shows up as a result mismatch. */
	if (interp_run(state, &opts, &r0, NULL) < 0)
		return UINT64_C(0xdeadbeefdeadbeef);
	return r0;
}

static void gpuext_release(void *state)
{
	prog_free(state);
}

static const struct bench_engine gpuext_interp_engine = {
	.name = "gpuext interp",
	.key = "gpuext_interp",
	.prepare = gpuext_prepare,
	.run = gpuext_run_interp,
	.release = gpuext_release,
};

const struct bench_engine *bench_gpuext_interp(void)
{
	return &gpuext_interp_engine;
}
#else
const struct bench_engine *bench_gpuext_interp(void)
{
	return NULL;
}
#endif

const struct bench_engine *bench_gpuext_jit(void)
{
	return NULL;
}
