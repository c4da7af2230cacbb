/* SPDX-License-Identifier: MIT */
/*
 * The PTX parser on real PTX: every corpus file (nvcc output for
 * compute_75 and compute_90, the examples' PTX, hand-picked constructs)
 * parses, prints, and the printed text is accepted by the real ptxas for
 * the module's own target; printing is a fixed point; bad text gets an
 * error naming the line.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx/ptx_inject.h"
#include "ptx_corpus.h"

static char *parse_print(const char *text, size_t len, struct ptx_module **mod)
{
	struct ptx_module *m;
	struct err e = {{0}};
	char *out;
	size_t out_len;

	if (ptx_parse(text, len, &m, &e))
		fail_msg("%s", e.msg);
	if (ptx_print(m, &out, &out_len, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(strlen(out), out_len);
	if (mod)
		*mod = m;
	else
		ptx_module_free(m);
	return out;
}

static void test_corpus_round_trip(void **state)
{
	char **paths;
	size_t n = ptx_corpus_list(&paths), kernels = 0;

	assert_true(n >= 5);
	for (size_t i = 0; i < n; i++) {
		size_t len;
		char *text = test_read_file(paths[i], &len), *log;
		struct ptx_module *m;
		assert_non_null(text);
		char *out = parse_print(text, len, &m);
		/* printing again gives the same text */
		char *again = parse_print(out, strlen(out), NULL);
		if (strcmp(out, again))
			fail_msg("%s: print(parse(print(x))) != print(x)", paths[i]);
		assert_true(strncmp(ptx_module_target(m), "sm_", 3) == 0);
		unsigned major, minor;
		ptx_module_version(m, &major, &minor);
		assert_true(major >= 7);
		kernels += ptx_module_kernel_count(m);
		int st = ptx_corpus_ptxas(out, strlen(out), ptx_module_target(m), &log);
		if (st < 0) {
			free(text);
			free(out);
			free(again);
			ptx_module_free(m);
			ptx_corpus_free_list(paths, n);
			skip();
		}
		if (st)
			fail_msg("%s: ptxas -arch=%s rejected the printed module:\n%.2000s", paths[i],
				 ptx_module_target(m), log);
		free(log);
		free(again);
		free(out);
		free(text);
		ptx_module_free(m);
	}
	assert_true(kernels >= 20);
	ptx_corpus_free_list(paths, n);
}

static void test_accessors(void **state)
{
	static const char text[] =
		"//\n// Generated\n//\n.version 8.4\n.target sm_90a, debug\n.address_size 64\n"
		"/* block\n comment */\n"
		".extern .func (.param .b32 r) vprintf(.param .b64 f, .param .b64 a);\n"
		".global .align 4 .b8 tab[8] = {1, 2, 3, 4, 5, 6, 7, 8};\n"
		".func (.param .b32 rv) helper(.param .b32 x)\n{\n\t.reg .b32 %r<3>;\n"
		"\tld.param.b32 %r1, [x];\n\tst.param.b32 [rv], %r1;\n\tret;\n}\n"
		".visible .entry k1(.param .u64 .ptr .global .align 16 k1_p0)\n"
		".maxntid 128, 1, 1\n.minnctapersm 2\n{\n\t.reg .pred %p<2>;\n"
		"\t.reg .b64 %rd<4>;\n$L__A:\n\t@!%p1 bra $L__A;\n\tret;\n}\n"
		".entry k2\n{\n\tret;\n}\n";
	struct ptx_module *m;
	unsigned major, minor;
	char *out = parse_print(text, sizeof(text) - 1, &m);

	assert_string_equal(ptx_module_target(m), "sm_90a");
	ptx_module_version(m, &major, &minor);
	assert_int_equal(major, 8);
	assert_int_equal(minor, 4);
	assert_int_equal(ptx_module_kernel_count(m), 2);
	assert_string_equal(ptx_module_kernel_name(m, 0), "k1");
	assert_string_equal(ptx_module_kernel_name(m, 1), "k2");
	assert_null(ptx_module_kernel_name(m, 2));
	/* statements come back one per line, tokens as written */
	assert_non_null(strstr(out, "\n.target sm_90a, debug\n"));
	assert_non_null(strstr(out, "tab[8] = {1, 2, 3, 4, 5, 6, 7, 8};\n"));
	assert_non_null(strstr(out, "\n\t.reg .b32 %r<3>;\n"));
	assert_non_null(strstr(out, "\n$L__A:\n\t@!%p1 bra $L__A;\n"));
	assert_null(strstr(out, "Generated"));
	assert_null(strstr(out, "comment"));
	free(out);
	ptx_module_free(m);
}

static void expect_error(const char *text, const char *msg)
{
	struct ptx_module *m = (struct ptx_module *)1;
	struct err e = {{0}};

	assert_true(ptx_parse(text, strlen(text), &m, &e) < 0);
	assert_null(m);
	if (!strstr(e.msg, msg))
		fail_msg("expected '%s' in '%s'", msg, e.msg);
}

static void test_errors_name_the_line(void **state)
{
	expect_error(".version 8.0\n.target sm_90\n/* open", "line 3: unterminated comment");
	expect_error(".version 8.0\n.file 1 \"abc\n", "line 2: unterminated string");
	expect_error(".version 8.0\n\n.entry k\n{\n\tret;\n", "line 3: function 'k' has no "
		     "closing '}'");
	expect_error(".entry k\n{\n\tld.global.u32 %r1, [%rd1;\n}\n",
		     "line 3: missing ']' before ';'");
	expect_error(".entry k\n{\n\tadd.s32 %r1, , %r2;\n}\n", "line 3: empty operand");
	expect_error(".entry k\n{\n\tret\n}\n", "line 3: instruction 'ret' not terminated");
	expect_error(".version 8.0\n}\n", "line 2: unexpected '}'");
	expect_error(".version 8.0\n.global .u32 x\n", "line 2: statement starting with "
		     "'.global' not terminated");
	expect_error(".entry k\n{\n\t@;\n}\n", "line 3: expected a predicate after '@'");
	expect_error(".entry k\n{\n\t.reg .b32 %r1\n}\n", "line 3: declaration '.reg' not "
		     "terminated by ';'");
	expect_error("\n\n.entry k\n{\n\t#define X\n}\n", "line 5: unexpected character '#'");
	expect_error(".entry k\n{\n\t123;\n}\n", "line 3: expected an instruction, found '123'");
	expect_error(".func\n{\n}\n", "line 2: expected a function name");
	expect_error(".version 8.0\n{ ret; }\n", "line 2: '{' outside a function");
	char nul[] = ".version 8.0\n.target sm_90\x01\n";
	expect_error(nul, "line 2: unexpected byte 0x01");
	/* an escape in a string takes neither a newline nor a NUL into it */
	expect_error(".file 1 \"a\\\nb\"\n", "line 1: unterminated string");
	struct ptx_module *m;
	struct err e = {{0}};
	static const char zero[] = ".file 1 \"a\\\0b\"\n";
	assert_true(ptx_parse(zero, sizeof(zero) - 1, &m, &e) < 0);
	assert_non_null(strstr(e.msg, "line 1: unterminated string"));
}

/* Opcodes with "::" modifiers, vector operands, address forms, calls,
 * nested scopes and unknown instructions survive the round trip. */
static void test_constructs(void **state)
{
	static const char text[] =
		".version 8.0\n.target sm_90\n.address_size 64\n"
		".func (.param .b32 r) f(.param .b64 a)\n{\n\t.reg .b32 %r<2>;\n"
		"\tst.param.b32 [r], 1;\n\tret;\n}\n"
		".visible .entry k(.param .u64 p)\n{\n\t.reg .b32 %r<9>;\n\t.reg .b64 %rd<9>;\n"
		"\t.reg .f32 %f<5>;\n\t.reg .pred %p<3>;\n\t.shared .align 16 .b8 sm[512];\n"
		"\tld.param.u64 %rd1, [p];\n"
		"\tld.global.nc.L1::no_allocate.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1+16];\n"
		"\tst.global.v2.u64 [%rd1+-8], {%rd2, %rd3};\n"
		"\tred.relaxed.gpu.global.add.f32 [%rd1], %f1;\n"
		"\tatom.global.cas.b32 %r1, [%rd1+4], %r2, %r3;\n"
		"\tmov.b32 %f1, 0f3F800000;\n\tmov.b64 %rd4, 0x7fffffffffffffff;\n"
		"\t{\n\t.reg .b32 t<2>;\n\tmov.b64 {t0, t1}, %rd4;\n\t}\n"
		"\t{\n\t.param .b64 a0;\n\tst.param.b64 [a0], %rd1;\n\t.param .b32 r0;\n"
		"\tcall.uni (r0), f, (a0);\n\tld.param.b32 %r4, [r0];\n\t}\n"
		"\tsetp.ne.s32 %p1, %r4, 0;\n\t@%p1 ret;\n\tret;\n}\n";
	char *out = parse_print(text, sizeof(text) - 1, NULL);
	char *log;

	assert_non_null(strstr(out, "ld.global.nc.L1::no_allocate.v4.f32 {%f1, %f2, %f3, "
				    "%f4}, [%rd1+16];"));
	assert_non_null(strstr(out, "[%rd1+-8]"));
	assert_non_null(strstr(out, "call.uni (r0), f, (a0);"));
	int st = ptx_corpus_ptxas(out, strlen(out), "sm_90", &log);
	if (st > 0)
		fail_msg("ptxas: %s", log);
	free(log);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus_round_trip),
		cmocka_unit_test(test_accessors),
		cmocka_unit_test(test_errors_name_the_line),
		cmocka_unit_test(test_constructs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
