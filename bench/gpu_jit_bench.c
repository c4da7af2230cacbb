/* SPDX-License-Identifier: MIT */
/*
 * gpu_jit_bench - where the driver's JIT time goes for instrumented PTX (the
 * first launch of an instrumented kernel, issue 6).
 *
 *   build/gpu/gpu_jit_bench [--reps N] FILE.ptx...
 *
 * Each file (an instrumented module as the agent makes it: bench/
 * first_launch.sh's logs, or PTX dumped through the fake driver) is turned
 * into a loaded module N times (default 3) each way:
 *   load   cuModuleLoadDataEx on the PTX (the path without the module cache)
 *   link   the JIT linker with the PTX alone, the cubin loaded (the path of
 *          the module cache: ptx_rt_compile + ptx_rt_module_load_image),
 *          at the driver's default optimization level, at -O0..-O3, and
 *          with the compiler's optimizations on every CPU (split:
 *          CU_JIT_SPLIT_COMPILE 0)
 *   rt     the JIT linker with the prebuilt device runtime too (when the PTX
 *          declares runtime functions: .extern .func)
 *   image  loading the cubin link made (a module cache hit)
 * and prints, per file, the wall time of the first and the fastest of the N
 * (ms, CLOCK_MONOTONIC around the driver calls).  A PTX the driver rejects
 * is reported as such.  A trivial kernel first shows the fixed cost of one
 * JIT call.  Exit 77 without a GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_common.h"
#include "ptx/ptx_rt.h"
#include "testutil.h"

static const char TRIVIAL[] = ".version 7.8\n.target sm_75\n.address_size 64\n"
			      ".visible .entry gx_trivial()\n{\n\tret;\n}\n";

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

enum way { WAY_LOAD, WAY_LINK, WAY_O0, WAY_O1, WAY_O2, WAY_O3, WAY_SPLIT, WAY_RT, WAY_IMAGE, WAY_N };
static const char *const way_name[WAY_N] = {"load", "link", "link -O0", "link -O1",
					    "link -O2", "link -O3", "link split", "rt", "image"};

/* One turn of way on ptx: its wall ms, or -1 (e says why). */
static double turn(struct ptx_rt *rt, const char *ptx, enum way w, struct err *e)
{
	CUmodule mod = NULL;
	void *cubin = NULL;
	size_t len;
	int err;
	double t0 = now_ms(), ms;

	switch (w) {
	case WAY_LOAD:
		err = ptx_rt_module_load(rt, ptx, &mod, e);
		break;
	case WAY_IMAGE: /* the compile is not timed, only the load */
		if ((err = ptx_rt_compile(rt, ptx, 0, NULL, &cubin, &len, NULL, e)))
			break;
		t0 = now_ms();
		err = ptx_rt_module_load_image(rt, cubin, &mod, e);
		break;
	default: {
		struct ptx_rt_jit jit = {.opt_level = w >= WAY_O0 && w <= WAY_O3 ? (int)w - WAY_O0 : -1,
					 .threads = w == WAY_SPLIT ? 0 : -1, .pic = -1};
		err = ptx_rt_compile(rt, ptx, w == WAY_RT, &jit, &cubin, &len, NULL, e);
		if (!err)
			err = ptx_rt_module_load_image(rt, cubin, &mod, e);
		break;
	}
	}
	ms = now_ms() - t0;
	free(cubin);
	if (mod)
		rt->cu->module_unload(mod);
	return err ? -1 : ms;
}

static void row(struct ptx_rt *rt, const char *name, const char *ptx, int reps)
{
	printf("| %s | %zu |", name, strlen(ptx));
	for (int w = 0; w < WAY_N; w++) {
		double first = -1, best = -1;
		struct err e = {{0}};
		if (w == WAY_RT && !strstr(ptx, ".extern .func")) {
			printf(" - |");
			continue;
		}
		for (int i = 0; i < reps; i++) {
			double ms = turn(rt, ptx, (enum way)w, &e);
			if (ms < 0)
				break;
			if (i == 0)
				first = ms;
			if (best < 0 || ms < best)
				best = ms;
		}
		if (best < 0)
			printf(" failed: %.60s |", e.msg);
		else
			printf(" %.1f / %.1f |", first, best);
	}
	printf("\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int reps = 3, first = 1;
	struct ptx_rt *rt;
	struct err e = {{0}};

	if (argc > 2 && !strcmp(argv[1], "--reps")) {
		reps = atoi(argv[2]);
		first = 3;
	}
	if (reps < 1 || first >= argc) {
		fprintf(stderr, "usage: gpu_jit_bench [--reps N] FILE.ptx...\n");
		return 2;
	}
	if (ptx_rt_open(0, &rt, &e)) {
		printf("SKIP: %s\n", e.msg);
		return GPU_EXIT_SKIP;
	}
	printf("# Driver JIT time for instrumented PTX (%s, driver %d)\n\n", rt->name,
	       rt->cu->version);
	printf("ms per turn, first / fastest of %d; rt: linked with the prebuilt runtime; "
	       "image: loading link's cubin (a module cache hit)\n\n| module | bytes |", reps);
	for (int w = 0; w < WAY_N; w++)
		printf(" %s |", way_name[w]);
	printf("\n| --- | ---: |");
	for (int w = 0; w < WAY_N; w++)
		printf(" ---: |");
	printf("\n");
	row(rt, "(trivial kernel)", TRIVIAL, reps);
	for (int i = first; i < argc; i++) {
		char *ptx = test_read_file(argv[i], NULL);
		const char *base = strrchr(argv[i], '/');
		if (!ptx) {
			printf("| %s | unreadable |\n", argv[i]);
			continue;
		}
		row(rt, base ? base + 1 : argv[i], ptx, reps);
		free(ptx);
	}
	ptx_rt_close(rt);
	return 0;
}
