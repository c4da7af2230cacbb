/* SPDX-License-Identifier: MIT */
/*
 * Counted loops the injector unrolls (src/ptx/ptx_unroll.h,
 * ptx_inject_opts.mem_unroll): the shapes taken (a down-counter to 0 as
 * in reduce, an up-counter against a register with setp.eq and @!P, the
 * test on CNT + INV as NVVM writes i % 37-turn loops) and those refused
 * (setp.lt, a bound, counter or INV written in the loop, a branch inside,
 * the wrong polarity, a step of 0, a guarded update, the test before the
 * update, a nounroll pragma, K * C past the counter's width); the
 * instrumented module: the head test, K turns with one region of their
 * accesses, the loop as written after it with its own region, accepted by
 * ptxas; none without mem_unroll or where a region would have a copy an
 * access; every corpus kernel unrolled and through ptxas with every access
 * of the original in exactly one region of the loop as written or
 * outside loops.  Semantics on a GPU: tests/gpu/inject_check.c
 * (strided_sum, exact counts and identical output), tests/gpu/tools.sh
 * (memtrace's bytes on reduce).
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx/ptx_inject.h"
#include "ptx/ptx_parse.h"
#include "ptx/ptx_unroll.h"
#include "ptx_check.h"
#include "ptx_corpus.h"

static size_t count_str(const char *text, const char *s)
{
	size_t n = 0;
	for (const char *p = text; (p = strstr(p, s)); p += strlen(s))
		n++;
	return n;
}

/* Loops $L_ok* are of the shape, $L_no* are not. */
static const char loops_text[] =
	".version 8.2\n.target sm_75\n.address_size 64\n"
	".visible .entry k(.param .u64 p, .param .u32 n)\n{\n"
	"\t.reg .pred %p<8>;\n\t.reg .b32 %r<16>;\n\t.reg .b64 %rd<8>;\n"
	"\tld.param.u64 %rd1, [p];\n\tld.param.u32 %r1, [n];\n"
	"\tmov.u32 %r2, 0;\n\tmov.u32 %r4, 0;\n\tmov.u32 %r5, 0;\n\tmov.u32 %r7, 5;\n"
	"$L_ok_down:\n"
	"\tld.global.u32 %r3, [%rd1];\n\tadd.s64 %rd1, %rd1, 4;\n\tadd.s32 %r2, %r2, %r3;\n"
	"\tadd.s32 %r1, %r1, -4;\n\tsetp.ne.s32 %p1, %r1, 0;\n\t@%p1 bra $L_ok_down;\n"
	"$L_ok_up:\n"
	"\tld.global.u32 %r3, [%rd1+8];\n\tadd.s32 %r2, %r2, %r3;\n\tadd.s32 %r4, %r4, 1;\n"
	"\tsetp.eq.s32 %p2, %r4, %r1;\n\t@!%p2 bra $L_ok_up;\n"
	"$L_ok_inv:\n"
	"\tadd.s32 %r5, %r5, 2;\n\tld.global.u32 %r3, [%rd1];\n\tadd.s32 %r2, %r2, %r3;\n"
	"\tadd.s32 %r6, %r7, %r5;\n\tsetp.ne.s32 %p3, %r6, 0;\n\t@%p3 bra $L_ok_inv;\n"
	"$L_ok_store:\n"
	"\tld.global.u32 %r3, [%rd1];\n\tst.global.u32 [%rd1+4], %r3;\n\tadd.s64 %rd1, %rd1, 8;\n"
	"\tadd.s32 %r1, %r1, -1;\n\tsetp.ne.s32 %p1, %r1, 0;\n\t@%p1 bra $L_ok_store;\n"
	"$L_ok_mem_volatile:\n"
	"\tld.volatile.global.u32 %r3, [%rd1];\n\tadd.s32 %r2, %r2, %r3;\n"
	"\tadd.s32 %r1, %r1, -1;\n\tsetp.ne.s32 %p1, %r1, 0;\n\t@%p1 bra $L_ok_mem_volatile;\n"
	"$L_ok_mem_relaxed:\n"
	"\tld.relaxed.gpu.global.u32 %r3, [%rd1];\n\tadd.s32 %r2, %r2, %r3;\n"
	"\tadd.s32 %r1, %r1, -1;\n\tsetp.ne.s32 %p1, %r1, 0;\n\t@%p1 bra $L_ok_mem_relaxed;\n"
	"$L_ok_mem_acquire:\n"
	"\tld.acquire.gpu.global.u32 %r3, [%rd1];\n\tadd.s32 %r2, %r2, %r3;\n"
	"\tadd.s32 %r1, %r1, -1;\n\tsetp.ne.s32 %p1, %r1, 0;\n\t@%p1 bra $L_ok_mem_acquire;\n"
	"$L_ok_mem_mmio:\n"
	"\tld.mmio.relaxed.sys.global.u32 %r3, [%rd1];\n\tadd.s32 %r2, %r2, %r3;\n"
	"\tadd.s32 %r1, %r1, -1;\n\tsetp.ne.s32 %p1, %r1, 0;\n\t@%p1 bra $L_ok_mem_mmio;\n"
	"$L_ok_mem_atomic:\n"
	"\tatom.global.add.u32 %r3, [%rd1], 1;\n\tadd.s32 %r2, %r2, %r3;\n"
	"\tadd.s32 %r1, %r1, -1;\n\tsetp.ne.s32 %p1, %r1, 0;\n\t@%p1 bra $L_ok_mem_atomic;\n"
	"$L_no_lt:\n"
	"\tld.global.u32 %r3, [%rd1];\n\tadd.s32 %r4, %r4, 1;\n"
	"\tsetp.lt.s32 %p4, %r4, %r1;\n\t@%p4 bra $L_no_lt;\n"
	"$L_no_bound_written:\n"
	"\tld.global.u32 %r1, [%rd1];\n\tadd.s32 %r4, %r4, 1;\n"
	"\tsetp.ne.s32 %p4, %r4, %r1;\n\t@%p4 bra $L_no_bound_written;\n"
	"$L_no_twice:\n"
	"\tld.global.u32 %r3, [%rd1];\n\tadd.s32 %r4, %r4, 1;\n\tadd.s32 %r4, %r4, 1;\n"
	"\tsetp.ne.s32 %p4, %r4, 0;\n\t@%p4 bra $L_no_twice;\n"
	"$L_no_branch:\n"
	"\tld.global.u32 %r3, [%rd1];\n\t@%p1 bra $L_no_inner;\n\tadd.s32 %r2, %r2, 1;\n"
	"$L_no_inner:\n"
	"\tadd.s32 %r4, %r4, -1;\n\tsetp.ne.s32 %p4, %r4, 0;\n\t@%p4 bra $L_no_branch;\n"
	"$L_no_polarity:\n"
	"\tld.global.u32 %r3, [%rd1];\n\tadd.s32 %r4, %r4, -1;\n"
	"\tsetp.ne.s32 %p4, %r4, 0;\n\t@!%p4 bra $L_no_polarity;\n"
	"$L_no_step0:\n"
	"\tld.global.u32 %r3, [%rd1];\n\tadd.s32 %r4, %r4, 0;\n"
	"\tsetp.ne.s32 %p4, %r4, 0;\n\t@%p4 bra $L_no_step0;\n"
	"$L_no_guarded:\n"
	"\tld.global.u32 %r3, [%rd1];\n\t@%p1 add.s32 %r4, %r4, -1;\n"
	"\tsetp.ne.s32 %p4, %r4, 0;\n\t@%p4 bra $L_no_guarded;\n"
	"$L_no_inv_written:\n"
	"\tadd.s32 %r5, %r5, 2;\n\tld.global.u32 %r7, [%rd1];\n"
	"\tadd.s32 %r6, %r7, %r5;\n\tsetp.ne.s32 %p3, %r6, 0;\n\t@%p3 bra $L_no_inv_written;\n"
	"$L_no_test_first:\n"
	"\tld.global.u32 %r3, [%rd1];\n\tadd.s32 %r6, %r7, %r5;\n\tadd.s32 %r5, %r5, 2;\n"
	"\tsetp.ne.s32 %p3, %r6, 0;\n\t@%p3 bra $L_no_test_first;\n"
	"$L_no_pragma:\n"
	"\t.pragma \"nounroll\";\n\tld.global.u32 %r3, [%rd1];\n\tadd.s32 %r4, %r4, -1;\n"
	"\tsetp.ne.s32 %p4, %r4, 0;\n\t@%p4 bra $L_no_pragma;\n"
	"$L_ok_wide_step:\n"
	"\tld.global.u32 %r3, [%rd1];\n\tsub.s32 %r4, %r4, 0x40000000;\n"
	"\tsetp.ne.s32 %p4, %r4, 0;\n\t@%p4 bra $L_ok_wide_step;\n"
	"\tst.global.u32 [%rd1], %r2;\n\tret;\n}\n";

static void test_shapes(void **state)
{
	struct ptx_module *m;
	struct err e = {{0}};
	size_t ok = 0, no = 0;

	assert_int_equal(ptx_parse(loops_text, strlen(loops_text), &m, &e), 0);
	for (size_t i = m->funcs[0].head; i < m->funcs[0].end; i++) {
		const struct ptx_stmt *s = &m->stmts[i];
		if (s->kind != PTX_STMT_LABEL)
			continue;
		const struct ptx_tok *k = &m->toks[s->tok];
		char name[64];
		snprintf(name, sizeof(name), "%.*s", (int)k->len, m->text + k->off);
		struct ptx_unroll_loop l;
		int got = ptx_unroll_loop_at(m, &m->funcs[0], i, &l);
		int want = !strncmp(name, "$L_ok", 5);
		if (got != want)
			fail_msg("%s: taken %d, expected %d", name, got, want);
		ok += want;
		no += !want && strcmp(name, "$L_no_inner");
		if (!got)
			continue;
		/* what was read of it */
		assert_true(ptx_parse_tok_is(m, m->opnds[m->stmts[l.bra].opnd].tok, name));
		assert_int_equal(l.bits, 32);
		if (!strcmp(name, "$L_ok_down")) {
			assert_true(l.down && l.step == 4 && !l.ninv);
			assert_true(ptx_parse_tok_is(m, l.cnt, "%r1") && ptx_parse_tok_is(m, l.bound, "0"));
			assert_true(ptx_unroll_fits(&l, 4));
		} else if (!strcmp(name, "$L_ok_up")) {
			assert_true(!l.down && l.step == 1 && !l.ninv);
			assert_true(ptx_parse_tok_is(m, l.cnt, "%r4") &&
				    ptx_parse_tok_is(m, l.bound, "%r1"));
		} else if (!strcmp(name, "$L_ok_inv")) {
			assert_true(!l.down && l.step == 2 && l.ninv == 1);
			assert_true(ptx_parse_tok_is(m, l.cnt, "%r5") && ptx_parse_tok_is(m, l.inv, "%r7"));
		} else if (!strcmp(name, "$L_ok_store") || !strncmp(name, "$L_ok_mem_", 10)) {
			assert_true(l.down && l.step == 1 && !l.ninv);
		} else {
			/* 4 turns of 2^30 do not fit a 32-bit counter, 3 do */
			assert_true(l.down && l.step == 0x40000000);
			assert_false(ptx_unroll_fits(&l, 4));
			assert_true(ptx_unroll_fits(&l, 3));
		}
	}
	assert_int_equal(ok, 10);
	assert_int_equal(no, 10);
	ptx_module_free(m);
}

/* kernel of module text instrumented with the corpus's mem probe pasted
 * (lanes: runs probed by lanes), loops unrolled `unroll` turns (in_order:
 * ptx_inject_opts.mem_unroll_in_order). */
static char *instrument_order(const char *text, const char *kernel, int lanes, unsigned unroll,
			      int in_order, size_t *regions)
{
	struct ptx_module *m;
	struct err e = {{0}};
	char *mem_code = NULL, *extra = ptx_corpus_probes_mem("sm_75", NULL, &mem_code), *out;
	size_t len;

	assert_non_null(extra);
	if (ptx_parse(text, strlen(text), &m, &e))
		fail_msg("%s: %s", kernel, e.msg);
	struct ptx_inject_opts o = {.kernel = kernel, .mem_code = mem_code, .extra = extra,
				    .mem_simt = lanes, .mem_unroll = unroll,
				    .mem_unroll_in_order = in_order,
				    .mem_regions = regions, .only_kernel = 1,
				    .min_version_major = 7, .min_version_minor = 8};
	if (ptx_inject(m, &o, &out, &len, &e))
		fail_msg("%s: %s", kernel, e.msg);
	ptx_module_free(m);
	free(extra);
	free(mem_code);
	return out;
}

static char *instrument(const char *text, const char *kernel, int lanes, unsigned unroll,
			size_t *regions)
{
	return instrument_order(text, kernel, lanes, unroll, 0, regions);
}

static void ptxas_ok(const char *out, const char *what)
{
	ptx_corpus_ptxas_ok(out, "sm_90a", what, "ptx-unroll-failed.ptx");
}

/*
 * The accesses each unrolled loop's turns add to the regions of text: the
 * region right before PFX_uN_o (its K turns') holds K times the accesses
 * of the one after it (the loop as written's).  Returns their sum, 0 when
 * a pair does not match.
 */
static size_t unrolled_accesses(const char *text)
{
	static const char tag[] = "\t{ // mem probes of ";
	size_t sum = 0;

	for (const char *u = text; (u = strstr(u, "// unrolled ")); u++) {
		unsigned k = (unsigned)strtoul(u + strlen("// unrolled "), NULL, 10);
		const char *turns = strstr(u, tag), *rest = strstr(u, "_o:\n");
		const char *orig = rest ? strstr(rest, tag) : NULL;
		if (!turns || !orig || turns > rest)
			return 0;
		unsigned a = (unsigned)strtoul(turns + strlen(tag), NULL, 10);
		unsigned b = (unsigned)strtoul(orig + strlen(tag), NULL, 10);
		if (a != k * b)
			return 0;
		sum += a;
	}
	return sum;
}

/* The synthetic loops: the five taken ones unrolled (the wide step 2
 * turns a pass: 4 do not fit its 32-bit counter), in order with their
 * tests as written kept; ptxas accepts the module. */
static void test_inject_shapes(void **state)
{
	size_t regions = 0;
	char *out = instrument_order(loops_text, "k", 1, 4, 1, &regions);

	assert_int_equal(count_str(out, "// unrolled 4 turns"), 9);
	assert_null(strstr(out, "their loads first"));
	assert_int_equal(count_str(out, "// unrolled 2 turns"), 1);
	/* the up-counter's test: D = BOUND - X0, the negated X0 - BOUND */
	assert_non_null(strstr(out, "\tmov.b32 %gxi_ud, %r4;\n\tsub.s32 %gxi_ud, %gxi_ud, %r1;\n"
				    "\tneg.s32 %gxi_ud, %gxi_ud;\n\tsetp.lt.u32 %gxi_uq, %gxi_ud, 4;\n"));
	/* the INV form: X0 = CNT + INV */
	assert_non_null(strstr(out, "\tmov.b32 %gxi_ud, %r5;\n\tadd.s32 %gxi_ud, %gxi_ud, %r7;\n"));
	/* the turns' back edge to the test, the loop as written's to itself */
	assert_non_null(strstr(out, "\t@!%p2 bra $L_ok_up;\n\tbra gxi_u1_x;\ngxi_u1_o:\n"));
	assert_non_null(strstr(out, "\t@!%p2 bra gxi_u1_o;\ngxi_u1_x:\n"));
	/* every turn keeps its test */
	assert_int_equal(count_str(out, "setp.eq.s32 %p2, %r4, %r1;"), 5);
	assert_int_equal(unrolled_accesses(out), 4 + 4 + 4 + 8 + 5 * 4 + 2);
	ptxas_ok(out, "loops_text");
	free(out);
}

/* The same with the turns renamed, their loads first: not the loop with a
 * store (a later turn's load would pass an earlier turn's store) nor those
 * whose loads are ordered (volatile, relaxed, acquire, mmio) or atomic,
 * the four others; each register the loop writes set from its last name
 * after the turns (the predicate of the back edge too); ptxas accepts it. */
static void test_inject_loads_first(void **state)
{
	size_t regions = 0;
	char *out = instrument(loops_text, "k", 1, 4, &regions);

	assert_int_equal(count_str(out, "// unrolled "), 10);
	assert_int_equal(count_str(out, "// the turns renamed, their loads first"), 4);
	/* the up-counter's loop: %r4 and %p2 written, %r1 only read */
	const char *up = strstr(out, "$L_ok_up:");
	assert_non_null(up);
	const char *region = strstr(up, "\t{ // mem probes of 4 accesses");
	const char *back = strstr(up, "\t@!%p2 bra $L_ok_up;");
	assert_true(region && back && region < back);
	/* the 4 loads before the region, the adds after it */
	const char *add = strstr(up, "add.s32 %gxi_v");
	const char *ld4 = strstr(up, "ld.global.u32 %gxi_v");
	for (int i = 1; ld4 && i < 4; i++)
		ld4 = strstr(ld4 + 1, "ld.global.u32 %gxi_v");
	assert_true(ld4 && ld4 < region && add > region && add < back);
	assert_non_null(strstr(up, "\tmov.b32 %r4, %gxi_v"));
	assert_non_null(strstr(up, "\tmov.pred %p2, %gxi_v"));
	assert_null(strstr(region, "\tmov.b32 %r1, %gxi_v"));
	assert_int_equal(unrolled_accesses(out), 4 + 4 + 4 + 8 + 5 * 4 + 2);
	/* each refused loop's turns in order: its loads not renamed */
	static const char *const ordered[] = {"ld.volatile.global.u32 %r3", "ld.relaxed.gpu.global.u32 %r3",
					      "ld.acquire.gpu.global.u32 %r3",
					      "ld.mmio.relaxed.sys.global.u32 %r3",
					      "atom.global.add.u32 %r3"};
	for (size_t i = 0; i < sizeof(ordered) / sizeof(ordered[0]); i++)
		assert_int_equal(count_str(out, ordered[i]), 5);
	ptxas_ok(out, "loops_text, loads first");
	free(out);
}

/* strided_sum (tests/ptx_corpus/loops.compute_75.ptx, NVVM's 4-load loop):
 * 4 turns, 16 accesses in one region (by 16 lanes), 8 with 2 turns, 32 (a
 * warp's lanes) with 8; its
 * remainder loop (nounroll) as written; none with mem_unroll 0 or with a
 * copy of the probe an access (no lanes); ptxas accepts them. */
static void test_inject_strided_sum(void **state)
{
	size_t len;
	char *text = test_read_file("tests/ptx_corpus/loops.compute_75.ptx", &len);
	static const struct {
		int lanes;
		unsigned unroll, turns;
	} cases[] = {{1, 4, 4}, {1, 2, 2}, {1, 8, 8}, {1, 0, 0}, {0, 4, 0}};

	assert_non_null(text);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t regions = 0, plain = 0;
		char *out = instrument(text, "strided_sum", cases[i].lanes, cases[i].unroll, &regions);
		char *base = instrument(text, "strided_sum", cases[i].lanes, 0, &plain);
		unsigned t = cases[i].turns;
		assert_int_equal(count_str(out, "// unrolled "), t ? 1 : 0);
		assert_int_equal(regions, plain + (t ? 1 : 0));
		/* 4 loads a turn, the remainder's 1 */
		assert_int_equal(count_str(out, "ld.global.u32 "), 4 + 1 + 4 * t);
		if (t) {
			char want[80];
			snprintf(want, sizeof(want), "mem probes of %u accesses, once per warp, by %u "
				 "lanes at once", 4 * t, 4 * t);
			assert_non_null(strstr(out, want));
			assert_int_equal(unrolled_accesses(out), 4 * t);
		}
		ptxas_ok(out, "strided_sum");
		free(base);
		free(out);
	}
	free(text);
}

/* Every kernel of the corpus (the examples' reduce included where built):
 * with loops unrolled, the accesses in regions are the original's plus
 * the unrolled turns' (ptx_corpus_count's line scan), and ptxas accepts
 * the module. */
static void test_corpus(void **state)
{
	char **paths;
	size_t n = ptx_corpus_list(&paths), unrolled = 0, kernels = 0;

	for (size_t i = 0; i < n; i++) {
		char *text;
		struct ptx_module *m = ptx_check_parse(paths[i], &text);
		for (size_t k = 0; k < ptx_module_kernel_count(m); k++) {
			const char *name = ptx_module_kernel_name(m, k);
			size_t want, exits, sum = 0, regions = 0;
			ptx_corpus_count(text, name, &want, &exits);
			char *out = instrument(text, name, 1, 4, &regions);
			const char *body = strstr(out, ".entry ");
			static const char tag[] = "\t{ // mem probes of ";
			for (const char *p = body; (p = strstr(p, tag)); p += strlen(tag))
				sum += strtoul(p + strlen(tag), NULL, 10);
			size_t extra = unrolled_accesses(body);
			if (sum != want + extra || (count_str(body, "// unrolled ") && !extra))
				fail_msg("%s %s: %zu accesses in regions, want %zu + %zu unrolled",
					 paths[i], name, sum, want, extra);
			unrolled += count_str(body, "// unrolled ");
			kernels++;
			ptxas_ok(out, paths[i]);
			free(out);
		}
		ptx_module_free(m);
		free(text);
	}
	/* strided_sum at least */
	assert_true(unrolled >= 1 && kernels >= 20);
	ptx_corpus_free_list(paths, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shapes),
		cmocka_unit_test(test_inject_shapes),
		cmocka_unit_test(test_inject_loads_first),
		cmocka_unit_test(test_inject_strided_sum),
		cmocka_unit_test(test_corpus),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
