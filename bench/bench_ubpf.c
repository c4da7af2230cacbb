/* SPDX-License-Identifier: MIT */
/*
 * bench_ubpf.c - uBPF's interpreter and x86-64 JIT as benchmark engines.
 *
 * Built only when `make bench UBPF_DIR=...` names a uBPF tree built by
 * bench/build-ubpf.sh; uBPF itself stays outside this repository.  uBPF gets
 * the raw bytecode through ubpf_load() (not its ELF loader), so it runs the
 * very bytes gpuext runs.  Its interpreter's run-time bounds checks are
 * switched off: gpuext's interpreter trusts verified code and checks nothing
 * on the hot path, and uBPF's JIT checks nothing either.
 */
#include "bench.h"

#ifdef BENCH_HAVE_UBPF
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <ubpf.h>

#ifndef BENCH_UBPF_REV
#define BENCH_UBPF_REV "unknown revision"
#endif

struct ubpf_state {
	struct ubpf_vm *vm;
	ubpf_jit_fn fn;
	double compile_ns;
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int ubpf_prepare(const char *name, const struct isa_insn *insns, size_t cnt,
			int jit, void **state, char *err, size_t err_len)
{
	struct ubpf_state *s = calloc(1, sizeof(*s));
	char *msg = NULL;

	if (!s || !(s->vm = ubpf_create())) {
		snprintf(err, err_len, "%s: uBPF: out of memory", name);
		free(s);
		return -1;
	}
	ubpf_toggle_bounds_check(s->vm, false);
	if (ubpf_load(s->vm, insns, cnt * sizeof(*insns), &msg) < 0)
		goto fail;
	if (jit) {
		double t0 = now_ns();

		s->fn = ubpf_compile(s->vm, &msg);
		s->compile_ns = now_ns() - t0;
		if (!s->fn)
			goto fail;
	}
	*state = s;
	return 0;
fail:
	snprintf(err, err_len, "%s: uBPF: %s", name, msg ? msg : "failed");
	free(msg);
	ubpf_destroy(s->vm);
	free(s);
	return -1;
}

static int ubpf_prepare_interp(const char *name, const struct isa_insn *insns, size_t cnt,
			       void **state, char *err, size_t err_len)
{
	return ubpf_prepare(name, insns, cnt, 0, state, err, err_len);
}

static int ubpf_prepare_jit(const char *name, const struct isa_insn *insns, size_t cnt,
			    void **state, char *err, size_t err_len)
{
	return ubpf_prepare(name, insns, cnt, 1, state, err, err_len);
}

static uint64_t ubpf_run_interp(void *state, uint8_t *mem, uint64_t len)
{
	struct ubpf_state *s = state;
	uint64_t r0 = 0;

	/* A failed run (never expected here) shows up as a result mismatch. */
	if (ubpf_exec(s->vm, mem, len, &r0) < 0)
		return UINT64_C(0xdeadbeefdeadbeef);
	return r0;
}

static uint64_t ubpf_run_jit(void *state, uint8_t *mem, uint64_t len)
{
	return ((struct ubpf_state *)state)->fn(mem, len);
}

static double ubpf_compile_ns(const void *state)
{
	return ((const struct ubpf_state *)state)->compile_ns;
}

static void ubpf_release(void *state)
{
	struct ubpf_state *s = state;

	if (s) {
		ubpf_destroy(s->vm);
		free(s);
	}
}

static const struct bench_engine ubpf_interp_engine = {
	.name = "uBPF interp",
	.key = "ubpf_interp",
	.prepare = ubpf_prepare_interp,
	.run = ubpf_run_interp,
	.release = ubpf_release,
};

static const struct bench_engine ubpf_jit_engine = {
	.name = "uBPF JIT",
	.key = "ubpf_jit",
	.prepare = ubpf_prepare_jit,
	.run = ubpf_run_jit,
	.release = ubpf_release,
	.compile_ns = ubpf_compile_ns,
};

const struct bench_engine *bench_ubpf_interp(void)
{
	return &ubpf_interp_engine;
}

const struct bench_engine *bench_ubpf_jit(void)
{
	return &ubpf_jit_engine;
}

const char *bench_ubpf_version(void)
{
	return "uBPF " BENCH_UBPF_REV;
}

#else /* !BENCH_HAVE_UBPF */

const struct bench_engine *bench_ubpf_interp(void)
{
	return NULL;
}

const struct bench_engine *bench_ubpf_jit(void)
{
	return NULL;
}

const char *bench_ubpf_version(void)
{
	return "uBPF: not built (set UBPF_DIR)";
}

#endif
