/* SPDX-License-Identifier: MIT */
/*
 * apiprobe_bench - what an in-process API probe adds to a call (issue 7).
 *
 * One cheap C function (two arguments, returns their sum) is called
 * through a function pointer, as an application calls a driver function
 * it got from dlsym or cuGetProcAddress: unhooked, and through the
 * trampolines of apiprobe.h with a JIT-compiled entry program that does
 * nothing, one that counts, one that updates a hash keyed by the first
 * argument, and a counting entry + return probe pair (bench/progs/
 * apiprobe.bpf.c).  All rows in one run, same loop; each row is the best
 * of ROUNDS rounds of CALLS calls (the machine is shared: the best round
 * is the one least disturbed).  The map counters are checked afterwards,
 * so a row whose probe did not run cannot pass unnoticed.
 *
 *   apiprobe_bench [--calls N] [--only SITE] [BPF_OBJECT]
 *
 * Prints a markdown table.  --only SITE (bench_empty, bench_count, ...) runs
 * that row alone and prints nothing: for instruction counts under
 * callgrind (bench/apiprobe_instr.sh).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/apiprobe.h"
#include "bpf/map.h"
#include "bpf/object.h"
#include "bpf/verifier.h"

enum { ROUNDS = 7 };

typedef long bench_fn(long, long);

__attribute__((noinline)) static long real_add(long a, long b)
{
	__asm__ volatile("" ::: "memory"); /* keep the call */
	return a + b;
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Best ns per call over ROUNDS rounds of `calls` calls of fn. */
static double time_calls(bench_fn *volatile fn, long calls)
{
	double best = 1e300;
	for (int r = 0; r < ROUNDS; r++) {
		long sum = 0;
		double t0 = now_ns();
		for (long i = 0; i < calls; i++)
			sum += fn(i, 1);
		double t = (now_ns() - t0) / (double)calls;
		if (sum != calls * (calls - 1) / 2 + calls) {
			fprintf(stderr, "apiprobe_bench: wrong sum %ld\n", sum);
			exit(1);
		}
		if (t < best)
			best = t;
	}
	return best;
}

static uint64_t counter(struct object *obj, uint32_t key)
{
	uint64_t v = 0;
	map_lookup_copy(object_find_map(obj, "calls")->map, &key, &v);
	return v;
}

int main(int argc, char **argv)
{
	const char *path = "build/bpf/bench/progs/apiprobe.bpf.o";
	long calls = 10 * 1000 * 1000;
	const char *only = NULL;
	struct object *obj = NULL;
	struct err e = {{0}};

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--calls") && i + 1 < argc)
			calls = strtol(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else
			path = argv[i];
	}
	if (calls <= 0) {
		fprintf(stderr, "apiprobe_bench: --calls needs a positive count\n");
		return 1;
	}
	if (object_open(path, &obj, &e) || object_create_maps(obj, &e)) {
		fprintf(stderr, "apiprobe_bench: %s\n", e.msg);
		return 1;
	}
	for (size_t i = 0; i < obj->prog_cnt; i++)
		if (verifier_check(obj->progs[i], NULL, NULL, &e)) {
			fprintf(stderr, "apiprobe_bench: %s: %s\n", path, e.msg);
			return 1;
		}
	if (apiprobe_attach_object(obj, &e) < 0) {
		fprintf(stderr, "apiprobe_bench: %s\n", e.msg);
		return 1;
	}

	static const struct {
		const char *site, *what;
	} rows[] = {
		{"bench_unhooked", "unhooked (direct call through the pointer)"},
		{"bench_empty", "entry probe, empty program"},
		{"bench_count", "entry probe, array counter (atomic add)"},
		{"bench_hash", "entry probe, hash update keyed by PARM1 & 1023"},
		{"bench_count_ret", "entry + return probes, counters"},
	};
	enum { NROWS = sizeof(rows) / sizeof(rows[0]) };
	if (only) {
		bench_fn *volatile fn = (bench_fn *)apiprobe_wrap(only, (void *)real_add);
		long sum = 0;
		for (long i = 0; i < calls; i++)
			sum += fn(i, 1);
		object_free(obj);
		return sum != calls * (calls - 1) / 2 + calls;
	}
	double ns[NROWS];
	for (int i = 0; i < NROWS; i++)
		ns[i] = time_calls((bench_fn *)apiprobe_wrap(rows[i].site, (void *)real_add), calls);

	/* bench_count ran ROUNDS*calls times, bench_count_ret as many more. */
	uint64_t want = 2ULL * ROUNDS * (uint64_t)calls;
	if (counter(obj, 0) != want || counter(obj, 1) != want / 2) {
		fprintf(stderr, "apiprobe_bench: counters %llu/%llu, expected %llu/%llu\n",
			(unsigned long long)counter(obj, 0), (unsigned long long)counter(obj, 1),
			(unsigned long long)want, (unsigned long long)want / 2);
		return 1;
	}
	struct apiprobe_stats st;
	apiprobe_stats_get(&st);
	if (st.prog_errors) {
		fprintf(stderr, "apiprobe_bench: %llu program errors\n",
			(unsigned long long)st.prog_errors);
		return 1;
	}

	printf("| call of a 2-argument C function | ns/call | added by the probe |\n");
	printf("|---|---:|---:|\n");
	for (int i = 0; i < NROWS; i++)
		printf("| %s | %.2f | %s%.2f |\n", rows[i].what, ns[i], i ? "+" : "",
		       i ? ns[i] - ns[0] : 0.0);
	printf("\nbest of %d rounds of %ld calls each; probes JIT-compiled; one thread\n", ROUNDS,
	       calls);
	object_free(obj);
	return 0;
}
