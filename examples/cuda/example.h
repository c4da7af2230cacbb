/* SPDX-License-Identifier: MIT */
/*
 * example.h - what the CUDA examples share: options, deterministic input,
 * the checksum line, and kernel timing with CUDA events.
 *
 * Every example prints "checksum: 0x%016llx" last (FNV-1a over the bytes of
 * its result), checks the result against a CPU reference it computes
 * itself, and exits 1 on a mismatch.  With -time it prints one
 * "kernel_ms: %.6f" line per launch, measured with CUDA events around that
 * launch alone.  With -loop (the .cu examples) it prints "loop_ms: %.6f",
 * the wall time a launch takes in the back-to-back loop: from the end of
 * the first launch (so instrumenting it is left out) to the end of the
 * last, divided by the launches between.  The tests and benchmarks parse
 * these lines.
 *
 * Header-only and used by .cu files (runtime API) and .c files (driver
 * API), so it needs nothing from CUDA itself.
 */
#ifndef GPUEXT_EXAMPLE_H
#define GPUEXT_EXAMPLE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXAMPLE_MAX_ITERS = 1000000 };

struct example_opts {
	long n;     /* problem size (meaning per example) */
	long iters; /* kernel launches */
	int time;   /* print kernel_ms per launch */
	int loop;   /* print loop_ms, a launch's wall time back to back */
};

static void example_usage(const char *prog, const char *n_meaning, long n)
{
	fprintf(stderr,
		"usage: %s [-n N] [-iters K] [-time] [-loop]\n"
		"  -n N      %s (default %ld)\n"
		"  -iters K  kernel launches (default 1)\n"
		"  -time     print kernel_ms: per launch (CUDA events)\n"
		"  -loop     print loop_ms: a launch's wall time in the loop, the first left out\n",
		prog, n_meaning, n);
	exit(2);
}

/* Parse the options; defaults n and 1 launch.  Exits 2 on a bad option. */
static struct example_opts example_parse(int argc, char **argv, long n, long n_max,
					 const char *n_meaning)
{
	struct example_opts o = {n, 1, 0, 0};

	for (int i = 1; i < argc; i++) {
		char *end;
		if (!strcmp(argv[i], "-time")) {
			o.time = 1;
		} else if (!strcmp(argv[i], "-loop")) {
			o.loop = 1;
		} else if (i + 1 < argc && (!strcmp(argv[i], "-n") || !strcmp(argv[i], "-iters"))) {
			long v = strtol(argv[i + 1], &end, 0);
			long max = argv[i][1] == 'n' ? n_max : EXAMPLE_MAX_ITERS;
			if (*end || v < 1 || v > max) {
				fprintf(stderr, "%s: bad value '%s' for %s (1..%ld)\n", argv[0],
					argv[i + 1], argv[i], max);
				exit(2);
			}
			if (argv[i][1] == 'n')
				o.n = v;
			else
				o.iters = v;
			i++;
		} else {
			example_usage(argv[0], n_meaning, n);
		}
	}
	return o;
}

/* Deterministic input: a small integer-valued float per index and seed, so
 * sums of them are exact in float and CPU and GPU results agree bit for bit
 * whatever the summation order. */
static inline float example_value(uint64_t i, uint32_t seed)
{
	uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull ^ seed;
	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 32;
	return (float)(int)(x % 17) - 8.0f; /* -8 .. 8 */
}

/* FNV-1a over bytes: the printed checksum. */
static inline uint64_t example_checksum(const void *p, size_t len)
{
	const unsigned char *b = (const unsigned char *)p;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* Print the checksum and compare with the CPU reference; the exit code. */
static int example_finish(const char *what, const void *gpu, const void *cpu, size_t len)
{
	uint64_t g = example_checksum(gpu, len), c = example_checksum(cpu, len);

	if (g != c) {
		fprintf(stderr, "%s: MISMATCH: GPU checksum 0x%016llx, CPU reference 0x%016llx\n",
			what, (unsigned long long)g, (unsigned long long)c);
		printf("checksum: 0x%016llx\n", (unsigned long long)g);
		return 1;
	}
	printf("result: ok (matches the CPU reference)\n");
	printf("checksum: 0x%016llx\n", (unsigned long long)g);
	return 0;
}

#endif
