/* SPDX-License-Identifier: MIT */
/*
 * The conformance runner and the asm/disasm/conformance commands: case
 * parsing errors, exit codes, output format, asm -> disasm -> asm through
 * the CLI.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/conformance.h"
#include "bpf/interp.h"

static char *cli(const char *args, int *st)
{
	char *cmd;
	assert_true(asprintf(&cmd, "%s %s", test_cli_path(), args) > 0);
	char *out = test_run_cmd(cmd, st);
	free(cmd);
	assert_non_null(out);
	return out;
}

static void test_cli_conformance_all_pass(void **state)
{
	int st;
	char *out = cli("conformance --backend interp " TEST_CONFORMANCE_DIR, &st);
	assert_int_equal(st, 0);
	assert_string_equal(out, "313 passed, 0 failed\n");
	free(out);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_cli_conformance_failure_and_exit_code(void **state)
{
	char dir[] = "/tmp/gpuext-conf-XXXXXX", path[256], args[512];
	int st;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/wrong.txt", dir);
	write_file(path, "-- program\nb7 00 00 00 02 00 00 00\n95 00 00 00 00 00 00 00\n"
			 "-- result\n0x3\n");
	snprintf(path, sizeof(path), "%s/right.txt", dir);
	write_file(path, "-- program\nb7 00 00 00 03 00 00 00\n95 00 00 00 00 00 00 00\n"
			 "-- result\n0x3\n");
	snprintf(path, sizeof(path), "%s/bad.txt", dir);
	write_file(path, "-- program\nzz 00\n-- result\n0\n");
	snprintf(args, sizeof(args), "conformance %s", dir);
	char *out = cli(args, &st);
	assert_int_equal(st, 1);
	char want[1024];
	snprintf(want, sizeof(want),
		 "FAIL %s/bad.txt: line 2: expected hex bytes like 'b7 01', got 'zz 00'\n"
		 "FAIL wrong: r0 = 0x2, expected 0x3\n"
		 "1 passed, 2 failed\n",
		 dir);
	assert_string_equal(out, want);
	free(out);
	snprintf(args, sizeof(args), "rm -r %s", dir);
	assert_int_equal(system(args), 0);
}

static void test_cli_usage_errors(void **state)
{
	int st;
	char *out = cli("conformance --backend nope " TEST_CONFORMANCE_DIR, &st);
	assert_int_equal(st, 2);
	assert_non_null(strstr(out, "unknown backend 'nope'"));
	free(out);
	out = cli("conformance", &st);
	assert_int_equal(st, 2);
	free(out);
	out = cli("conformance --help", &st);
	assert_int_equal(st, 0);
	assert_non_null(strstr(out, "Backends: jit interp")); /* the first is the default */
	free(out);
	out = cli("asm --help", &st);
	assert_int_equal(st, 0);
	free(out);
	out = cli("disasm --help", &st);
	assert_int_equal(st, 0);
	free(out);
	out = cli("asm /nonexistent.s", &st);
	assert_int_equal(st, 1);
	assert_non_null(strstr(out, "/nonexistent.s: No such file"));
	free(out);
}

static void test_cli_asm_disasm_roundtrip(void **state)
{
	char src[] = "/tmp/gpuext-asm-XXXXXX", args[1024], bin[64], dis[64];
	int st, fd = mkstemp(src);

	assert_true(fd >= 0);
	close(fd);
	write_file(src, "mov %r0, 0\nloop:\nadd %r0, 1\njlt %r0, 10, loop\n"
			"lddw %r1, 0x1122334455667788\nlock fetch add32 [%r10-8], %r1\nexit\n");
	snprintf(bin, sizeof(bin), "%s.bin", src);
	snprintf(dis, sizeof(dis), "%s.dis", src);
	snprintf(args, sizeof(args), "asm -o %s %s", bin, src);
	char *out = cli(args, &st);
	assert_int_equal(st, 0);
	free(out);
	snprintf(args, sizeof(args), "disasm %s > %s", bin, dis);
	out = cli(args, &st);
	assert_int_equal(st, 0);
	free(out);
	char *text = test_read_file(dis, NULL);
	assert_non_null(text);
	assert_non_null(strstr(text, "L1:\n\tadd %r0, 1\n\tjlt %r0, 10, L1\n"));
	free(text);
	/* hex of the reassembled disassembly equals hex of the source */
	snprintf(args, sizeof(args), "asm %s", src);
	char *hex1 = cli(args, &st);
	assert_int_equal(st, 0);
	snprintf(args, sizeof(args), "asm %s", dis);
	char *hex2 = cli(args, &st);
	assert_int_equal(st, 0);
	assert_string_equal(hex1, hex2);
	assert_non_null(strstr(hex1, "07 00 00 00 01 00 00 00\n"));
	free(hex1);
	free(hex2);
	/* a bad line names the file and line; bad bytecode names the insn */
	write_file(src, "mov %r0, 0\nmovv %r0, 1\n");
	snprintf(args, sizeof(args), "asm %s", src);
	out = cli(args, &st);
	assert_int_equal(st, 1);
	assert_non_null(strstr(out, ": line 2: unknown mnemonic 'movv'"));
	free(out);
	write_file(src, "ja +5\nexit\n");
	out = cli(args, &st);
	assert_int_equal(st, 1);
	assert_non_null(strstr(out, ": insn 0: jump target 6 is out of range (program has 2 instructions)"));
	free(out);
	write_file(bin, "1234567");
	snprintf(args, sizeof(args), "disasm %s", bin);
	out = cli(args, &st);
	assert_int_equal(st, 1);
	assert_non_null(strstr(out, "7 bytes is not a whole number of 8-byte instructions"));
	free(out);
	out = cli("disasm " TEST_BPF_DIR "/tests/progs/loops.bpf.o", &st);
	assert_int_equal(st, 1);
	assert_non_null(strstr(out, "loops.bpf.o: is an ELF object, not raw bytecode"));
	free(out);
	unlink(src);
	unlink(bin);
	unlink(dis);
}

static void test_callx_skipped_without_support(void **state)
{
	struct conf_case c;
	struct err e = {{0}};
	char why[256];
	const struct conf_backend no_callx = {"nocallx", interp_run, 0};
	const struct conf_backend with_callx = {"interp", interp_run, 1};

	assert_int_equal(conf_case_load(TEST_CONFORMANCE_DIR "/callx.txt", &c, &e), 0);
	assert_int_equal(conf_case_run(&c, &no_callx, why, sizeof(why)), CONF_SKIP);
	assert_string_equal(why, "uses callx, which backend 'nocallx' does not support");
	assert_int_equal(conf_case_run(&c, &with_callx, why, sizeof(why)), CONF_PASS);
	conf_case_free(&c);
}

static void test_case_parse_errors(void **state)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"-- result\n1\n", "t.txt: no '-- program' section"},
		{"-- program\nb7 00 00 00\n-- result\n1\n", "t.txt: program has 4 bytes, not a multiple of 8"},
		{"-- program\nb7 00 00 00 00 00 00 00\n", "t.txt: no '-- result' section"},
		{"-- program\nb7 00 00 00 00 00 00 00\n-- result\nabc\n", "t.txt: line 4: invalid result 'abc'"},
		{"-- bogus\n", "t.txt: line 1: unknown section 'bogus'"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct conf_case c;
		struct err e = {{0}};
		assert_int_not_equal(conf_case_parse("t.txt", cases[i].text, &c, &e), 0);
		assert_string_equal(e.msg, cases[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cli_conformance_all_pass),
		cmocka_unit_test(test_cli_conformance_failure_and_exit_code),
		cmocka_unit_test(test_cli_usage_errors),
		cmocka_unit_test(test_cli_asm_disasm_roundtrip),
		cmocka_unit_test(test_callx_skipped_without_support),
		cmocka_unit_test(test_case_parse_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
