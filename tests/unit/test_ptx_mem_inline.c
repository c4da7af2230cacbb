/* SPDX-License-Identifier: MIT */
/*
 * Mem probes inline (ptx_emit_mem_probe's site block, ptx_inject_opts.
 * mem_code): the clang-built memtrace and mem-signal programs pasted into
 * every corpus kernel are accepted by the real ptxas; every access an
 * independent line scan counts is in exactly one region (the probe after
 * a run of accesses: one election, one wait, mem_code run for each); the
 * access's address copied before it, its size and kind as immediates,
 * predicated accesses skipped by a branch on the inverted guard, generic
 * ones by isspacep.global, a region of a program with a loop or a call
 * closed by a shfl.sync (not bar.warp.sync, which orders memory); where runs end (labels, branches,
 * barriers, warp-synchronous instructions, guarded and generic accesses,
 * 8 accesses) and the loop form of a run; runs by lanes at once, their
 * reductions combined across the lanes or not; the size rule (mem_inline_max)
 * and the call form it falls back to; programs with local memory say so.
 * Semantics on a GPU: tests/gpu/inject_check.c (both forms, exact counts),
 * tests/gpu/tools.sh (memtrace's bytes).
 */
#include "testutil.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/object.h"
#include "bpf/verifier.h"
#include "ptx/ptx_emit.h"
#include "ptx/ptx_inject.h"
#include "ptx/ptx_wrap.h"
#include "ptx_check.h"
#include "ptx_corpus.h"
#include "ptx_refs.h"

static size_t count_str(const char *text, const char *s)
{
	size_t n = 0;
	for (const char *p = text; (p = strstr(p, s)); p += strlen(s))
		n++;
	return n;
}

/*
 * The regions of text ("{ // mem probes of K access"), in order: their
 * count, and their accesses into k[] (up to max) and *sum.
 */
static size_t regions(const char *text, unsigned *k, size_t max, size_t *sum)
{
	static const char tag[] = "\t{ // mem probes of ";
	size_t n = 0;

	*sum = 0;
	for (const char *p = text; (p = strstr(p, tag)); p += strlen(tag)) {
		unsigned v = (unsigned)strtoul(p + strlen(tag), NULL, 10);
		if (n < max)
			k[n] = v;
		*sum += v;
		n++;
	}
	return n;
}

/* A mem probe of the gpu/mem program of object path in both forms. */
struct mem_probe {
	char *extra, *func, *site, sym[160];
	int local;
};

static void mem_probe_make(const char *path, struct mem_probe *mp)
{
	struct object *ob;
	struct err e = {{0}};
	struct ptx_buf b = {0}, func = {0}, site = {0};
	char sym[128] = "";

	if (object_open(path, &ob, &e) || object_create_maps(ob, &e))
		fail_msg("%s: %s", path, e.msg);
	for (size_t k = 0; k < ob->prog_cnt; k++) {
		struct prog *p = ob->progs[k];
		if (p->type != PROG_TYPE_GPU_MEM)
			continue;
		/* the arrays' geometry, as the agent gives it: lookups and
		 * updates inline (ptx_emit.h), no key on a frame */
		struct ptx_map_ref refs[16] = {{0}};
		ptx_refs_of(p, refs, 16);
		assert_true(p->map_cnt <= 16);
		struct ptx_emit_opts o = {.maps = refs};
		if (verifier_check(p, NULL, NULL, &e) ||
		    ptx_emit_mem_probe(&b, &func, &site, p, &o, sym, &mp->local, &e))
			fail_msg("%s: %s", path, e.msg);
		break;
	}
	assert_true(sym[0] && site.len && func.len);
	snprintf(mp->sym, sizeof(mp->sym), "%s_probe", sym);
	const char *texts[3] = {b.text, func.text, site.text};
	struct ptx_buf rt = {0};
	ptx_emit_runtime_used(&rt, texts, 3);
	if (b.len)
		ptx_buf_append(&rt, b.text, b.len);
	mp->extra = rt.len ? ptx_buf_take(&rt, NULL) : strdup("");
	mp->func = ptx_buf_take(&func, NULL);
	mp->site = ptx_buf_take(&site, NULL);
	ptx_buf_free(&b);
	object_free(ob);
}

static void mem_probe_free(struct mem_probe *mp)
{
	free(mp->extra);
	free(mp->func);
	free(mp->site);
}

/* loop: ptx_inject_opts.mem_run_loop (2: .mem_simt); regions:
 * .mem_regions; elect: .elect_sync */
static char *inject_mem_elect(const struct ptx_module *m, const char *kernel,
			      const struct mem_probe *mp, size_t max, int loop, int elect,
			      int *inlined, size_t *sites, size_t *regions)
{
	struct ptx_inject_opts o = {.kernel = kernel, .mem_sym = mp->sym, .mem_code = mp->site,
				    .mem_func = mp->func, .mem_inline_max = max,
				    .mem_run_loop = loop == 1, .mem_simt = loop == 2,
				    .mem_inlined = inlined,
				    .mem_sites = sites, .mem_regions = regions,
				    .extra = mp->extra, .only_kernel = 1,
				    .min_version_major = 7, .min_version_minor = 8,
				    .elect_sync = elect};
	struct err e = {{0}};
	char *out;
	size_t len;
	if (ptx_inject(m, &o, &out, &len, &e))
		fail_msg("%s: %s", kernel, e.msg);
	assert_int_equal(strlen(out), len);
	return out;
}

static char *inject_mem_regions(const struct ptx_module *m, const char *kernel,
				const struct mem_probe *mp, size_t max, int loop, int *inlined,
				size_t *sites, size_t *regions)
{
	return inject_mem_elect(m, kernel, mp, max, loop, 0, inlined, sites, regions);
}

static char *inject_mem(const struct ptx_module *m, const char *kernel,
			const struct mem_probe *mp, size_t max, int *inlined, size_t *sites)
{
	return inject_mem_regions(m, kernel, mp, max, 0, inlined, sites, NULL);
}

static void ptxas_ok(const char *out, const char *arch, const char *what)
{
	ptx_corpus_ptxas_ok(out, arch, what, "ptx-mem-inline-failed.ptx");
}

/*
 * Every kernel of every corpus module with mem-signal inline (memtrace,
 * larger, on the examples' kernels), with a copy an access and with a copy
 * a region: every access the line scan counts in one region, one copy an
 * access or a region, no call left, the probe functions not in the
 * module; ptxas accepts both for sm_90a; and a copy an access with the
 * runner elected by elect.sync (the module's target raised to sm_90),
 * which ptxas accepts for sm_90 and sm_100; memtrace's %smid read once.
 */
static void test_corpus_inline(void **state)
{
	struct mem_probe sig = {0}, mt = {0};
	char **paths;
	size_t n = ptx_corpus_list(&paths), kernels = 0, total = 0;

	mem_probe_make(TEST_BPF_DIR "/policies/mem-signal.bpf.o", &sig);
	mem_probe_make(TEST_BPF_DIR "/tools/memtrace.bpf.o", &mt);
	/* neither keeps local memory: both are pasted */
	assert_int_equal(sig.local, 0);
	assert_int_equal(mt.local, 0);
	assert_null(strstr(sig.site, ".local"));
	for (size_t i = 0; i < n; i++) {
		char *text;
		struct ptx_module *m = ptx_check_parse(paths[i], &text);
		const struct mem_probe *mp = strstr(paths[i], "build/examples/") ? &mt : &sig;
		for (size_t k = 0; k < 4 * ptx_module_kernel_count(m); k++) {
			/* each kernel four times: a copy an access (they fit), one
			 * a region, a copy an access elected by elect.sync, a copy
			 * a region run by lanes (memtrace; mem-signal stores: a
			 * copy an access) */
			const char *name = ptx_module_kernel_name(m, k / 4);
			int lanes = k % 4 == 3, loop = k % 4 == 1 ? 1 : lanes ? 2 : 0;
			int elect = k % 4 == 2, inlined = 0;
			size_t want, exits, sites = 0, n_regions = 0;
			ptx_corpus_count(text, name, &want, &exits);
			char *out = inject_mem_elect(m, name, mp, SIZE_MAX, loop,
						     elect ? PTX_ELECT_SYNC_ALL : 0, &inlined,
						     &sites, &n_regions);
			const char *body = strstr(out, ".entry ");
			assert_non_null(body);
			size_t in_regions, n = regions(body, NULL, 0, &in_regions);
			size_t copies = count_str(body, "\t{ // mem probe of program");
			int one = loop == 1 || (lanes && mp == &mt);
			if (!inlined || sites != want || in_regions != want || n != n_regions ||
			    n > want || copies != (one ? n : want))
				fail_msg("%s %s: %zu sites, %zu in %zu regions, %zu pasted (inline "
					 "%d, loop %d), want %zu", paths[i], name, sites, in_regions, n,
					 copies, inlined, loop, want);
			assert_null(strstr(out, mp->sym));
			/* memtrace's per-SM maps: the SM's id read once, at the
			 * kernel's entry, not in each pasted copy */
			if (mp == &mt)
				assert_int_equal(count_str(body, "%smid"), 1);
			if (elect) {
				/* every region's election, and nothing else's */
				assert_int_equal(count_str(body, "elect.sync"), n);
				assert_null(strstr(body, "%lanemask_lt"));
				/* raised to sm_90 where lower (sm_90a modules stay) */
				const char *tg = ptx_module_target(m);
				int low = atoi(tg + 3) < 90;
				assert_non_null(strstr(out, low ? "\n.target sm_90" : tg));
				ptxas_ok(out, low ? "sm_90" : tg, paths[i]);
				if (low)
					ptxas_ok(out, "sm_100", paths[i]);
			} else {
				assert_int_equal(count_str(body, "%lanemask_lt"), n);
				assert_null(strstr(body, "elect.sync"));
				ptxas_ok(out, "sm_90a", paths[i]);
			}
			total += loop || elect ? 0 : want;
			kernels += !loop && !elect;
			if (lanes && mp == &sig)
				assert_null(strstr(body, "lanes at once"));
			free(out);
		}
		ptx_module_free(m);
		free(text);
	}
	assert_true(kernels >= 20 && total >= 50);
	ptx_corpus_free_list(paths, n);
	mem_probe_free(&sig);
	mem_probe_free(&mt);
}

static const char kernel_text[] =
	".version 7.8\n.target sm_75\n.address_size 64\n"
	".global .align 4 .u32 g_var;\n"
	".visible .entry k(.param .u64 p)\n{\n"
	"\t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n"
	"\tld.param.u64 %rd1, [p];\n\tmov.u32 %r1, %tid.x;\n"
	"\tsetp.eq.u32 %p1, %r1, 0;\n"
	"\t@%p1 ld.global.v4.u32 {%r0, %r1, %r2, %r3}, [%rd1+16];\n"
	"\t@!%p1 st.u8 [%rd1+-3], %r1;\n"
	"\tatom.global.add.u64 %rd2, [%rd1], 1;\n"
	"\tld.u32 %r2, [g_var];\n"
	"\tret;\n}\n";

/*
 * What one kernel's accesses get (none of them in a run with another: two
 * guarded, two generic): the address copied before the access, the region
 * after it with the size | kind << 32 immediate, the inverted guard's skip
 * branch, isspacep.global for generic accesses (cvta.global for a generic
 * access through a .global variable's name), nothing of that for a plain
 * .global access; ptxas accepts it.
 */
static void test_sites(void **state)
{
	struct mem_probe mp = {0};
	struct ptx_module *m;
	struct err e = {{0}};
	int inlined = 0;
	unsigned k[8];
	size_t sum;

	mem_probe_make(TEST_BPF_DIR "/policies/mem-signal.bpf.o", &mp);
	assert_int_equal(ptx_parse(kernel_text, strlen(kernel_text), &m, &e), 0);
	char *out = inject_mem(m, "k", &mp, SIZE_MAX, &inlined, NULL);
	assert_true(inlined);
	/* ld.global.v4.u32: 16 bytes, a load; st.u8: 1, a store; atom: 8, kind 2 */
	assert_non_null(strstr(out, "mov.b64 %gxm_sk, 0x10;"));
	assert_non_null(strstr(out, "mov.b64 %gxm_sk, 0x100000001;"));
	assert_non_null(strstr(out, "mov.b64 %gxm_sk, 0x200000008;"));
	assert_non_null(strstr(out, "mov.b64 %gxm_sk, 0x4;"));
	/* the address before the access, the guard (inverted) after it: lanes
	 * that did not access skip the probe */
	assert_non_null(strstr(out, "\tmov.u64 %gxi_a0, %rd1;\n\tadd.s64 %gxi_a0, %gxi_a0, 16;\n"
				    "\t@%p1 ld.global.v4.u32 {%r0, %r1, %r2, %r3}, [%rd1+16];\n"
				    "\t@!%p1 bra gxi_m0;\n\t{ // mem probes of 1 access,"));
	assert_non_null(strstr(out, "\tmov.u64 %gxi_a0, %rd1;\n\tsub.s64 %gxi_a0, %gxi_a0, 3;\n"
				    "\t@!%p1 st.u8 [%rd1+-3], %r1;\n\t@%p1 bra gxi_m1;\n"
				    "\tisspacep.global %gxi_g, %gxi_a0;\n\t@!%gxi_g bra gxi_m1;\n"));
	/* the global atomic: no guard, no test, no label */
	assert_non_null(strstr(out, "\tmov.u64 %gxi_a0, %rd1;\n"
				    "\tatom.global.add.u64 %rd2, [%rd1], 1;\n\t{ // mem probes"));
	assert_null(strstr(out, "gxi_m2:"));
	assert_non_null(strstr(out, "\tmov.u64 %gxi_a0, g_var;\n"
				    "\tcvta.global.u64 %gxi_a0, %gxi_a0;\n\tld.u32 %r2, [g_var];\n"
				    "\tisspacep.global %gxi_g, %gxi_a0;\n\t@!%gxi_g bra gxi_m3;\n"));
	assert_int_equal(regions(out, k, 8, &sum), 4);
	assert_int_equal(sum, 4);
	assert_int_equal(count_str(out, "\t{ // mem probe of program"), 4);
	assert_int_equal(count_str(out, "gxi_m0:\n"), 1);
	/* one election a region; the program's block has none of its own;
	 * mem-signal branches only forward: no wait (test_wait) */
	assert_int_equal(count_str(out, "activemask.b32"), 4);
	assert_int_equal(count_str(out, "shfl.sync"), 0);
	assert_int_equal(count_str(out, "gxi_d:\n\t}\n"), 4);
	assert_null(strstr(mp.site, "activemask"));
	assert_null(strstr(mp.site, "shfl.sync"));
	assert_null(strstr(out, "bar.warp.sync"));
	ptxas_ok(out, "sm_90a", "sites");
	free(out);
	ptx_module_free(m);
	mem_probe_free(&mp);
}

/*
 * Runs: 3 accesses of one straight line of code (two loads, a store: one
 * region after the store); a barrier, a guarded access, a generic one and a
 * label end runs; 10 loads in a row whose address register each overwrites
 * (the copy before each: the address the load used) make a run of 8 and
 * one of 2.  Each region has a copy of the program an access (size and
 * kind immediates), or with mem_run_loop one copy, a loop over its
 * accesses (their addresses shifted down; size and kind in registers, or
 * an immediate where they are all the same).
 */
static const char runs_text[] =
	".version 7.8\n.target sm_90\n.address_size 64\n"
	".visible .entry k(.param .u64 p)\n{\n"
	"\t.reg .pred %p<2>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<8>;\n"
	"\tld.param.u64 %rd1, [p];\n\tmov.u32 %r1, %tid.x;\n"
	"\tsetp.eq.u32 %p1, %r1, 0;\n"
	"\tld.global.u32 %r2, [%rd1];\n\tadd.s32 %r2, %r2, 1;\n"
	"\tld.global.u32 %r3, [%rd1+4];\n\tst.global.u32 [%rd1+8], %r2;\n"
	"\tbar.sync 0;\n"
	"\tld.global.u32 %r4, [%rd1+12];\n"
	"\t@%p1 ld.global.u32 %r5, [%rd1+16];\n"
	"\tld.u32 %r6, [%rd1+20];\n"
	"\tmov.u64 %rd4, %rd1;\n"
	"$L__BB0_1:\n"
	"\tld.global.u64 %rd4, [%rd4];\n\tld.global.u64 %rd4, [%rd4];\n"
	"\tld.global.u64 %rd4, [%rd4];\n\tld.global.u64 %rd4, [%rd4];\n"
	"\tld.global.u64 %rd4, [%rd4];\n\tld.global.u64 %rd4, [%rd4];\n"
	"\tld.global.u64 %rd4, [%rd4];\n\tld.global.u64 %rd4, [%rd4];\n"
	"\tld.global.u64 %rd4, [%rd4];\n\tld.global.u64 %rd4, [%rd4];\n"
	"\tsetp.ne.u64 %p1, %rd4, 0;\n\t@%p1 bra $L__BB0_1;\n"
	"\tret;\n}\n";

static void test_runs(void **state)
{
	struct mem_probe mp = {0};
	struct ptx_module *m;
	struct err e = {{0}};

	mem_probe_make(TEST_BPF_DIR "/tools/memtrace.bpf.o", &mp);
	assert_int_equal(ptx_parse(runs_text, strlen(runs_text), &m, &e), 0);
	for (int loop = 0; loop < 2; loop++) {
		int inlined = 0;
		size_t sites = 0, n_regions = 0, sum;
		unsigned k[16];
		char *out = inject_mem_regions(m, "k", &mp, SIZE_MAX, loop, &inlined, &sites,
					       &n_regions);
		assert_true(inlined);
		assert_int_equal(sites, 16);
		assert_int_equal(n_regions, 6);
		assert_int_equal(regions(out, k, 16, &sum), 6);
		assert_int_equal(sum, 16);
		unsigned want[] = {3, 1, 1, 1, 8, 2};
		for (size_t i = 0; i < 6; i++)
			assert_int_equal(k[i], want[i]);
		assert_int_equal(count_str(out, "\t{ // mem probe of program"), loop ? 6 : 16);
		/* the first run: copies before each access, the region after the last */
		assert_non_null(strstr(out, "\tmov.u64 %gxi_a0, %rd1;\n\tld.global.u32 %r2, [%rd1];\n"
					    "\tadd.s32 %r2, %r2, 1;\n\tmov.u64 %gxi_a1, %rd1;\n"
					    "\tadd.s64 %gxi_a1, %gxi_a1, 4;\n\tld.global.u32 %r3, [%rd1+4];\n"
					    "\tmov.u64 %gxi_a2, %rd1;\n\tadd.s64 %gxi_a2, %gxi_a2, 8;\n"
					    "\tst.global.u32 [%rd1+8], %r2;\n\t{ // mem probes of 3 accesses"));
		/* memtrace branches only forward: no wait (test_wait); the barrier
		 * comes after the first region */
		assert_int_equal(count_str(out, "shfl.sync"), 0);
		assert_non_null(strstr(out, "gxi_d:\n\t}\n\tbar.sync 0;\n"));
		/* the run of 8: each address as the load found it */
		assert_non_null(strstr(out, "$L__BB0_1:\n\tmov.u64 %gxi_a0, %rd4;\n"
					    "\tld.global.u64 %rd4, [%rd4];\n\tmov.u64 %gxi_a1, %rd4;\n"));
		assert_non_null(strstr(out, "\tmov.u64 %gxi_a7, %rd4;\n\tld.global.u64 %rd4, [%rd4];\n"
					    "\t{ // mem probes of 8 accesses"));
		assert_non_null(strstr(out, "\t.reg .b64 %gxi_a<8>;\n"));
		/* the last run ends before the branch */
		assert_non_null(strstr(out, "\t}\n\tsetp.ne.u64 %p1, %rd4, 0;\n\t@%p1 bra $L__BB0_1;\n"));
		if (loop) {
			/* sizes and kinds differ: registers, shifted with the addresses */
			assert_non_null(strstr(out, "\tmov.b64 %gxi_s0, 0x4;\n\tmov.b64 %gxi_s1, 0x4;\n"
						    "\tmov.b64 %gxi_s2, 0x100000004;\n"));
			assert_non_null(strstr(out, "\tmov.b64 %gxi_a0, %gxi_a1;\n"
						    "\tmov.b64 %gxi_s0, %gxi_s1;\n"
						    "\tmov.b64 %gxi_a1, %gxi_a2;\n"
						    "\tmov.b64 %gxi_s1, %gxi_s2;\n"
						    "\tsub.u32 %gxi_n, %gxi_n, 1;\n"));
			/* all the same: an immediate */
			assert_non_null(strstr(out, "\tmov.u32 %gxi_n, 8;\ngxi_l:\n"
						    "\t.pragma \"nounroll\";\n"
						    "\tmov.b64 %gxm_addr, %gxi_a0;\n"
						    "\tmov.b64 %gxm_sk, 0x8;\n"));
		} else {
			assert_null(strstr(out, "gxi_l:"));
			assert_non_null(strstr(out, "\tmov.b64 %gxm_addr, %gxi_a2;\n"
						    "\tmov.b64 %gxm_sk, 0x100000004;\n"));
			assert_non_null(strstr(out, "\tmov.b64 %gxm_addr, %gxi_a7;\n"
						    "\tmov.b64 %gxm_sk, 0x8;\n"));
		}
		ptxas_ok(out, "sm_90a", loop ? "runs, loop" : "runs");
		free(out);
	}
	ptx_module_free(m);
	mem_probe_free(&mp);
}

/*
 * Runs probed by lanes at once (ptx_inject_opts.mem_simt): memtrace (only
 * reductions) on runs_text: its 3 runs of several accesses (3, 8, 2) each
 * one region run by that many lanes, one copy of the program a region (6),
 * each lane's access chosen by its rank; mem-signal stores to its maps
 * without atomics: the runner as before.  ptxas accepts both.
 */
static void test_lanes(void **state)
{
	static const char *const progs[] = {TEST_BPF_DIR "/tools/memtrace.bpf.o",
					    TEST_BPF_DIR "/policies/mem-signal.bpf.o"};
	struct ptx_module *m;
	struct err e = {{0}};

	assert_int_equal(ptx_parse(runs_text, strlen(runs_text), &m, &e), 0);
	for (size_t i = 0; i < 2; i++) {
		struct mem_probe mp = {0};
		mem_probe_make(progs[i], &mp);
		struct ptx_inject_opts o = {.kernel = "k", .mem_sym = mp.sym, .mem_code = mp.site,
					    .mem_func = mp.func, .mem_inline_max = SIZE_MAX,
					    .mem_simt = 1, .extra = mp.extra, .only_kernel = 1,
					    .min_version_major = 7, .min_version_minor = 8};
		char *out;
		size_t len;
		if (ptx_inject(m, &o, &out, &len, &e))
			fail_msg("%s: %s", progs[i], e.msg);
		if (i == 0) {
			assert_int_equal(count_str(out, "lanes at once\n"), 3);
			assert_non_null(strstr(out, "of 8 accesses, once per warp, by 8 lanes at once"));
			assert_int_equal(count_str(out, "\t{ // mem probe of program"), 6);
			assert_int_equal(count_str(out, "popc.b32 %gxi_j, %gxi_t;\n"), 3);
			assert_non_null(strstr(out, "\tsetp.eq.u32 %gxi_p, %gxi_j, 7;\n"
						    "\t@%gxi_p mov.b64 %gxm_addr, %gxi_a7;\n"));
		} else {
			assert_int_equal(count_str(out, "lanes at once"), 0);
			assert_int_equal(count_str(out, "\t{ // mem probe of program"), 16);
		}
		ptxas_ok(out, "sm_90a", progs[i]);
		free(out);
		mem_probe_free(&mp);
	}
	ptx_module_free(m);
}

/*
 * The lanes' reductions combined (ptx_inject_opts.mem_agg, ptx_agg.h):
 * memtrace on runs_text, its 3 lanes regions (3, 8 and 2 accesses) with
 * every `red.global` of the program in the combined form (two matches
 * each) where mem_agg is 1, only the region of 8 where it is 8, and the 3
 * regions of one access as they were; none without mem_agg, in the
 * runner's form or on a target before sm_70 (no match.sync).  ptxas
 * accepts it.
 */
static void test_lanes_agg(void **state)
{
	struct mem_probe mp = {0};
	struct err e = {{0}};
	char *old_text = strdup(runs_text), *at = strstr(old_text, "sm_90");
	struct ptx_module *m, *old;

	mem_probe_make(TEST_BPF_DIR "/tools/memtrace.bpf.o", &mp);
	memcpy(at, "sm_60", 5);
	assert_int_equal(ptx_parse(runs_text, strlen(runs_text), &m, &e), 0);
	assert_int_equal(ptx_parse(old_text, strlen(old_text), &old, &e), 0);
	size_t reds = count_str(mp.site, "\tred.global.");
	assert_true(reds >= 2);
	static const unsigned aggs[] = {0, 1, 8}, combined[] = {0, 3, 1};
	for (size_t a = 0; a < 3; a++)
		for (int simt = 0; simt < 2; simt++)
			for (int sm60 = 0; sm60 < 2; sm60++) {
				struct ptx_inject_opts o = {
					.kernel = "k", .mem_sym = mp.sym, .mem_code = mp.site,
					.mem_func = mp.func, .mem_inline_max = SIZE_MAX,
					.mem_simt = simt, .mem_agg = aggs[a], .extra = mp.extra,
					.only_kernel = 1, .min_version_major = 7,
					.min_version_minor = 8};
				char *out;
				size_t len;
				if (ptx_inject(sm60 ? old : m, &o, &out, &len, &e))
					fail_msg("memtrace: %s", e.msg);
				size_t want = simt && !sm60 ? combined[a] : 0;
				assert_int_equal(count_str(out, "lanes at once"), simt ? 3 : 0);
				assert_int_equal(count_str(out, "match.any.sync"), 2 * reds * want);
				assert_int_equal(count_str(out, "\t.reg .pred %gxi_rq;\n"), want);
				/* a reduction a copy of the program; the regions of
				 * one access (the runner) keep theirs as they were */
				assert_int_equal(count_str(out, "red.global."),
						 reds * (simt ? 6 : 16));
				assert_int_equal(count_str(out, "\t@%gxi_rq red.global."), reds * want);
				if (want)
					ptxas_ok(out, "sm_90a", "memtrace, reductions combined");
				free(out);
			}
	ptx_module_free(old);
	ptx_module_free(m);
	free(old_text);
	mem_probe_free(&mp);
}

/*
 * elect.sync out of loops (PTX_ELECT_SYNC_OUT_OF_LOOPS, the agent's default
 * on sm_90): runs_text's 4 regions before its loop elect by elect.sync, the
 * 2 in the loop (between $L__BB0_1 and the branch back) by the lane mask;
 * with PTX_ELECT_SYNC_ALL every region by elect.sync; the target raised
 * either way; ptxas accepts both.
 */
static void test_elect_loops(void **state)
{
	struct mem_probe mp = {0};
	struct ptx_module *m;
	struct err e = {{0}};

	mem_probe_make(TEST_BPF_DIR "/tools/memtrace.bpf.o", &mp);
	assert_int_equal(ptx_parse(runs_text, strlen(runs_text), &m, &e), 0);
	for (int all = 0; all < 2; all++) {
		int inlined = 0;
		size_t sites = 0, n = 0;
		char *out = inject_mem_elect(m, "k", &mp, SIZE_MAX, 0,
					     all ? PTX_ELECT_SYNC_ALL : PTX_ELECT_SYNC_OUT_OF_LOOPS,
					     &inlined, &sites, &n);
		assert_int_equal(n, 6);
		assert_int_equal(count_str(out, "elect.sync"), all ? 6 : 4);
		assert_int_equal(count_str(out, "%lanemask_lt"), all ? 0 : 2);
		assert_non_null(strstr(out, "\n.target sm_90\n"));
		assert_non_null(strstr(out, ".version 8.0\n"));
		ptxas_ok(out, "sm_90", all ? "elect everywhere" : "elect out of loops");
		free(out);
	}
	ptx_module_free(m);
	mem_probe_free(&mp);
}

/*
 * Programs that branch only forward (memcost_none: only to its end;
 * memtrace: its tests) need no wait after their regions; one that calls
 * (mem_local: a bpf-to-bpf callee) gets the shfl.sync after each, and
 * likewise in the called form's function; ptx_inject_opts.mem_wait
 * overrides it both ways.
 */
static void test_wait(void **state)
{
	const char *progs[] = {TEST_BPF_DIR "/bench/progs/memcost_none.bpf.o",
			       TEST_BPF_DIR "/tools/memtrace.bpf.o",
			       TEST_BPF_DIR "/tests/progs/mem_local.bpf.o"};
	struct ptx_module *m;
	struct err e = {{0}};

	assert_int_equal(ptx_parse(runs_text, strlen(runs_text), &m, &e), 0);
	for (size_t i = 0; i < 3; i++) {
		struct mem_probe mp = {0};
		mem_probe_make(progs[i], &mp);
		/* called, likewise: its lanes wait only for the one that calls */
		assert_int_equal(count_str(mp.func, "shfl.sync"), i == 2);
		/* the program's choice, then always, then never (mem_wait) */
		for (int w = 0; w < 3; w++) {
			struct ptx_inject_opts o = {.kernel = "k", .mem_sym = mp.sym,
						    .mem_code = mp.site, .mem_func = mp.func,
						    .mem_inline_max = SIZE_MAX,
						    .mem_wait = w == 2 ? -1 : w, .extra = mp.extra,
						    .only_kernel = 1, .min_version_major = 7,
						    .min_version_minor = 8};
			char *out;
			size_t len;
			if (ptx_inject(m, &o, &out, &len, &e))
				fail_msg("%s: %s", progs[i], e.msg);
			size_t want = w == 1 || (w == 0 && i == 2) ? 6 : 0;
			assert_int_equal(count_str(out, "\tshfl.sync.idx.b32 %gxi_t, %gxm_mask, 0, 31, "
							"%gxm_mask;\n\t}\n"), want);
			assert_int_equal(count_str(out, "\tactivemask.b32 %gxm_mask;\n"), 6);
			ptxas_ok(out, "sm_90a", progs[i]);
			free(out);
		}
		mem_probe_free(&mp);
	}
	ptx_module_free(m);
}

/*
 * The size rule: a copy an access while their bytes are at most
 * mem_inline_max, else a copy a region (a loop) while those fit, else (or
 * with 0) every access calls mem_sym, with mem_func in the module.
 */
static void test_size_rule(void **state)
{
	struct mem_probe mp = {0};
	struct ptx_module *m;
	struct err e = {{0}};
	size_t sites = 0, bytes;
	int inlined = -1;

	mem_probe_make(TEST_BPF_DIR "/policies/mem-signal.bpf.o", &mp);
	bytes = strlen(mp.site);
	assert_int_equal(ptx_parse(kernel_text, strlen(kernel_text), &m, &e), 0);
	char *out = inject_mem(m, "k", &mp, 4 * bytes, &inlined, &sites);
	assert_int_equal(sites, 4);
	assert_true(inlined);
	free(out);
	for (int i = 0; i < 2; i++) {
		out = inject_mem(m, "k", &mp, i ? 0 : 4 * bytes - 1, &inlined, &sites);
		assert_false(inlined);
		/* four calls of the one function, defined once (its block inside) */
		assert_int_equal(count_str(out, "call "), 4);
		assert_int_equal(count_str(out, mp.sym), 1 + 4);
		assert_int_equal(count_str(out, "\t{ // mem probe of program"), 1);
		ptxas_ok(out, "sm_90a", "called");
		free(out);
	}
	ptx_module_free(m);
	/* runs_text: 16 accesses in 6 regions.  A copy an access up to 16
	 * copies' bytes, then a copy a region up to 6 copies', then called */
	assert_int_equal(ptx_parse(runs_text, strlen(runs_text), &m, &e), 0);
	const struct {
		size_t max;
		int inlined, copies;
	} rule[] = {{16 * bytes, 1, 16}, {16 * bytes - 1, 1, 6}, {6 * bytes, 1, 6},
		    {6 * bytes - 1, 0, 1}};
	for (size_t i = 0; i < 4; i++) {
		out = inject_mem(m, "k", &mp, rule[i].max, &inlined, &sites);
		assert_int_equal(sites, 16);
		assert_int_equal(inlined, rule[i].inlined);
		assert_int_equal(count_str(out, "\t{ // mem probe of program"), rule[i].copies);
		free(out);
	}
	ptx_module_free(m);
	mem_probe_free(&mp);
}

/* A program whose ctx pointer goes to a callee and whose stack is indexed
 * by a computed offset keeps local memory: *local says so. */
static void test_local(void **state)
{
	struct mem_probe mp = {0};

	mem_probe_make(TEST_BPF_DIR "/tests/progs/mem_local.bpf.o", &mp);
	assert_int_equal(mp.local, strstr(mp.site, ".local") != NULL);
	assert_true(mp.local);
	mem_probe_free(&mp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus_inline),
		cmocka_unit_test(test_sites),
		cmocka_unit_test(test_runs),
		cmocka_unit_test(test_lanes),
		cmocka_unit_test(test_lanes_agg),
		cmocka_unit_test(test_elect_loops),
		cmocka_unit_test(test_wait),
		cmocka_unit_test(test_size_rule),
		cmocka_unit_test(test_local),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
