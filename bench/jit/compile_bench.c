/* SPDX-License-Identifier: MIT */
/*
 * jit_compile_bench - JIT compile time per 1000 instructions.
 *
 * Compiles generated programs (fuzz/progen.c: every instruction class,
 * jumps, loops, helper and local calls) of several sizes, each many times,
 * and prints the median time of one jit_compile() (all layout passes, code
 * memory mapping and sealing included) and that time per 1000 instructions.
 *
 *   jit_compile_bench [--reps N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpf/helpers.h"
#include "bpf/jit.h"
#include "bpf/prog.h"
#include "progen.h"

static uint64_t fake_helper(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return a + b + c + d + e;
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = {100, 1000, 5000};
	static struct helper_table helpers;
	int reps = 200;

	if (argc == 3 && !strcmp(argv[1], "--reps"))
		reps = atoi(argv[2]);
	if (reps < 1) {
		fprintf(stderr, "usage: jit_compile_bench [--reps N]\n");
		return 2;
	}
	helpers.fn[PROGEN_HELPER_MIX] = fake_helper;
	helpers.fn[PROGEN_HELPER_MEMXOR] = fake_helper;
	double *t = calloc((size_t)reps, sizeof(double));
	if (!t)
		return 2;
	printf("%-10s %10s %12s %14s %12s\n", "target", "insns", "code bytes", "compile (us)",
	       "us/1000 insn");
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		struct progen_cfg cfg = {.target_insns = sizes[s], .max_funcs = 4};
		struct isa_insn *insns = NULL;
		size_t n = 0;
		/* a program of about the size asked for (the function count varies) */
		for (uint64_t seed = 1; seed < 100; seed++) {
			free(insns);
			n = progen_generate(seed, &cfg, &insns);
			if (n >= sizes[s] * 8 / 10)
				break;
		}
		struct prog p = {.name = "bench", .insns = insns, .insn_cnt = n};
		struct err e = {{0}};
		size_t code_len = 0;
		for (int r = 0; r < reps; r++) {
			double t0 = now_ns();
			if (jit_compile(&p, &helpers, &e)) {
				fprintf(stderr, "jit_compile_bench: %s\n", e.msg);
				return 1;
			}
			t[r] = now_ns() - t0;
			jit_code(&p, &code_len);
			jit_free(&p);
		}
		qsort(t, (size_t)reps, sizeof(double), cmp_double);
		double med = t[reps / 2];
		printf("%-10zu %10zu %12zu %14.1f %12.1f\n", sizes[s], n, code_len, med / 1e3,
		       med / 1e3 / ((double)n / 1000));
		free(insns);
	}
	free(t);
	return 0;
}
