/* SPDX-License-Identifier: MIT */
/*
 * verifier_bench - verification time of every compiled program under a
 * folder (default build/bpf: tools, policies, examples, test programs; not
 * the benchmark kernels of build/bpf/bench, which run unverified), of
 * loop-heavy programs near the instruction budget and of the worst case
 * we know, bench/progs/switch_vm (a 16-way switch in a loop over 1 KiB).
 * Each program is verified repeatedly (at least 5 times and 50 ms); the
 * median CPU time of the thread is printed (wall time on a shared machine
 * measures the other jobs too), with the peak resident memory at the end.
 *
 *   build/bench/verifier_bench [DIR]
 */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bpf/object.h"
#include "bpf/verifier.h"
#include "ptx/ptx_helpers.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * Median verification CPU time in ns, or 0 on rejection (message printed)
 * unless the program is expected to be refused (too complex).
 */
static uint64_t bench_prog(struct prog *p, const struct vfy_opts *o, struct vfy_stats *st,
			   bool refused)
{
	uint64_t t[64];
	unsigned n = 0;
	uint64_t start = now_ns();
	struct err e;

	do {
		uint64_t t0 = cpu_ns();
		bool accepted = verifier_check(p, o, st, &e) == 0;
		if (accepted == refused) {
			printf("  %s: %s\n", refused ? "ACCEPTED" : "REJECTED", refused ? "" : e.msg);
			return 0;
		}
		t[n++] = cpu_ns() - t0;
	} while (n < 64 && (n < 5 || now_ns() - start < 50000000ull));
	qsort(t, n, sizeof(t[0]), cmp_u64);
	return t[n / 2];
}

static uint64_t worst_ns;
static unsigned nprogs, nrejected;

static void bench_object(const char *path)
{
	struct object *obj;
	struct err e;
	if (object_open(path, &obj, &e) || object_create_maps(obj, &e)) {
		printf("%s: %s\n", path, e.msg);
		nrejected++;
		return;
	}
	for (size_t i = 0; i < obj->prog_cnt; i++) {
		struct prog *p = obj->progs[i];
		/* Raw programs get 4 KiB, so that length checks do not cut them short. */
		struct vfy_opts o = {.mem_size = 4096,
				     .helper_proto =
					     prog_type_is_gpu(p->type) ? ptx_helper_proto_find : NULL};
		struct vfy_stats st = {0};
		uint64_t ns = bench_prog(p, &o, &st, false);
		nprogs++;
		if (!ns) {
			nrejected++;
			continue;
		}
		if (ns > worst_ns)
			worst_ns = ns;
		printf("%-44s %-22s %5zu insns %8llu processed %6u states %9.3f ms\n", path, p->name,
		       p->insn_cnt, (unsigned long long)st.insns_processed, st.states,
		       (double)ns / 1e6);
	}
	object_free(obj);
}

static void bench_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[1024];
		size_t l = strlen(de->d_name);
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (de->d_type == DT_DIR) {
			/* build/bpf/bench: benchmark kernels run unverified (see README). */
			if (strcmp(de->d_name, "bench"))
				bench_dir(path);
			continue;
		}
		if (l >= 6 && !strcmp(de->d_name + l - 6, ".bpf.o"))
			bench_object(path);
	}
	closedir(d);
}

/*
 * Loop-heavy programs: nested counted loops with a map lookup and a
 * bounded index in the body, sized to process about `target` instructions.
 */
static void bench_loops(uint32_t outer, uint32_t inner, const char *what, bool refused)
{
	/* for (i = 0; i < outer; i++) for (j = 0; j < inner; j++) acc += mem[j & 63]; */
	struct isa_insn insns[] = {
		{0xb7, 0, 0, 0, 0},             /* r0 = 0 */
		{0xb7, 3, 0, 0, 0},             /* r3 = 0 (i) */
		{0xb7, 4, 0, 0, 0},             /* outer: r4 = 0 (j) */
		{0xbf, 5, 4, 0, 0},             /* inner: r5 = r4 */
		{0x57, 5, 0, 0, 63},            /* r5 &= 63 */
		{0xbf, 6, 1, 0, 0},             /* r6 = r1 */
		{0x0f, 6, 5, 0, 0},             /* r6 += r5 */
		{0x71, 7, 6, 0, 0},             /* r7 = *(u8 *)r6 */
		{0x0f, 0, 7, 0, 0},             /* r0 += r7 */
		{0x07, 4, 0, 0, 1},             /* r4 += 1 */
		{0xa5, 4, 0, -8, (int32_t)inner}, /* if r4 < inner goto inner */
		{0x07, 3, 0, 0, 1},             /* r3 += 1 */
		{0xa5, 3, 0, -11, (int32_t)outer}, /* if r3 < outer goto outer */
		{0x95, 0, 0, 0, 0},             /* exit */
	};
	struct prog *p;
	struct err e;
	struct vfy_stats st = {0};
	if (prog_from_insns(what, insns, sizeof(insns) / sizeof(insns[0]), &p, &e)) {
		printf("%s: %s\n", what, e.msg);
		return;
	}
	struct vfy_opts o = {.mem_size = 64};
	uint64_t ns = bench_prog(p, &o, &st, refused);
	if (ns)
		printf("%-67s %5zu insns %8llu processed %6u states %9.3f ms\n", what, p->insn_cnt,
		       (unsigned long long)st.insns_processed, st.states, (double)ns / 1e6);
	prog_free(p);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "build/bpf";

	printf("# verifier_bench: median CPU time of >= 5 runs (>= 50 ms) per program\n");
	bench_dir(dir);
	printf("# %u programs, %u rejected, slowest %.3f ms\n", nprogs, nrejected,
	       (double)worst_ns / 1e6);
	unsigned shipped_rejected = nrejected;
	printf("# loop-heavy programs (host budget %d instructions)\n", VFY_HOST_INSN_LIMIT);
	bench_loops(10, 100, "nested loops 10 x 100", false);
	bench_loops(100, 100, "nested loops 100 x 100", false);
	bench_loops(200, 600, "nested loops 200 x 600 (near the budget)", false);
	bench_loops(1000, 1000, "nested loops 1000 x 1000 (refused at the budget)", true);
	printf("# worst case: a byte-code interpreter, 16-way switch in a loop over 1 KiB\n");
	char path[1024];
	snprintf(path, sizeof(path), "%s/bench/progs/switch_vm.bpf.o", dir);
	bench_object(path);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("# peak resident memory %ld KiB\n", ru.ru_maxrss);
	return shipped_rejected ? 1 : 0;
}
