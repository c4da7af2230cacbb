/* SPDX-License-Identifier: MIT */
/*
 * Assembler and disassembler against the 313 conformance cases: the asm
 * section assembles to exactly the program bytes, and disassembling those
 * bytes (with labels, and instruction by instruction with offsets) then
 * assembling again gives the same bytes.  Plus the assembler's errors.
 */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/asm.h"
#include "bpf/conformance.h"
#include "bpf/disasm.h"

/* Names of every case file, sorted. */
static char **case_paths(size_t *n)
{
	DIR *d = opendir(TEST_CONFORMANCE_DIR);
	struct dirent *de;
	char **paths = NULL;
	size_t cnt = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (len < 5 || strcmp(de->d_name + len - 4, ".txt"))
			continue;
		paths = realloc(paths, (cnt + 1) * sizeof(*paths));
		assert_true(asprintf(&paths[cnt], "%s/%s", TEST_CONFORMANCE_DIR, de->d_name) > 0);
		cnt++;
	}
	closedir(d);
	*n = cnt;
	return paths;
}

static void free_paths(char **paths, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

/* Assemble text and compare with the expected slots; print where they differ. */
static int same_bytes(const char *what, const char *name, const char *text,
		      const struct isa_insn *want, size_t want_cnt)
{
	struct isa_insn *got = NULL;
	size_t cnt = 0;
	struct err e = {{0}};

	if (asm_assemble(text, &got, &cnt, &e)) {
		fprintf(stderr, "%s: %s: %s\n", name, what, e.msg);
		return 0;
	}
	int ok = cnt == want_cnt && !memcmp(got, want, cnt * sizeof(*got));
	if (!ok) {
		fprintf(stderr, "%s: %s: %zu slots, expected %zu\n", name, what, cnt, want_cnt);
		for (size_t i = 0; i < cnt && i < want_cnt; i++)
			if (memcmp(&got[i], &want[i], sizeof(*got))) {
				char a[DISASM_BUF_SIZE], b[DISASM_BUF_SIZE];
				disasm_insn(got, cnt, i, 0, a, sizeof(a));
				disasm_insn(want, want_cnt, i, 0, b, sizeof(b));
				fprintf(stderr, "  slot %zu: got '%s', expected '%s'\n", i, a, b);
				break;
			}
	}
	free(got);
	return ok;
}

static void test_asm_matches_all_cases(void **state)
{
	size_t n, bad = 0;
	char **paths = case_paths(&n);

	assert_int_equal(n, 313);
	for (size_t i = 0; i < n; i++) {
		struct conf_case c;
		struct err e = {{0}};
		if (conf_case_load(paths[i], &c, &e)) {
			fprintf(stderr, "%s\n", e.msg);
			bad++;
			continue;
		}
		assert_non_null(c.asm_text);
		bad += !same_bytes("asm", c.name, c.asm_text, c.insns, c.insn_cnt);
		conf_case_free(&c);
	}
	free_paths(paths, n);
	assert_int_equal(bad, 0);
}

static void test_disasm_roundtrip_all_cases(void **state)
{
	size_t n, bad = 0;
	char **paths = case_paths(&n);

	assert_int_equal(n, 313);
	for (size_t i = 0; i < n; i++) {
		struct conf_case c;
		struct err e = {{0}};
		char *text = NULL, line[DISASM_BUF_SIZE];
		size_t len = 0;

		assert_int_equal(conf_case_load(paths[i], &c, &e), 0);
		/* Whole program, with labels. */
		FILE *f = open_memstream(&text, &len);
		disasm_program(f, c.insns, c.insn_cnt);
		fclose(f);
		bad += !same_bytes("disasm -L", c.name, text, c.insns, c.insn_cnt);
		free(text);
		/* Instruction by instruction, relative offsets. */
		f = open_memstream(&text, &len);
		for (size_t s = 0; s < c.insn_cnt;) {
			s += disasm_insn(c.insns, c.insn_cnt, s, 0, line, sizeof(line));
			fprintf(f, "%s\n", line);
		}
		fclose(f);
		bad += !same_bytes("disasm", c.name, text, c.insns, c.insn_cnt);
		free(text);
		conf_case_free(&c);
	}
	free_paths(paths, n);
	assert_int_equal(bad, 0);
}

/* The disassembler's exact text for each kind of instruction. */
static void test_disasm_text(void **state)
{
	static const struct {
		const char *asm_text, *want;
	} cases[] = {
		{"mov32 %r0, 0", "mov32 %r0, 0"},
		{"ldxdw %r0, [%r1+8]", "ldxdw %r0, [%r1+8]"},
		{"lock fetch add32 [%r10-8], %r1", "lock fetch add32 [%r10-8], %r1"},
		{"lock xchg [%r10-8], %r1", "lock xchg [%r10-8], %r1"},
		{"lock cmpxchg32 [%r1], %r2", "lock cmpxchg32 [%r1], %r2"},
		{"lddw %r0, 0x1122334455667788", "lddw %r0, 0x1122334455667788"},
		{"be16 %r0", "be16 %r0"},
		{"swap64 %r3", "bswap64 %r3"},
		{"movsx832 %r1, %r2", "movsx832 %r1, %r2"},
		{"movsx3264 %r1, %r2", "movsx3264 %r1, %r2"},
		{"ldxsb %r1, [%r2-1]", "ldxsb %r1, [%r2-1]"},
		{"sdiv32 %r1, -3", "sdiv32 %r1, -3"},
		{"smod %r1, %r2", "smod %r1, %r2"},
		{"mov %r1, 0xffffffff", "mov %r1, -1"},
		{"or %r1, 0x12345678", "or %r1, 0x12345678"},
		{"jeq %r1, 5, +3", "jeq %r1, 5, +3"},
		{"jsle32 %r1, %r2, -1", "jsle32 %r1, %r2, -1"},
		{"ja32 -1", "ja32 -1"},
		{"call 5", "call 5"},
		{"call local +0", "call local +0"},
		{"call %r2", "callx %r2"},
		{"neg32 %r4", "neg32 %r4"},
		{"stw [%r10-4], 7", "stw [%r10-4], 7"},
		{"stxh [%r1+2], %r3", "stxh [%r1+2], %r3"},
		{"lddw %r1, map[2]", "lddw %r1, map[2]"},
		{"lddw %r1, map_value[0]+16", "lddw %r1, map_value[0]+16"},
		{".insn 0x8e, 1, 2, 3, 4", ".insn 0x8e, 1, 2, 3, 4"},
		{"exit", "exit"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct isa_insn *insns;
		size_t cnt;
		struct err e = {{0}};
		char buf[DISASM_BUF_SIZE];

		if (asm_assemble(cases[i].asm_text, &insns, &cnt, &e))
			fail_msg("'%s': %s", cases[i].asm_text, e.msg);
		disasm_insn(insns, cnt, 0, 0, buf, sizeof(buf));
		if (strcmp(buf, cases[i].want))
			fail_msg("'%s' disassembles to '%s', expected '%s'", cases[i].asm_text, buf,
				 cases[i].want);
		free(insns);
	}
}

static void test_asm_errors_name_the_line(void **state)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"mov %r0, 0\n\nmovv %r0, 1\nexit", "line 3: unknown mnemonic 'movv'"},
		{"mov %r11, 0", "line 1: invalid register '%r11' (r0..r10)"},
		{"mov %r1", "line 1: 'mov' takes 2 operands, got 1"},
		{"ja nowhere\nexit", "line 1: undefined label 'nowhere'"},
		{"a:\na:\nexit", "line 2: label 'a' is defined twice"},
		{"mov32 %r0, 0x100000000", "line 1: an immediate '0x100000000' is out of range"},
		{"ldxw %r0, [%r1+40000]", "line 1: an offset '+40000' is out of range"},
		{"ldxw %r0, %r1", "line 1: expected a memory operand like [%r1+8], got '%r1'"},
		{"lock nand [%r1], %r2", "line 1: unknown atomic operation 'lock nand'"},
		{"exit32", "line 1: unknown mnemonic 'exit32'"},
		{"# nothing\n", "no instructions"},
		{"lddw %r0, zz", "line 1: expected a 64-bit immediate, got 'zz'"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct isa_insn *insns = NULL;
		size_t cnt;
		struct err e = {{0}};
		assert_int_not_equal(asm_assemble(cases[i].text, &insns, &cnt, &e), 0);
		if (strcmp(e.msg, cases[i].want))
			fail_msg("case %zu: got '%s', expected '%s'", i, e.msg, cases[i].want);
		assert_null(insns);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_asm_matches_all_cases),
		cmocka_unit_test(test_disasm_roundtrip_all_cases),
		cmocka_unit_test(test_disasm_text),
		cmocka_unit_test(test_asm_errors_name_the_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
