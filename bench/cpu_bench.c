/* SPDX-License-Identifier: MIT */
/*
 * cpu_bench.c - CPU benchmarks: the same eBPF bytecode run side by side, in
 * one process, by every engine at hand (gpuext's interpreter and JIT, uBPF's
 * interpreter and JIT) and the same source compiled natively.
 *
 * For each benchmark the harness first runs every engine once on identical
 * memory and requires the same r0 and the same memory afterwards as the
 * native build (exit status 1 otherwise), then times them.  Timing is
 * round-robin: sample s of every engine is taken before sample s+1 of any,
 * so that noise from other processes on a shared machine spreads over all
 * columns instead of hitting one.  A sample is a calibrated number of
 * back-to-back runs lasting at least --min-ms; the reported figure is the
 * median over samples of ns per run.  Samples are short (1 ms) and many (51)
 * on purpose: on a loaded machine a short sample usually runs within one
 * scheduler time slice, so the median is that of undisturbed samples, while
 * long samples would all include preemptions and measure the load.
 *
 * Usage: cpu_bench [--check] [--out DIR|-] [--samples N] [--min-ms MS]
 *                  [--bpf-dir DIR]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "native/native.h"

#ifndef BENCH_GPUEXT_REV
#define BENCH_GPUEXT_REV "unknown"
#endif

enum { MAX_ENGINES = 5, MAX_SAMPLES = 101, COMPILE_REPS = 31 };

struct bench_case {
	const char *name;    /* also the section "bench/NAME" and the object NAME.bpf.o */
	const char *what;    /* one line for the report */
	size_t mem_len;
	void (*init)(uint8_t *mem, size_t len);
	native_fn native;
};

/* Deterministic input bytes (xorshift64), the same in every run of the bench. */
static void init_random(uint8_t *mem, size_t len)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		mem[i] = (uint8_t)(x >> 24);
	}
}

static void init_loop_sum(uint8_t *mem, size_t len)
{
	const uint32_t iterations = 1000;

	memset(mem, 0, len);
	memcpy(mem, &iterations, sizeof(iterations));
}

/* Source in the first half, zeroes in the destination half. */
static void init_memcpy(uint8_t *mem, size_t len)
{
	init_random(mem, len / 2);
	memset(mem + len / 2, 0, len - len / 2);
}

static const struct bench_case bench_cases[] = {
	{"loop_sum", "bounded loop, 1000 iterations of a mul/xor/shift recurrence", 8,
	 init_loop_sum, native_loop_sum},
	{"fnv1a", "64-bit FNV-1a hash over a 1 KiB buffer, byte by byte", 1024, init_random,
	 native_fnv1a},
	{"memcpy_copy", "copy 1 KiB from the first half of memory to the second, 8 bytes a step",
	 2048, init_memcpy, native_memcpy_copy},
	{"switch_vm", "byte-code interpreter: 16-way switch over 1 KiB of opcodes", 1024,
	 init_random, native_switch_vm},
	{"xxh64_unrolled", "xxHash64-style rounds over 512 bytes, fully unrolled straight-line "
	 "code", 512, init_random, native_xxh64_unrolled},
};
enum { NR_CASES = sizeof(bench_cases) / sizeof(bench_cases[0]) };

/* The native column is an engine whose "program" is the native function. */
static uint64_t native_run(void *state, uint8_t *mem, uint64_t len)
{
	return ((const struct bench_case *)state)->native(mem, len);
}

static const struct bench_engine native_engine = {
	.name = "native",
	.key = "native",
	.run = native_run,
};

struct column {
	const struct bench_engine *eng;
	void *state;
	uint64_t iters;            /* runs per sample */
	double ns[MAX_SAMPLES];    /* ns per run, one per sample */
	double median, min, max;   /* over samples */
	double compile_ns;         /* median JIT compile time (JIT engines) */
};

struct case_result {
	const struct bench_case *bc;
	size_t insn_cnt;
	uint64_t r0;
	struct column cols[MAX_ENGINES];
	size_t col_cnt;
};

struct options {
	int check_only;
	const char *out_dir;
	const char *bpf_dir;
	int samples;
	double min_ms;
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ns per run of iters back-to-back runs on mem. */
static double time_runs(struct column *c, uint8_t *mem, size_t len, uint64_t iters)
{
	volatile uint64_t sink;
	double t0 = now_ns();

	for (uint64_t i = 0; i < iters; i++)
		sink = c->eng->run(c->state, mem, len);
	(void)sink;
	return (now_ns() - t0) / (double)iters;
}

/* Median JIT compile time over COMPILE_REPS fresh prepare() calls. */
static int time_compile(struct column *c, const char *name, const struct isa_insn *insns,
			size_t cnt, char *err, size_t err_len)
{
	double t[COMPILE_REPS];

	for (int i = 0; i < COMPILE_REPS; i++) {
		void *state;

		if (c->eng->prepare(name, insns, cnt, &state, err, err_len) < 0)
			return -1;
		t[i] = c->eng->compile_ns(state);
		c->eng->release(state);
	}
	c->compile_ns = median(t, COMPILE_REPS);
	return 0;
}

/*
 * Run every column once on a fresh copy of the input and compare r0 and the
 * memory afterwards with the native column (the first).
 */
static int check_results(struct case_result *res, const uint8_t *input)
{
	size_t len = res->bc->mem_len;
	uint8_t *ref = malloc(len), *mem = malloc(len);
	int bad = 0;

	if (!ref || !mem) {
		fprintf(stderr, "cpu_bench: out of memory\n");
		free(ref);
		free(mem);
		return -1;
	}
	for (size_t i = 0; i < res->col_cnt; i++) {
		struct column *c = &res->cols[i];
		uint8_t *m = i ? mem : ref;
		uint64_t r0;

		memcpy(m, input, len);
		r0 = c->eng->run(c->state, m, len);
		if (!i) {
			res->r0 = r0;
			continue;
		}
		if (r0 != res->r0) {
			fprintf(stderr, "cpu_bench: %s: %s returns 0x%llx, native 0x%llx\n",
				res->bc->name, c->eng->name, (unsigned long long)r0,
				(unsigned long long)res->r0);
			bad = 1;
		} else if (memcmp(m, ref, len)) {
			size_t at = 0;

			while (m[at] == ref[at])
				at++;
			fprintf(stderr, "cpu_bench: %s: %s leaves different memory at byte %zu\n",
				res->bc->name, c->eng->name, at);
			bad = 1;
		}
	}
	free(ref);
	free(mem);
	return bad ? -1 : 0;
}

static void measure(struct case_result *res, const uint8_t *input, const struct options *o)
{
	size_t len = res->bc->mem_len;
	uint8_t *mem = malloc(len);

	if (!mem) {
		fprintf(stderr, "cpu_bench: out of memory\n");
		exit(1);
	}
	memcpy(mem, input, len);
	/*
	 * Calibrate: double the runs of a batch until it lasts 1 ms, take the
	 * fastest of 5 such batches as the time of one run (a batch that was
	 * preempted must not shrink the samples), and size the samples to last
	 * min_ms at that speed.
	 */
	for (size_t i = 0; i < res->col_cnt; i++) {
		struct column *c = &res->cols[i];
		uint64_t batch = 1;
		double best;

		while (batch < (UINT64_C(1) << 40) && time_runs(c, mem, len, batch) * batch < 1e6)
			batch *= 2;
		best = time_runs(c, mem, len, batch);
		for (int k = 1; k < 5; k++) {
			double t = time_runs(c, mem, len, batch);
			if (t < best)
				best = t;
		}
		c->iters = (uint64_t)(o->min_ms * 1e6 / best) + 1;
	}
	for (int s = 0; s < o->samples; s++)
		for (size_t i = 0; i < res->col_cnt; i++)
			res->cols[i].ns[s] = time_runs(&res->cols[i], mem, len, res->cols[i].iters);
	for (size_t i = 0; i < res->col_cnt; i++) {
		struct column *c = &res->cols[i];
		double sorted[MAX_SAMPLES];

		memcpy(sorted, c->ns, sizeof(double) * o->samples);
		c->median = median(sorted, o->samples);
		c->min = sorted[0];
		c->max = sorted[o->samples - 1];
	}
	free(mem);
}

static const struct column *find_col(const struct case_result *res, const char *key)
{
	for (size_t i = 0; i < res->col_cnt; i++)
		if (res->cols[i].eng && !strcmp(res->cols[i].eng->key, key))
			return &res->cols[i];
	return NULL;
}

/* The ratio a/b of two columns' medians, or 0 if either is missing. */
static double ratio(const struct case_result *res, const char *a, const char *b)
{
	const struct column *x = find_col(res, a), *y = find_col(res, b);

	return x && y && y->median > 0 ? x->median / y->median : 0;
}

/* The ratios reported for each benchmark: {label, json key, numerator, denominator}. */
static const struct {
	const char *label, *key, *num, *den;
} ratios[] = {
	{"gpuext interp / native", "gpuext_interp_vs_native", "gpuext_interp", "native"},
	{"gpuext interp / uBPF interp", "gpuext_interp_vs_ubpf_interp", "gpuext_interp",
	 "ubpf_interp"},
	{"gpuext JIT / native", "gpuext_jit_vs_native", "gpuext_jit", "native"},
	{"gpuext JIT / uBPF JIT", "gpuext_jit_vs_ubpf_jit", "gpuext_jit", "ubpf_jit"},
	{"uBPF interp / native", "ubpf_interp_vs_native", "ubpf_interp", "native"},
	{"uBPF JIT / native", "ubpf_jit_vs_native", "ubpf_jit", "native"},
};
enum { NR_RATIOS = sizeof(ratios) / sizeof(ratios[0]) };

/* Median over benchmarks of one ratio (0 where the columns are missing). */
static double median_ratio(const struct case_result *res, size_t n, size_t r)
{
	double v[NR_CASES];
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		double x = ratio(&res[i], ratios[r].num, ratios[r].den);
		if (x > 0)
			v[k++] = x;
	}
	return k ? median(v, k) : 0;
}

/* "model name" of the first CPU in /proc/cpuinfo. */
static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	snprintf(buf, len, "unknown-cpu");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) || !colon)
			continue;
		colon += 1 + (colon[1] == ' ');
		colon[strcspn(colon, "\n")] = '\0';
		snprintf(buf, len, "%s", colon);
		break;
	}
	fclose(f);
}

/* The three load averages of /proc/loadavg ("1.02 0.87 0.60"), or "?". */
static void load_average(char *buf, size_t len)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double l1, l5, l15;

	if (f && fscanf(f, "%lf %lf %lf", &l1, &l5, &l15) == 3)
		snprintf(buf, len, "%.2f %.2f %.2f", l1, l5, l15);
	else
		snprintf(buf, len, "?");
	if (f)
		fclose(f);
}

/* File-name form of the CPU model: "Intel(R) Xeon(R) Gold 6338" -> "intel-xeon-gold-6338". */
static void slug(const char *in, char *out, size_t len)
{
	size_t n = 0;

	for (const char *p = in; *p && n + 1 < len; p++) {
		if (!strncmp(p, "(R)", 3) || !strncmp(p, "(TM)", 4) || !strncmp(p, "(tm)", 4)) {
			p = strchr(p, ')');
			continue;
		}
		if ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9'))
			out[n++] = *p;
		else if (*p >= 'A' && *p <= 'Z')
			out[n++] = *p - 'A' + 'a';
		else if (n && out[n - 1] != '-')
			out[n++] = '-';
	}
	while (n && out[n - 1] == '-')
		n--;
	out[n] = '\0';
}

struct report_info {
	char date[32];       /* 2026-11-22T01:23:45Z */
	char load_before[64], load_after[64]; /* /proc/loadavg: 1, 5, 15 minutes */
	char cpu[256];
	char kernel[256];
	long cores;
	const char *command;
};

static void fmt_ns(char *buf, size_t len, const struct column *c)
{
	if (!c)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f", c->median);
}

static void fmt_ratio(char *buf, size_t len, double r)
{
	if (r > 0)
		snprintf(buf, len, "%.2fx", r);
	else
		snprintf(buf, len, "-");
}

static const char *const col_keys[MAX_ENGINES] = {"native", "gpuext_interp", "gpuext_jit",
						  "ubpf_interp", "ubpf_jit"};
static const char *const col_names[MAX_ENGINES] = {"native", "gpuext interp", "gpuext JIT",
						   "uBPF interp", "uBPF JIT"};

/*
 * Issue 4's targets, where both JIT columns exist: gpuext's JIT within 2x of
 * native on the median, and no slower than uBPF's JIT on every benchmark.
 */
static void write_targets(FILE *f, const struct case_result *res, size_t n)
{
	size_t vs_native = 0, vs_ubpf = 0, slower = 0;

	while (vs_native < NR_RATIOS && strcmp(ratios[vs_native].key, "gpuext_jit_vs_native"))
		vs_native++;
	while (vs_ubpf < NR_RATIOS && strcmp(ratios[vs_ubpf].key, "gpuext_jit_vs_ubpf_jit"))
		vs_ubpf++;
	double median_native = median_ratio(res, n, vs_native);
	if (!(median_native > 0) || !(median_ratio(res, n, vs_ubpf) > 0))
		return;
	fprintf(f, "\nTargets: gpuext JIT / native, median %.2fx (within 2x: %s); gpuext JIT no "
		   "slower than uBPF JIT on", median_native, median_native <= 2 ? "met" : "NOT met");
	for (size_t i = 0; i < n; i++)
		slower += ratio(&res[i], "gpuext_jit", "ubpf_jit") > 1;
	fprintf(f, " %zu of %zu benchmarks", n - slower, n);
	for (size_t i = 0, k = 0; i < n; i++) {
		double r = ratio(&res[i], "gpuext_jit", "ubpf_jit");
		if (r > 1)
			fprintf(f, "%s%s %.2fx", k++ ? ", " : " (slower: ", res[i].bc->name, r);
	}
	fprintf(f, "%s.\n", slower ? ")" : "");
}

static void write_markdown(FILE *f, const struct case_result *res, size_t n,
			   const struct report_info *ri, const struct options *o)
{
	char a[32];

	fprintf(f, "# gpuext CPU benchmarks, %s\n\n", ri->date);
	fprintf(f, "- machine: %s, %ld cores online, Linux %s\n", ri->cpu, ri->cores, ri->kernel);
	fprintf(f, "- load average (1/5/15 min) before: %s, after: %s\n", ri->load_before,
		ri->load_after);
	fprintf(f, "- command: `%s`\n", ri->command);
	fprintf(f, "- gpuext %s; %s; native column: %s\n", BENCH_GPUEXT_REV, bench_ubpf_version(),
		native_compiler);
	fprintf(f, "- ns per run: median of %d samples, each sample >= %.0f ms of back-to-back "
		   "runs (runs per sample in parentheses); every engine returned the same r0 and "
		   "left the same memory as native\n\n", o->samples, o->min_ms);
	fprintf(f, "| benchmark | insns |");
	for (int k = 0; k < MAX_ENGINES; k++)
		fprintf(f, " %s ns |", col_names[k]);
	fprintf(f, "\n|---|---:|");
	for (int k = 0; k < MAX_ENGINES; k++)
		fprintf(f, "---:|");
	fprintf(f, "\n");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "| %s | %zu |", res[i].bc->name, res[i].insn_cnt);
		for (int k = 0; k < MAX_ENGINES; k++) {
			const struct column *c = find_col(&res[i], col_keys[k]);

			fmt_ns(a, sizeof(a), c);
			if (c)
				fprintf(f, " %s (%llu) |", a,
					(unsigned long long)c->iters * o->samples);
			else
				fprintf(f, " not built |");
		}
		fprintf(f, "\n");
	}
	fprintf(f, "\nFastest sample, ns per run (the least disturbed one; on a loaded machine the "
		   "medians above are the figures of record, these show the spread):\n\n"
		   "| benchmark |");
	for (int k = 0; k < MAX_ENGINES; k++)
		fprintf(f, " %s |", col_names[k]);
	fprintf(f, "\n|---|");
	for (int k = 0; k < MAX_ENGINES; k++)
		fprintf(f, "---:|");
	fprintf(f, "\n");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "| %s |", res[i].bc->name);
		for (int k = 0; k < MAX_ENGINES; k++) {
			const struct column *c = find_col(&res[i], col_keys[k]);
			if (c)
				fprintf(f, " %.1f |", c->min);
			else
				fprintf(f, " not built |");
		}
		fprintf(f, "\n");
	}
	fprintf(f, "\nRatios of the medians (above 1: the first engine is slower):\n\n"
		   "| benchmark |");
	for (size_t r = 0; r < NR_RATIOS; r++)
		fprintf(f, " %s |", ratios[r].label);
	fprintf(f, "\n|---|");
	for (size_t r = 0; r < NR_RATIOS; r++)
		fprintf(f, "---:|");
	fprintf(f, "\n");
	for (size_t i = 0; i <= n; i++) {
		fprintf(f, "| %s |", i < n ? res[i].bc->name : "**median**");
		for (size_t r = 0; r < NR_RATIOS; r++) {
			fmt_ratio(a, sizeof(a),
				  i < n ? ratio(&res[i], ratios[r].num, ratios[r].den)
					: median_ratio(res, n, r));
			fprintf(f, " %s |", a);
		}
		fprintf(f, "\n");
	}
	write_targets(f, res, n);
	fprintf(f, "\nJIT compile time (translation to machine code and mapping it executable; "
		   "loading and decoding not counted; median of %d compiles), microseconds per "
		   "1000 instructions; small programs are dominated by fixed costs, "
		   "xxh64_unrolled shows the per-instruction cost:\n\n", COMPILE_REPS);
	fprintf(f, "| benchmark | insns | gpuext JIT | uBPF JIT |\n|---|---:|---:|---:|\n");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "| %s | %zu |", res[i].bc->name, res[i].insn_cnt);
		for (int k = 0; k < 2; k++) {
			const struct column *c = find_col(&res[i], k ? "ubpf_jit" : "gpuext_jit");
			if (c)
				fprintf(f, " %.1f |", c->compile_ns / 1e3 / res[i].insn_cnt * 1000);
			else
				fprintf(f, " not built |");
		}
		fprintf(f, "\n");
	}
	fprintf(f, "\nBenchmarks (source: bench/kernels/NAME.h, one source for the eBPF and "
		   "the native build):\n\n");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "- %s: %s; %zu bytes of memory; r0 = 0x%llx\n", res[i].bc->name,
			res[i].bc->what, res[i].bc->mem_len, (unsigned long long)res[i].r0);
}

/* A JSON string: quoted, with quotes, backslashes and control characters escaped. */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void write_json(FILE *f, const struct case_result *res, size_t n,
		       const struct report_info *ri, const struct options *o)
{
	const char *const keys[] = {"date", "cpu", "kernel", "load_before", "load_after",
				    "command", "gpuext", "ubpf", "native_compiler"};
	const char *const vals[] = {ri->date, ri->cpu, ri->kernel, ri->load_before,
				    ri->load_after, ri->command, BENCH_GPUEXT_REV,
				    bench_ubpf_version(), native_compiler};

	fprintf(f, "{\n");
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		fprintf(f, "  \"%s\": ", keys[k]);
		json_str(f, vals[k]);
		fprintf(f, ",\n");
	}
	fprintf(f, "  \"cores\": %ld,\n  \"samples\": %d,\n  \"min_sample_ms\": %g,\n"
		   "  \"benchmarks\": [\n", ri->cores, o->samples, o->min_ms);
	for (size_t i = 0; i < n; i++) {
		const struct case_result *r = &res[i];

		fprintf(f, "    {\"name\": \"%s\", \"insns\": %zu, \"mem_bytes\": %zu, "
			   "\"r0\": \"0x%llx\",\n     \"ns_per_run\": {",
			r->bc->name, r->insn_cnt, r->bc->mem_len, (unsigned long long)r->r0);
		for (size_t k = 0; k < r->col_cnt; k++) {
			const struct column *c = &r->cols[k];
			fprintf(f, "%s\n       \"%s\": {\"median\": %.2f, \"min\": %.2f, "
				   "\"max\": %.2f, \"runs\": %llu}",
				k ? "," : "", c->eng->key, c->median, c->min, c->max,
				(unsigned long long)c->iters * o->samples);
		}
		fprintf(f, "},\n     \"ratios\": {");
		int first = 1;
		for (size_t q = 0; q < NR_RATIOS; q++) {
			double x = ratio(r, ratios[q].num, ratios[q].den);
			if (x > 0) {
				fprintf(f, "%s\"%s\": %.3f", first ? "" : ", ", ratios[q].key, x);
				first = 0;
			}
		}
		fprintf(f, "},\n     \"jit_compile_us_per_1000_insns\": {");
		first = 1;
		for (size_t k = 0; k < r->col_cnt; k++) {
			const struct column *c = &r->cols[k];
			if (!c->eng->compile_ns)
				continue;
			fprintf(f, "%s\"%s\": %.2f", first ? "" : ", ", c->eng->key,
				c->compile_ns / 1e3 / r->insn_cnt * 1000);
			first = 0;
		}
		fprintf(f, "}}%s\n", i + 1 < n ? "," : "");
	}
	fprintf(f, "  ],\n  \"median_ratios\": {");
	int first = 1;
	for (size_t q = 0; q < NR_RATIOS; q++) {
		double x = median_ratio(res, n, q);
		if (x > 0) {
			fprintf(f, "%s\"%s\": %.3f", first ? "" : ", ", ratios[q].key, x);
			first = 0;
		}
	}
	fprintf(f, "}\n}\n");
}

static int write_reports(const struct case_result *res, size_t n, const struct report_info *ri,
			 const struct options *o)
{
	char model[128], path[1024];
	FILE *f;

	slug(ri->cpu, model, sizeof(model));
	if (mkdir(o->out_dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "cpu_bench: %s: %s\n", o->out_dir, strerror(errno));
		return -1;
	}
	for (int json = 0; json < 2; json++) {
		snprintf(path, sizeof(path), "%s/%.10s-%s.%s", o->out_dir, ri->date, model,
			 json ? "json" : "md");
		if (!(f = fopen(path, "w"))) {
			fprintf(stderr, "cpu_bench: %s: %s\n", path, strerror(errno));
			return -1;
		}
		(json ? write_json : write_markdown)(f, res, n, ri, o);
		if (fclose(f)) {
			fprintf(stderr, "cpu_bench: %s: write failed\n", path);
			return -1;
		}
		printf("wrote %s\n", path);
	}
	return 0;
}

/* Prepare the engines of one benchmark, check them, and time them. */
static int run_case(const struct bench_case *bc, const struct bench_engine *const *engines,
		    size_t nr_engines, const struct options *o, struct case_result *res)
{
	char path[1024], section[128], err[1024];
	struct isa_insn *insns = NULL;
	uint8_t *input = malloc(bc->mem_len);
	int ret = -1;

	memset(res, 0, sizeof(*res));
	res->bc = bc;
	snprintf(path, sizeof(path), "%s/%s.bpf.o", o->bpf_dir, bc->name);
	snprintf(section, sizeof(section), "bench/%s", bc->name);
	if (!input || bench_load_prog(path, section, &insns, &res->insn_cnt, err, sizeof(err))) {
		fprintf(stderr, "cpu_bench: %s\n", input ? err : "out of memory");
		goto out;
	}
	bc->init(input, bc->mem_len);
	res->cols[0] = (struct column){.eng = &native_engine, .state = (void *)bc};
	res->col_cnt = 1;
	for (size_t i = 0; i < nr_engines; i++) {
		struct column *c = &res->cols[res->col_cnt];

		c->eng = engines[i];
		if ((!o->check_only && c->eng->compile_ns &&
		     time_compile(c, bc->name, insns, res->insn_cnt, err, sizeof(err))) ||
		    c->eng->prepare(bc->name, insns, res->insn_cnt, &c->state, err, sizeof(err))) {
			fprintf(stderr, "cpu_bench: %s\n", err);
			goto out;
		}
		res->col_cnt++;
	}
	if (check_results(res, input))
		goto out;
	if (!o->check_only)
		measure(res, input, o);
	ret = 0;
out:
	for (size_t i = 1; i < res->col_cnt; i++)
		res->cols[i].eng->release(res->cols[i].state);
	free(insns);
	free(input);
	return ret;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: cpu_bench [--check] [--out DIR|-] [--samples N] [--min-ms MS] "
		   "[--bpf-dir DIR]\n"
		   "  --check     run every engine once and compare results; no timing\n"
		   "  --out DIR   where the Markdown and JSON results go (default bench/results;"
		   " - for none)\n"
		   "  --samples N samples per engine, median reported (default 51)\n"
		   "  --min-ms MS minimum length of one sample (default 1)\n"
		   "  --bpf-dir   folder of the compiled NAME.bpf.o (default build/bpf/bench/progs)\n");
}

static int parse_args(int argc, char **argv, struct options *o, char *cmd, size_t cmd_len)
{
	size_t n = snprintf(cmd, cmd_len, "%s", argv[0]);

	*o = (struct options){.out_dir = "bench/results", .bpf_dir = "build/bpf/bench/progs",
			      .samples = 51, .min_ms = 1};
	for (int i = 1; i < argc; i++) {
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (n < cmd_len)
			n += snprintf(cmd + n, cmd_len - n, " %s", argv[i]);
		if (!strcmp(argv[i], "--check")) {
			o->check_only = 1;
			continue;
		}
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			exit(0);
		}
		if (!val)
			goto bad;
		if (!strcmp(argv[i], "--out"))
			o->out_dir = val;
		else if (!strcmp(argv[i], "--bpf-dir"))
			o->bpf_dir = val;
		else if (!strcmp(argv[i], "--samples"))
			o->samples = atoi(val);
		else if (!strcmp(argv[i], "--min-ms"))
			o->min_ms = atof(val);
		else
			goto bad;
		if (n < cmd_len)
			n += snprintf(cmd + n, cmd_len - n, " %s", val);
		i++;
	}
	if (o->samples < 1 || o->samples > MAX_SAMPLES || !(o->min_ms > 0)) {
		fprintf(stderr, "cpu_bench: --samples must be 1..%d and --min-ms > 0\n",
			MAX_SAMPLES);
		return -1;
	}
	return 0;
bad:
	usage(stderr);
	return -1;
}

int main(int argc, char **argv)
{
	const struct bench_engine *all[] = {bench_gpuext_interp(), bench_gpuext_jit(),
					    bench_ubpf_interp(), bench_ubpf_jit()};
	const struct bench_engine *engines[MAX_ENGINES];
	struct case_result res[NR_CASES];
	struct report_info ri = {0};
	struct options o;
	char cmd[1024];
	size_t nr_engines = 0;
	struct utsname un;
	time_t t = time(NULL);
	int failed = 0;

	if (parse_args(argc, argv, &o, cmd, sizeof(cmd)))
		return 2;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i])
			engines[nr_engines++] = all[i];
	if (!bench_gpuext_interp())
		printf("gpuext interp: not in libgpuext yet (src/bpf/interp.c, helpers.c)\n");
	if (!bench_gpuext_jit())
		printf("gpuext JIT: not in libgpuext yet (src/bpf/jit.h, helpers.c)\n");
	if (!bench_ubpf_interp())
		printf("%s\n", bench_ubpf_version());
	strftime(ri.date, sizeof(ri.date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	cpu_model(ri.cpu, sizeof(ri.cpu));
	snprintf(ri.kernel, sizeof(ri.kernel), "%s", uname(&un) ? "?" : un.release);
	ri.cores = sysconf(_SC_NPROCESSORS_ONLN);
	ri.command = cmd;
	load_average(ri.load_before, sizeof(ri.load_before));

	for (size_t i = 0; i < NR_CASES; i++) {
		if (run_case(&bench_cases[i], engines, nr_engines, &o, &res[i])) {
			failed = 1;
			continue;
		}
		printf("%-15s %4zu insns  r0=0x%016llx", res[i].bc->name, res[i].insn_cnt,
		       (unsigned long long)res[i].r0);
		for (size_t k = 0; k < res[i].col_cnt && !o.check_only; k++)
			printf("  %s %.1f ns", res[i].cols[k].eng->name, res[i].cols[k].median);
		printf("%s\n", o.check_only ? "  same result in every engine" : "");
	}
	if (failed) {
		fprintf(stderr, "cpu_bench: FAILED (see above)\n");
		return 1;
	}
	load_average(ri.load_after, sizeof(ri.load_after));
	if (!o.check_only && strcmp(o.out_dir, "-"))
		return write_reports(res, NR_CASES, &ri, &o) ? 1 : 0;
	return 0;
}
