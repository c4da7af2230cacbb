/* SPDX-License-Identifier: MIT */
/*
 * The decoder: every conformance program decodes; every class of RFC 9669
 * encoding rule rejects bad bytecode with the exact message; opcode names
 * and validity follow ISA_OPCODES.
 */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/asm.h"
#include "bpf/conformance.h"
#include "bpf/isa.h"

#define I(c, d, s, o, i) {.code = (c), .dst = (d), .src = (s), .off = (o), .imm = (i)}
#define EXIT I(0x95, 0, 0, 0, 0)
#define MOV0 I(0xb7, 0, 0, 0, 0)

struct reject_case {
	const char *rule;
	struct isa_insn insns[4];
	size_t cnt;
	const char *want; /* "insn N: message" */
};

static const struct reject_case rejects[] = {
	{"unknown opcode", {I(0x8e, 0, 0, 0, 0), EXIT}, 2, "insn 0: unknown opcode 0x8e"},
	{"legacy ABS", {I(0x20, 0, 0, 0, 0), EXIT}, 2,
	 "insn 0: opcode 0x20: legacy packet access (BPF_ABS/BPF_IND) is not supported"},
	{"legacy IND", {MOV0, I(0x50, 0, 1, 0, 0), EXIT}, 3,
	 "insn 1: opcode 0x50: legacy packet access (BPF_ABS/BPF_IND) is not supported"},
	{"dst register > 10", {I(0xb7, 11, 0, 0, 0), EXIT}, 2,
	 "insn 0: mov: invalid destination register r11"},
	{"src register > 10", {I(0xbf, 0, 12, 0, 0), EXIT}, 2,
	 "insn 0: mov: invalid source register r12"},
	{"write to r10 (alu)", {I(0x07, 10, 0, 0, 8), EXIT}, 2, "insn 0: add: r10 is read-only"},
	{"write to r10 (ldx)", {I(0x79, 10, 1, 0, 0), EXIT}, 2, "insn 0: ldxdw: r10 is read-only"},
	{"write to r10 (lddw)", {I(0x18, 10, 0, 0, 1), I(0, 0, 0, 0, 0), EXIT}, 3,
	 "insn 0: lddw: r10 is read-only"},
	{"write to r10 (atomic fetch)", {I(0xdb, 1, 10, 0, 0x01), EXIT}, 2,
	 "insn 0: atomic: fetch into r10, which is read-only"},
	{"alu K with src", {I(0x07, 1, 2, 0, 1), EXIT}, 2,
	 "insn 0: add: reserved field src=2 must be 0"},
	{"alu X with imm", {I(0x0f, 1, 2, 0, 1), EXIT}, 2,
	 "insn 0: add: reserved field imm=1 must be 0"},
	{"alu with off", {I(0x04, 1, 0, 3, 1), EXIT}, 2,
	 "insn 0: add32: reserved field off=3 must be 0"},
	{"sdiv off not 0/1", {I(0x3f, 1, 2, 2, 0), EXIT}, 2,
	 "insn 0: div: off=2 must be 0 (unsigned) or 1 (signed)"},
	{"smod off not 0/1", {I(0x94, 1, 0, -1, 3), EXIT}, 2,
	 "insn 0: mod32: off=-1 must be 0 (unsigned) or 1 (signed)"},
	{"movsx width (64)", {I(0xbf, 1, 2, 24, 0), EXIT}, 2,
	 "insn 0: mov: sign-extension width off=24 must be 0, 8, 16 or 32"},
	{"movsx width 32 in alu32", {I(0xbc, 1, 2, 32, 0), EXIT}, 2,
	 "insn 0: mov32: sign-extension width off=32 must be 0, 8, 16"},
	{"mov K with off", {I(0xb7, 1, 0, 8, 0), EXIT}, 2,
	 "insn 0: mov: reserved field off=8 must be 0"},
	{"end width", {I(0xdc, 1, 0, 0, 8), EXIT}, 2,
	 "insn 0: be: width imm=8 must be 16, 32 or 64"},
	{"bswap width", {I(0xd7, 1, 0, 0, 48), EXIT}, 2,
	 "insn 0: bswap: width imm=48 must be 16, 32 or 64"},
	{"neg with imm", {I(0x87, 1, 0, 0, 1), EXIT}, 2,
	 "insn 0: neg: reserved field imm=1 must be 0"},
	{"atomic op", {I(0xc3, 1, 2, 0, 0x10), EXIT}, 2,
	 "insn 0: atomic32: unknown atomic operation imm=0x10"},
	{"atomic xchg without fetch", {I(0xdb, 1, 2, 0, 0xe0), EXIT}, 2,
	 "insn 0: atomic: unknown atomic operation imm=0xe0"},
	{"stx with imm", {I(0x7b, 10, 1, -8, 5), EXIT}, 2,
	 "insn 0: stxdw: reserved field imm=5 must be 0"},
	{"st with src", {I(0x7a, 10, 1, -8, 5), EXIT}, 2,
	 "insn 0: stdw: reserved field src=1 must be 0"},
	{"ldx with imm", {I(0x61, 0, 1, 0, 5), EXIT}, 2,
	 "insn 0: ldxw: reserved field imm=5 must be 0"},
	{"lddw missing second slot", {MOV0, I(0x18, 0, 0, 0, 1)}, 2,
	 "insn 1: lddw: missing second slot (last instruction)"},
	{"lddw second slot not zero", {I(0x18, 0, 0, 0, 1), I(0xb7, 0, 0, 0, 0), EXIT}, 3,
	 "insn 1: second slot of lddw at 0: code, registers and off must be 0 (code=0xb7 dst=0 src=0 off=0)"},
	{"lddw pseudo source", {I(0x18, 1, 4, 0, 0), I(0, 0, 0, 0, 0), EXIT}, 3,
	 "insn 0: lddw: unsupported pseudo source src=4 (supported: 0 value, 1 map, 2 map value)"},
	{"lddw map with offset", {I(0x18, 1, 1, 0, 0), I(0, 0, 0, 0, 8), EXIT}, 3,
	 "insn 1: second slot of lddw at 0: imm=8 must be 0 for a map reference"},
	{"lddw off", {I(0x18, 1, 0, 2, 0), I(0, 0, 0, 0, 0), EXIT}, 3,
	 "insn 0: lddw: reserved field off=2 must be 0"},
	{"jump out of range", {I(0x05, 0, 0, 42, 0), EXIT}, 2,
	 "insn 0: jump target 43 is out of range (program has 2 instructions)"},
	{"jump before start", {MOV0, I(0x15, 0, 0, -3, 0), EXIT}, 3,
	 "insn 1: jump target -1 is out of range (program has 3 instructions)"},
	{"jump into lddw", {I(0x05, 0, 0, 1, 0), I(0x18, 0, 0, 0, 1), I(0, 0, 0, 0, 0), EXIT}, 4,
	 "insn 0: jump target 2 is the second slot of lddw at 1"},
	{"ja32 out of range", {I(0x06, 0, 0, 0, 100), EXIT}, 2,
	 "insn 0: jump target 101 is out of range (program has 2 instructions)"},
	{"ja32 with off", {I(0x06, 0, 0, 1, 0), EXIT}, 2,
	 "insn 0: ja32: reserved field off=1 must be 0"},
	{"ja with imm", {I(0x05, 0, 0, 0, 1), EXIT}, 2,
	 "insn 0: ja: reserved field imm=1 must be 0"},
	{"jmp K with src", {I(0x15, 1, 3, 0, 0), EXIT}, 2,
	 "insn 0: jeq: reserved field src=3 must be 0"},
	{"jmp32 X with imm", {I(0x1e, 1, 2, 0, 7), EXIT}, 2,
	 "insn 0: jeq32: reserved field imm=7 must be 0"},
	{"local call out of range", {I(0x85, 0, 1, 0, 5), EXIT}, 2,
	 "insn 0: local call target 6 is out of range (program has 2 instructions)"},
	{"call src", {I(0x85, 0, 3, 0, 5), EXIT}, 2,
	 "insn 0: call: src=3 must be 0 (helper) or 1 (local call)"},
	{"kfunc call", {I(0x85, 0, 2, 0, 5), EXIT}, 2,
	 "insn 0: call: kernel function calls (src=2) are not supported"},
	{"call with dst", {I(0x85, 1, 0, 0, 5), EXIT}, 2,
	 "insn 0: call: reserved field dst=1 must be 0"},
	{"callx not enabled", {I(0x8d, 2, 0, 0, 0), EXIT}, 2,
	 "insn 0: callx: calls through a register are not part of RFC 9669 and not enabled"},
	{"exit with imm", {I(0x95, 0, 0, 0, 1)}, 1, "insn 0: exit: reserved field imm=1 must be 0"},
	{"jmp32 exit", {I(0x96, 0, 0, 0, 0)}, 1, "insn 0: unknown opcode 0x96"},
};

static void test_decoder_rejects_each_rule(void **state)
{
	size_t failures = 0;

	assert_true(sizeof(rejects) / sizeof(rejects[0]) >= 25);
	for (size_t i = 0; i < sizeof(rejects) / sizeof(rejects[0]); i++) {
		const struct reject_case *r = &rejects[i];
		struct isa_error err = {0};
		char got[256];
		int ret = isa_decode(r->insns, r->cnt, 0, &err);
		snprintf(got, sizeof(got), "insn %zu: %s", err.index, err.msg);
		if (ret != -EINVAL || strcmp(got, r->want)) {
			fprintf(stderr, "%s: got %d '%s', expected '%s'\n", r->rule, ret, got, r->want);
			failures++;
		}
	}
	assert_int_equal(failures, 0);
}

static void test_decoder_accepts_all_cases(void **state)
{
	DIR *d = opendir(TEST_CONFORMANCE_DIR);
	struct dirent *de;
	size_t n = 0, bad = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		char path[512];
		struct conf_case c;
		struct err e = {{0}};
		struct isa_error ierr;
		if (!strstr(de->d_name, ".txt"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", TEST_CONFORMANCE_DIR, de->d_name);
		assert_int_equal(conf_case_load(path, &c, &e), 0);
		int callx = conf_case_uses_callx(&c);
		if (isa_decode(c.insns, c.insn_cnt, callx, &ierr)) {
			fprintf(stderr, "%s: insn %zu: %s\n", c.name, ierr.index, ierr.msg);
			bad++;
		}
		/* callx is refused unless allowed */
		if (callx)
			assert_int_equal(isa_decode(c.insns, c.insn_cnt, 0, &ierr), -EINVAL);
		conf_case_free(&c);
		n++;
	}
	closedir(d);
	assert_int_equal(n, 313);
	assert_int_equal(bad, 0);
}

static void test_opcode_names_follow_the_list(void **state)
{
	size_t valid = 0;
#define COUNT(name, code) valid++;
	ISA_OPCODES(COUNT)
#undef COUNT
	size_t seen = 0;
	for (unsigned c = 0; c < 256; c++) {
		int v = isa_opcode_valid((uint8_t)c);
		assert_int_equal(v, isa_opcode_name((uint8_t)c) != NULL);
		seen += v;
	}
	assert_int_equal(seen, valid);
	assert_string_equal(isa_opcode_name(0x04), "add32");
	assert_string_equal(isa_opcode_name(0x79), "ldxdw");
	assert_string_equal(isa_opcode_name(0xd5), "jsle");
	assert_string_equal(isa_opcode_name(0xde), "jsle32");
	assert_string_equal(isa_opcode_name(0x91), "ldxsb");
	assert_null(isa_opcode_name(0x00));
	assert_null(isa_opcode_name(0x99));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decoder_rejects_each_rule),
		cmocka_unit_test(test_decoder_accepts_all_cases),
		cmocka_unit_test(test_opcode_names_follow_the_list),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
