/* SPDX-License-Identifier: MIT */
/*
 * Reductions combined across the lanes that run a program at once
 * (src/ptx/ptx_agg.h): each op and width of `red.global` rewritten into
 * its combined form (the lanes grouped by address register and value, the
 * lowest lane of a group issuing: add the value times the lanes, xor the
 * value where they are odd, or/and/min/max the value), the registers
 * declared once; guarded, shared, generic, float, immediate and atom
 * forms left as they are; code without a reduction copied unchanged; the
 * rewritten code accepted by the real ptxas for sm_75 and sm_90 in
 * divergent code.  In the injector's lanes regions: test_ptx_mem_inline's
 * test_lanes_agg.  Semantics on a GPU: tests/gpu/tools.sh (memtrace's
 * exact bytes), tests/gpu/inject_check.c (exact counts).
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "ptx/ptx_agg.h"
#include "ptx_check.h"

static size_t count_str(const char *text, const char *s)
{
	size_t n = 0;
	for (const char *p = text; (p = strstr(p, s)); p += strlen(s))
		n++;
	return n;
}

/* Six that are rewritten (the emitter's forms: ptx_emit_atomic and
 * ptx_emit_atomic_max), then seven that are not. */
static const char code_text[] =
	"\t{ // a program\n"
	"\tred.global.add.u64 [%t1], %t0;\n"
	"\tred.global.add.u32 [%t1+8], %h1;\n"
	"\tred.global.or.b64 [%t1], %t0;\n"
	"\tred.global.xor.b32 [%t1+-4], %h1;\n"
	"\tred.global.max.u64 [%r1], %r2;\n"
	"\tred.global.and.b64 [%r1+16], %r2;\n"
	"\t@%p0 red.global.add.u64 [%t1], %t0;\n"
	"\tred.shared.add.u32 [%sa1+0], %h1;\n"
	"\tred.add.u64 [%t1], %t0;\n"
	"\tred.global.add.f32 [%t1], %f1;\n"
	"\tred.global.add.u64 [%t1], 5;\n"
	"\tatom.global.add.u64 %t2, [%t1], %t0;\n"
	"\tred.global.add.u64 [%t1], %t0; // a comment\n"
	"\t}\n";

static char *rewrite(const char *code, size_t *n)
{
	struct ptx_buf b = {0};
	ptx_agg_reductions(&b, code, "gxi", n);
	char *out = ptx_buf_take(&b, NULL);
	assert_non_null(out);
	return out;
}

static void test_forms(void **state)
{
	size_t n = 0;
	char *out = rewrite(code_text, &n);

	assert_int_equal(n, 6);
	/* the registers once, ahead of the code */
	assert_true(!strncmp(out, "\t.reg .b32 %gxi_rm, %gxi_rg, %gxi_rv, %gxi_rl;\n"
				  "\t.reg .b64 %gxi_rx;\n\t.reg .pred %gxi_rq;\n\t{ // a program\n",
			     strlen("\t.reg .b32 %gxi_rm, %gxi_rg, %gxi_rv, %gxi_rl;\n"
				    "\t.reg .b64 %gxi_rx;\n\t.reg .pred %gxi_rq;\n\t{ // a program\n")));
	assert_int_equal(count_str(out, ".reg"), 3);
	/* each: the running lanes, grouped by address register, then value */
	assert_int_equal(count_str(out, "\tactivemask.b32 %gxi_rm;\n"), 6);
	assert_int_equal(count_str(out, "\tsetp.eq.u32 %gxi_rq, %gxi_rl, 0;\n"), 6);
	/* add, 64-bit: the value times the lanes that share it */
	assert_non_null(strstr(out, "\tactivemask.b32 %gxi_rm;\n"
				    "\tmatch.any.sync.b64 %gxi_rg, %t1, %gxi_rm;\n"
				    "\tmatch.any.sync.b64 %gxi_rv, %t0, %gxi_rg;\n"
				    "\tmov.u32 %gxi_rl, %lanemask_lt;\n"
				    "\tand.b32 %gxi_rl, %gxi_rl, %gxi_rv;\n"
				    "\tsetp.eq.u32 %gxi_rq, %gxi_rl, 0;\n"
				    "\tpopc.b32 %gxi_rl, %gxi_rv;\n"
				    "\tcvt.u64.u32 %gxi_rx, %gxi_rl;\n"
				    "\tmul.lo.u64 %gxi_rx, %gxi_rx, %t0;\n"
				    "\t@%gxi_rq red.global.add.u64 [%t1], %gxi_rx;\n"));
	/* add, 32-bit: the offset stays the instruction's, the match is on
	 * the register */
	assert_non_null(strstr(out, "\tmatch.any.sync.b64 %gxi_rg, %t1, %gxi_rm;\n"
				    "\tmatch.any.sync.b32 %gxi_rv, %h1, %gxi_rg;\n"));
	assert_non_null(strstr(out, "\tpopc.b32 %gxi_rl, %gxi_rv;\n"
				    "\tmul.lo.u32 %gxi_rl, %gxi_rl, %h1;\n"
				    "\t@%gxi_rq red.global.add.u32 [%t1+8], %gxi_rl;\n"));
	/* or, max, and: the value once */
	assert_non_null(strstr(out, "\tsetp.eq.u32 %gxi_rq, %gxi_rl, 0;\n"
				    "\t@%gxi_rq red.global.or.b64 [%t1], %t0;\n"));
	assert_non_null(strstr(out, "\tmatch.any.sync.b64 %gxi_rg, %r1, %gxi_rm;\n"
				    "\tmatch.any.sync.b64 %gxi_rv, %r2, %gxi_rg;\n"));
	assert_non_null(strstr(out, "\tsetp.eq.u32 %gxi_rq, %gxi_rl, 0;\n"
				    "\t@%gxi_rq red.global.max.u64 [%r1], %r2;\n"));
	assert_non_null(strstr(out, "\tsetp.eq.u32 %gxi_rq, %gxi_rl, 0;\n"
				    "\t@%gxi_rq red.global.and.b64 [%r1+16], %r2;\n"));
	/* xor: only an odd number of lanes leaves the value */
	assert_non_null(strstr(out, "\tpopc.b32 %gxi_rl, %gxi_rv;\n\tand.b32 %gxi_rl, %gxi_rl, 1;\n"
				    "\tsetp.ne.and.u32 %gxi_rq, %gxi_rl, 0, %gxi_rq;\n"
				    "\t@%gxi_rq red.global.xor.b32 [%t1+-4], %h1;\n"));
	/* the others as they were, in order */
	assert_non_null(strstr(out, "\t@%p0 red.global.add.u64 [%t1], %t0;\n"
				    "\tred.shared.add.u32 [%sa1+0], %h1;\n"
				    "\tred.add.u64 [%t1], %t0;\n"
				    "\tred.global.add.f32 [%t1], %f1;\n"
				    "\tred.global.add.u64 [%t1], 5;\n"
				    "\tatom.global.add.u64 %t2, [%t1], %t0;\n"
				    "\tred.global.add.u64 [%t1], %t0; // a comment\n\t}\n"));
	assert_int_equal(count_str(out, "red."), 13);
	free(out);
}

static void test_unchanged(void **state)
{
	static const char code[] = "\t{\n\tadd.s64 %t1, %r0, 8;\n\tatom.global.or.b64 %t2, [%t1], %t0;\n\t}";
	size_t n = 1;
	char *out = rewrite(code, &n);
	assert_int_equal(n, 0);
	assert_string_equal(out, code);
	free(out);
}

/*
 * The rewritten forms in a kernel whose lanes diverge before them (odd
 * lanes skip the first three): ptxas accepts them for sm_75 (CUDA 13's first;
 * match.sync is sm_70's) and sm_90.
 */
static void test_ptxas(void **state)
{
	struct ptx_buf b = {0};
	size_t n = 0;

	ptx_buf_printf(&b, "\tld.param.u64 %%t1, [p];\n\tmov.u32 %%lane, %%laneid;\n"
			   "\tcvt.u64.u32 %%t0, %%lane;\n\tmov.u32 %%h1, %%lane;\n"
			   "\tmov.u64 %%r1, %%t1;\n\tmov.u64 %%r2, %%t0;\n\tmov.u32 %%sa1, 0;\n"
			   "\tmov.f32 %%f1, 0f3F800000;\n\tand.b32 %%h2, %%lane, 1;\n"
			   "\tsetp.ne.u32 %%p0, %%h2, 0;\n\t@%%p0 bra L_skip;\n"
			   "\tred.global.add.u64 [%%t1], %%t0;\n\tred.global.or.b64 [%%t1], %%t0;\n"
			   "\tred.global.xor.b32 [%%t1+4], %%h1;\n"
			   "L_skip:\n%s\n\tret;\n", code_text);
	char *body = ptx_buf_take(&b, NULL), *code = rewrite(body, &n);
	assert_int_equal(n, 9);
	ptx_buf_printf(&b, ".version 7.8\n.target sm_75\n.address_size 64\n"
			   ".visible .entry k(.param .u64 p)\n{\n"
			   "\t.reg .pred %%p<2>;\n\t.reg .b32 %%h<3>, %%sa<2>, %%lane;\n"
			   "\t.reg .f32 %%f<2>;\n\t.reg .b64 %%t<3>, %%r<3>;\n%s}\n", code);
	char *ptx = ptx_buf_take(&b, NULL);
	assert_non_null(ptx);
	ptx_corpus_ptxas_ok(ptx, "sm_75", "ptx_agg forms", "ptx-agg-failed.ptx");
	ptx_corpus_ptxas_ok(ptx, "sm_90", "ptx_agg forms", "ptx-agg-failed.ptx");
	free(ptx);
	free(code);
	free(body);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_unchanged),
		cmocka_unit_test(test_ptxas),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
