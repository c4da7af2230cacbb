/* SPDX-License-Identifier: MIT */
/*
 * bench_gpuext.c - gpuext's interpreter and x86-64 JIT as benchmark engines.
 *
 * The programs run as raw programs (PROG_TYPE_RAW): r1 = memory, r2 = its
 * length; they call no helper and use no map, but the default helper table is
 * passed as any host program would get it.  The interpreter runs with bounds checking
 * off, as it does for verified programs.  A backend that libgpuext does not
 * have yet (the Makefile tells by its source file) is left out of the table
 * rather than faked.  JIT compile time is jit_compile() alone (translation and
 * making the code executable), as for uBPF's ubpf_compile().
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

#ifdef BENCH_HAVE_INTERP
#include "bpf/helpers.h"
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

/*
 * A failed run is reported with its message and returns a poison value, so
 * that the harness's result check fails (it runs before any timing).
 */
static uint64_t run_failed(const struct prog *p, const char *engine, const struct err *e)
{
	fprintf(stderr, "cpu_bench: %s: %s: %s\n", p->name, engine, e->msg);
	return UINT64_C(0xdeadbeefdeadbeef);
}

static uint64_t gpuext_run_interp(void *state, uint8_t *mem, uint64_t len)
{
	struct prog_run_opts opts = {.args = {(uintptr_t)mem, len},
				     .helpers = helper_table_default()};
	struct err e;
	uint64_t r0 = 0;

	if (interp_run(state, &opts, &r0, &e) < 0)
		return run_failed(state, "gpuext interp", &e);
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

#ifdef BENCH_HAVE_JIT
#include <time.h>

#include "bpf/jit.h"

struct jit_state {
	struct prog *p;
	jit_direct_fn fn; /* jit_direct(p): every benchmark program has one */
	double compile_ns;
};

static int gpuext_prepare_jit(const char *name, const struct isa_insn *insns, size_t cnt,
			      void **state, char *err, size_t err_len)
{
	struct jit_state *s = calloc(1, sizeof(*s));
	struct err e = {{0}};
	struct timespec t0, t1;

	if (!s) {
		snprintf(err, err_len, "%s: gpuext JIT: out of memory", name);
		return -1;
	}
	if (prog_from_insns(name, insns, cnt, &s->p, &e) < 0)
		goto fail;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (jit_compile(s->p, helper_table_default(), &e) < 0)
		goto fail;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s->compile_ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
	s->fn = jit_direct(s->p);
	*state = s;
	return 0;
fail:
	snprintf(err, err_len, "%s: gpuext JIT: %s", name, e.msg);
	if (s->p)
		prog_free(s->p);
	free(s);
	return -1;
}

static __attribute__((noinline)) uint64_t gpuext_run_jit_run(struct jit_state *s, uint8_t *mem,
								uint64_t len)
{
	struct prog_run_opts opts = {.args = {(uintptr_t)mem, len},
				     .helpers = helper_table_default()};
	struct err e;
	uint64_t r0 = 0;

	if (jit_run(s->p, &opts, &r0, &e) < 0)
		return run_failed(s->p, "gpuext JIT", &e);
	return r0;
}

/*
 * The compiled code is called as uBPF's is: through the function pointer the
 * compiler handed out (jit_direct(), which every program without local calls
 * and callx has), else through jit_run().  The jit_run() path is out of line
 * so that the direct call pays for nothing else (no options to fill, no
 * error buffer on the stack), as uBPF's column pays for nothing else.
 */
static uint64_t gpuext_run_jit(void *state, uint8_t *mem, uint64_t len)
{
	struct jit_state *s = state;

	if (s->fn)
		return s->fn((uintptr_t)mem, len, 0, 0, 0);
	return gpuext_run_jit_run(s, mem, len);
}

static double gpuext_jit_compile_ns(const void *state)
{
	return ((const struct jit_state *)state)->compile_ns;
}

static void gpuext_release_jit(void *state)
{
	struct jit_state *s = state;

	jit_free(s->p);
	prog_free(s->p);
	free(s);
}

static const struct bench_engine gpuext_jit_engine = {
	.name = "gpuext JIT",
	.key = "gpuext_jit",
	.prepare = gpuext_prepare_jit,
	.run = gpuext_run_jit,
	.release = gpuext_release_jit,
	.compile_ns = gpuext_jit_compile_ns,
};

const struct bench_engine *bench_gpuext_jit(void)
{
	return &gpuext_jit_engine;
}
#else
const struct bench_engine *bench_gpuext_jit(void)
{
	return NULL;
}
#endif
