/* SPDX-License-Identifier: MIT */
/*
 * jit_diff - differential fuzzing of the x86-64 JIT against the interpreter.
 *
 * Each round generates a random valid program (fuzz/progen.c), compiles it
 * once, and runs it on several random inputs through both backends, each
 * time from the same starting state (memory, map value, helper state).
 * Compared afterwards: r0, the whole memory (which holds the registers and
 * the stack the program dumps before exit), the map value and the state of
 * the test helpers.  The interpreter runs in bounds-checking mode, so a
 * generator bug that makes an unsafe program is reported, not run blindly.
 *
 *   jit_diff [--seconds S] [--count N] [--seed N] [--inputs K] [--size N] [-v]
 *
 * Program i of a run uses seed (--seed) + i: `--seed X --count 1` replays
 * the program a mismatch report names.  Exits 1 on any mismatch.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpf/helpers.h"
#include "bpf/interp.h"
#include "bpf/isa.h"
#include "bpf/jit.h"
#include "bpf/map.h"
#include "bpf/prog.h"
#include "progen.h"

enum { MAP_VALUE_SIZE = 64, MAX_REPORTS = 5 };

/* State of the test helpers, part of what is compared. */
static uint64_t helper_acc;

static uint64_t helper_mix(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	uint64_t h = r1 ^ (r2 * 0x9e3779b97f4a7c15ull) ^ (r3 << 7) ^ (r4 >> 3) ^ ~r5;
	helper_acc = (helper_acc ^ h) * 0x100000001b3ull;
	return h;
}

static uint64_t helper_memxor(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	uint64_t *p = (uint64_t *)(uintptr_t)r1;
	*p ^= r2;
	helper_acc += 1;
	return *p;
}

struct outcome {
	uint64_t r0, acc;
	int rc;
	uint8_t mem[PROGEN_MEM_SIZE];
	uint8_t map[MAP_VALUE_SIZE];
	char err[sizeof(((struct err *)0)->msg)];
};

struct fuzz {
	struct helper_table helpers;
	struct map *map;
	uint8_t *map_value;
	uint64_t programs, runs, insns, mismatches;
	int verbose, inputs;
	size_t size;
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void print_prog(const struct isa_insn *insns, size_t n, const uint8_t *input)
{
	printf("-- program\n");
	for (size_t i = 0; i < n; i++) {
		const uint8_t *b = (const uint8_t *)&insns[i];
		printf("%02x %02x %02x %02x %02x %02x %02x %02x\n", b[0], b[1], b[2], b[3], b[4],
		       b[5], b[6], b[7]);
	}
	printf("-- mem\n");
	for (size_t i = 0; i < PROGEN_MEM_SIZE; i++)
		printf("%02x%c", input[i], i % 16 == 15 ? '\n' : ' ');
}

static void run_one(struct fuzz *f, struct prog *p, int jit, const uint8_t *input,
		    const uint8_t *map_init, uint64_t *mem, struct outcome *o)
{
	struct prog_run_opts opts = {
		.args = {(uintptr_t)mem, PROGEN_MEM_SIZE},
		.helpers = &f->helpers,
		.bounds_check = 1,
		.mem = mem,
		.mem_len = PROGEN_MEM_SIZE,
	};
	struct err e = {{0}};

	/* The same buffer for both backends, so addresses held in registers agree. */
	memcpy(mem, input, PROGEN_MEM_SIZE);
	memcpy(f->map_value, map_init, MAP_VALUE_SIZE);
	helper_acc = 0;
	o->r0 = 0;
	o->rc = jit ? jit_run(p, &opts, &o->r0, &e) : interp_run(p, &opts, &o->r0, &e);
	o->acc = helper_acc;
	memcpy(o->mem, mem, PROGEN_MEM_SIZE);
	memcpy(o->map, f->map_value, MAP_VALUE_SIZE);
	memcpy(o->err, e.msg, sizeof(o->err));
}

static const char *first_difference(const struct outcome *a, const struct outcome *b,
				    char *buf, size_t len)
{
	if (a->rc != b->rc) {
		snprintf(buf, len, "status: interp %d (%s), jit %d (%s)", a->rc, a->err, b->rc,
			 b->err);
		return buf;
	}
	if (a->r0 != b->r0) {
		snprintf(buf, len, "r0: interp 0x%" PRIx64 ", jit 0x%" PRIx64, a->r0, b->r0);
		return buf;
	}
	for (size_t i = 0; i < PROGEN_MEM_SIZE; i++)
		if (a->mem[i] != b->mem[i]) {
			const char *what = i >= PROGEN_STACK_DUMP ? "stack" : i >= PROGEN_REG_DUMP ? "registers" : "memory";
			snprintf(buf, len, "%s: byte %zu: interp 0x%02x, jit 0x%02x%s", what, i,
				 a->mem[i], b->mem[i],
				 i >= PROGEN_REG_DUMP && i < PROGEN_STACK_DUMP ? " (r = (byte - 256) / 8)" : "");
			return buf;
		}
	for (size_t i = 0; i < MAP_VALUE_SIZE; i++)
		if (a->map[i] != b->map[i]) {
			snprintf(buf, len, "map value byte %zu: interp 0x%02x, jit 0x%02x", i,
				 a->map[i], b->map[i]);
			return buf;
		}
	if (a->acc != b->acc) {
		snprintf(buf, len, "helper state: interp 0x%" PRIx64 ", jit 0x%" PRIx64, a->acc,
			 b->acc);
		return buf;
	}
	return NULL;
}

/* One program on f->inputs inputs; 0 if the backends agreed every time. */
static int fuzz_program(struct fuzz *f, uint64_t seed, uint64_t *mem)
{
	struct progen_cfg cfg = {.target_insns = f->size, .max_funcs = 4,
				 .map_value_size = MAP_VALUE_SIZE};
	struct isa_insn *insns = NULL;
	size_t n = progen_generate(seed, &cfg, &insns);
	struct map *maps[1] = {f->map};
	struct prog p = {.name = "fuzz", .insns = insns, .insn_cnt = n, .maps = maps, .map_cnt = 1};
	static struct outcome a, b;
	uint8_t input[PROGEN_MEM_SIZE], map_init[MAP_VALUE_SIZE];
	uint64_t rng = seed ^ 0xa5a5a5a5a5a5a5a5ull;
	struct err e = {{0}};
	char why[1400];
	int bad = 0;

	if (!n) {
		fprintf(stderr, "jit_diff: out of memory\n");
		exit(2);
	}
	f->programs++;
	f->insns += n;
	struct isa_error ierr;
	if (isa_decode(insns, n, 0, &ierr)) {
		snprintf(why, sizeof(why), "the generator made invalid bytecode: insn %zu: %s",
			 ierr.index, ierr.msg);
		memset(input, 0, sizeof(input));
		bad = 1;
		goto report;
	}
	if (jit_compile(&p, &f->helpers, &e)) {
		snprintf(why, sizeof(why), "the JIT refused a valid program: %s", e.msg);
		memset(input, 0, sizeof(input));
		bad = 1;
		goto report;
	}
	for (int k = 0; k < f->inputs; k++) {
		for (size_t i = 0; i < PROGEN_MEM_SIZE; i += 8) {
			uint64_t v = progen_rand(&rng);
			memcpy(input + i, &v, 8);
		}
		for (size_t i = 0; i < MAP_VALUE_SIZE; i += 8) {
			uint64_t v = progen_rand(&rng);
			memcpy(map_init + i, &v, 8);
		}
		run_one(f, &p, 0, input, map_init, mem, &a);
		run_one(f, &p, 1, input, map_init, mem, &b);
		f->runs++;
		if (a.rc) {
			/* A generator bug: the program is not safe by construction. */
			snprintf(why, sizeof(why), "the interpreter rejected the program: %s", a.err);
			bad = 1;
			goto report;
		}
		if (first_difference(&a, &b, why, sizeof(why))) {
			bad = 1;
			goto report;
		}
	}
report:
	if (bad) {
		f->mismatches++;
		if (f->mismatches <= MAX_REPORTS) {
			printf("MISMATCH seed %" PRIu64 " (replay: --seed %" PRIu64
			       " --count 1): %s\n", seed, seed, why);
			if (f->verbose || f->mismatches == 1)
				print_prog(insns, n, input);
		}
	}
	jit_free(&p);
	free(insns);
	return bad;
}

static int usage(void)
{
	fprintf(stderr, "usage: jit_diff [--seconds S] [--count N] [--seed N] [--inputs K] "
			"[--size INSNS] [-v]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct fuzz f = {.inputs = 4, .size = 120};
	double seconds = 0;
	uint64_t count = 0, seed = (uint64_t)time(NULL);
	struct err e = {{0}};

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "-v")) {
			f.verbose = 1;
			continue;
		}
		if (!v)
			return usage();
		if (!strcmp(a, "--seconds"))
			seconds = strtod(v, NULL);
		else if (!strcmp(a, "--count"))
			count = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--seed"))
			seed = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--inputs"))
			f.inputs = atoi(v);
		else if (!strcmp(a, "--size"))
			f.size = strtoull(v, NULL, 0);
		else
			return usage();
		i++;
	}
	if (!seconds && !count)
		seconds = 10;
	if (f.inputs < 1 || f.size < 40)
		return usage();

	f.helpers.fn[PROGEN_HELPER_MIX] = helper_mix;
	f.helpers.fn[PROGEN_HELPER_MEMXOR] = helper_memxor;
	struct map_def def = {.type = MAP_TYPE_ARRAY, .key_size = 4,
			      .value_size = MAP_VALUE_SIZE, .max_entries = 1, .name = "fuzz"};
	if (map_create(&def, &f.map, &e)) {
		fprintf(stderr, "jit_diff: %s\n", e.msg);
		return 2;
	}
	f.map_value = map_array_base(f.map);
	uint64_t *mem = aligned_alloc(64, (PROGEN_MEM_SIZE + 63) / 64 * 64);
	if (!f.map_value || !mem) {
		fprintf(stderr, "jit_diff: cannot set up memory\n");
		return 2;
	}

	double start = now(), last = start;
	for (uint64_t i = 0; (!count || i < count); i++) {
		fuzz_program(&f, seed + i, mem);
		if ((i & 255) == 0) {
			double t = now();
			if (seconds && t - start >= seconds)
				break;
			if (f.verbose && t - last >= 10) {
				printf("%.0f s: %" PRIu64 " programs, %" PRIu64 " mismatches\n",
				       t - start, f.programs, f.mismatches);
				fflush(stdout);
				last = t;
			}
		}
	}
	double t = now() - start;
	printf("jit_diff: %" PRIu64 " programs, %" PRIu64 " runs, %" PRIu64
	       " instructions, %" PRIu64 " mismatches, %.0f programs/s, %.0f runs/s "
	       "(seed %" PRIu64 ", %.1f s)\n",
	       f.programs, f.runs, f.insns, f.mismatches, f.programs / t, f.runs / t, seed, t);
	free(mem);
	map_free(f.map);
	return f.mismatches ? 1 : 0;
}
