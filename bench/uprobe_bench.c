/* SPDX-License-Identifier: MIT */
/*
 * uprobe_bench - in-process API probe vs kernel uprobe on a real driver
 * call (issue 7, Must show 3), side by side in one process, one run.
 *
 * The call: cuDriverGetVersion of libcuda.so.1 (dlsym, as cudart gets its
 * pointers; a few ns, no GPU work, no cuInit needed), in a tight loop.
 * The programs: bench/progs/apiprobe.bpf.c's empty, counting and
 * hash-update entry programs, the same object both ways:
 *   - in process: through the agent's trampolines (apiprobe.h), JIT-compiled;
 *   - in the kernel: loaded by the uprobe backend (src/host/) and attached
 *     to libcuda's cuDriverGetVersion in this process only, one program at
 *     a time, the loop calling the real pointer.
 * Each row is the best of ROUNDS rounds (the machine is shared).  The
 * counting programs' counters are checked afterwards in both worlds, so a
 * row whose probe did not run cannot pass unnoticed.
 *
 *   uprobe_bench [--calls N] [--kernel-calls N] [--lib PATH] [BPF_OBJECT]
 *
 * Prints a markdown table.  Exits 1 on a wrong count, and when the kernel
 * refuses the programs (needs root, or CAP_BPF and CAP_PERFMON).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/apiprobe.h"
#include "bpf/map.h"
#include "bpf/object.h"
#include "bpf/verifier.h"
#include "host/host.h"

enum { ROUNDS = 7, ARGS = 1024 };

typedef int version_fn(int *);

/* Arguments for the calls: the hash program keys on PARM1 & 1023, so
 * successive calls update different elements (256 keys, 4-byte stride). */
static int version_out[ARGS];

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Best ns per call over ROUNDS rounds of `calls` calls of fn. */
static double time_calls(version_fn *volatile fn, long calls)
{
	double best = 1e300;
	for (int r = 0; r < ROUNDS; r++) {
		int bad = 0;
		double t0 = now_ns();
		for (long i = 0; i < calls; i++)
			bad |= fn(&version_out[i & (ARGS - 1)]);
		double t = (now_ns() - t0) / (double)calls;
		if (bad) {
			fprintf(stderr, "uprobe_bench: cuDriverGetVersion failed\n");
			exit(1);
		}
		if (t < best)
			best = t;
	}
	return best;
}

static const struct {
	const char *site, *prog, *what;
} rows[] = {
	{"bench_empty", "probe_empty", "empty program"},
	{"bench_count", "probe_count", "array counter (atomic add)"},
	{"bench_hash", "probe_hash", "hash update keyed by PARM1 & 1023"},
};
enum { NROWS = sizeof(rows) / sizeof(rows[0]) };

static int check_count(const char *where, uint64_t got, uint64_t want)
{
	if (got == want)
		return 0;
	fprintf(stderr, "uprobe_bench: %s counter %llu, expected %llu\n", where,
		(unsigned long long)got, (unsigned long long)want);
	return 1;
}

/* The kernel rows: each program attached alone to real in this process. */
static int time_kernel(struct object *obj, version_fn *real, const char *lib, long calls,
		       double *ns)
{
	struct host *h = NULL;
	struct host_target t;
	struct err e = {{0}};
	char target[PATH_MAX + 32];
	int ret = 1;

	snprintf(target, sizeof(target), "%s:cuDriverGetVersion", lib);
	if (host_resolve(target, getpid(), 0, &t, &e) || host_open(obj, &h, &e)) {
		fprintf(stderr, "uprobe_bench: kernel uprobes: %s\n", e.msg);
		return 1;
	}
	for (int i = 0; i < NROWS; i++) {
		if (host_attach_prog(h, rows[i].prog, getpid(), 0, &t, &e)) {
			fprintf(stderr, "uprobe_bench: %s\n", e.msg);
			goto out;
		}
		ns[i] = time_calls(real, calls);
		host_detach(h);
	}
	uint64_t v[64] = {0}; /* the kernel's array: one value */
	uint32_t key = 0;
	if (host_map_lookup(h, "calls", &key, v, sizeof(v[0]), &e)) {
		fprintf(stderr, "uprobe_bench: %s\n", e.msg);
		goto out;
	}
	ret = check_count("kernel", v[0], (uint64_t)ROUNDS * calls);
out:
	host_close(h);
	return ret;
}

int main(int argc, char **argv)
{
	const char *path = "build/bpf/bench/progs/apiprobe.bpf.o", *lib = "libcuda.so.1";
	long calls = 10 * 1000 * 1000, kcalls = 200 * 1000;
	struct object *obj = NULL;
	struct err e = {{0}};

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--calls") && i + 1 < argc)
			calls = strtol(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--kernel-calls") && i + 1 < argc)
			kcalls = strtol(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--lib") && i + 1 < argc)
			lib = argv[++i];
		else
			path = argv[i];
	}
	if (calls <= 0 || kcalls <= 0) {
		fprintf(stderr, "uprobe_bench: --calls and --kernel-calls need positive counts\n");
		return 1;
	}
	void *handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	version_fn *real = handle ? (version_fn *)dlsym(handle, "cuDriverGetVersion") : NULL;
	if (!real) {
		fprintf(stderr, "uprobe_bench: %s: cuDriverGetVersion: %s\n", lib, dlerror());
		return 1;
	}
	if (object_open(path, &obj, &e) || object_create_maps(obj, &e)) {
		fprintf(stderr, "uprobe_bench: %s\n", e.msg);
		return 1;
	}
	for (size_t i = 0; i < obj->prog_cnt; i++)
		if (verifier_check(obj->progs[i], NULL, NULL, &e)) {
			fprintf(stderr, "uprobe_bench: %s: %s\n", path, e.msg);
			return 1;
		}
	if (apiprobe_attach_object(obj, &e) < 0) {
		fprintf(stderr, "uprobe_bench: %s\n", e.msg);
		return 1;
	}

	double base = time_calls(real, calls), in[NROWS], kern[NROWS];
	for (int i = 0; i < NROWS; i++)
		in[i] = time_calls((version_fn *)apiprobe_wrap(rows[i].site, (void *)real), calls);
	uint64_t count = 0;
	uint32_t key = 0;
	map_lookup_copy(object_find_map(obj, "calls")->map, &key, &count);
	struct apiprobe_stats st;
	apiprobe_stats_get(&st);
	if (check_count("in-process", count, (uint64_t)ROUNDS * calls) || st.prog_errors)
		return 1;
	/* The kernel's view of the same maps starts empty: its own copies. */
	int kerr = time_kernel(obj, real, lib, kcalls, kern);
	double kbase = time_calls(real, kcalls); /* detached again: back to base */

	printf("| cuDriverGetVersion through a pointer | in-process probe ns/call | added "
	       "| kernel uprobe ns/call | added | kernel / in-process (added) |\n");
	printf("|---|---:|---:|---:|---:|---:|\n");
	printf("| unhooked | %.2f | 0 | %.2f | 0 | |\n", base, kbase);
	for (int i = 0; i < NROWS; i++) {
		if (kerr)
			printf("| %s | %.2f | +%.2f | - | - | |\n", rows[i].what, in[i],
			       in[i] - base);
		else
			printf("| %s | %.2f | +%.2f | %.1f | +%.1f | %.1fx |\n", rows[i].what,
			       in[i], in[i] - base, kern[i], kern[i] - kbase,
			       (kern[i] - kbase) / (in[i] - base > 0.01 ? in[i] - base : 0.01));
	}
	printf("\nbest of %d rounds; %ld calls per round in process, %ld with kernel uprobes "
	       "(attached to this process only); library %s; programs %s\n",
	       ROUNDS, calls, kcalls, lib, path);
	object_free(obj);
	dlclose(handle);
	return kerr;
}
