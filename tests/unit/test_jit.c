/* SPDX-License-Identifier: MIT */
/*
 * The x86-64 JIT: every conformance case, and the corners the cases do not
 * reach (division and shift corner values against C reference semantics,
 * register aliasing with rax/rcx/rdx, atomics, local calls and their depth
 * limit, compile errors).
 */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/conformance.h"
#include "bpf/helpers.h"
#include "bpf/jit.h"
#include "bpf/map.h"
#include "bpf/prog.h"

#define I(c, d, s, o, i) ((struct isa_insn){.code = (c), .dst = (d), .src = (s), .off = (o), .imm = (i)})
#define LDDW(d, v) I(0x18, d, 0, 0, (int32_t)(uint32_t)(uint64_t)(v)), \
		   I(0, 0, 0, 0, (int32_t)(uint32_t)((uint64_t)(v) >> 32))
#define EXIT I(ISA_OPC_JMP_EXIT, 0, 0, 0, 0)

static uint64_t helper_identity(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				uint64_t r5)
{
	return r1;
}

static uint64_t helper_mix(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	return r1 * 1 + r2 * 10 + r3 * 100 + r4 * 1000 + r5 * 10000;
}

static struct helper_table test_helpers;

static void init_helpers(void)
{
	test_helpers.fn[5] = helper_identity; /* the conformance rule for call 5 */
	test_helpers.fn[7] = helper_mix;
}

/* Compile and run insns with r1 = mem, r2 = len; 0 or the error. */
static int jit_exec(const struct isa_insn *insns, size_t n, void *mem, size_t len,
		    uint64_t *r0, struct err *e)
{
	struct prog p = {.name = "test", .insns = (struct isa_insn *)insns, .insn_cnt = n};
	struct prog_run_opts o = {.args = {(uintptr_t)mem, len}};
	int rc;

	init_helpers();
	rc = jit_compile(&p, &test_helpers, e);
	if (rc)
		return rc;
	rc = jit_run(&p, &o, r0, e);
	jit_free(&p);
	return rc;
}

static uint64_t run_ok(const struct isa_insn *insns, size_t n, void *mem, size_t len)
{
	struct err e = {{0}};
	uint64_t r0 = 0xdeadbeef;
	int rc = jit_exec(insns, n, mem, len, &r0, &e);
	if (rc)
		fail_msg("jit failed: %s", e.msg);
	return r0;
}

/* ---- conformance cases --------------------------------------------------- */

static int conf_jit(const struct prog *p, const struct prog_run_opts *opts, uint64_t *r0,
		    struct err *e)
{
	return prog_run(p, PROG_BACKEND_JIT, opts, r0, e);
}

static void test_conformance_all(void **state)
{
	static const struct conf_backend jit = {"jit", conf_jit, 1};
	DIR *d = opendir(TEST_CONFORMANCE_DIR);
	struct dirent *de;
	int passed = 0, failed = 0, skipped = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		if (n < 5 || strcmp(de->d_name + n - 4, ".txt"))
			continue;
		char path[1024], why[600];
		struct conf_case c;
		struct err e = {{0}};
		snprintf(path, sizeof(path), "%s/%s", TEST_CONFORMANCE_DIR, de->d_name);
		if (conf_case_load(path, &c, &e))
			fail_msg("%s", e.msg);
		switch (conf_case_run(&c, &jit, why, sizeof(why))) {
		case CONF_PASS:
			passed++;
			break;
		case CONF_SKIP:
			skipped++;
			print_message("SKIP %s: %s\n", de->d_name, why);
			break;
		default:
			failed++;
			print_message("FAIL %s: %s\n", de->d_name, why);
		}
		conf_case_free(&c);
	}
	closedir(d);
	print_message("conformance (jit): %d passed, %d failed, %d skipped\n", passed, failed,
		      skipped);
	assert_int_equal(failed, 0);
	assert_int_equal(skipped, 0);
	assert_int_equal(passed, 313); /* callx.txt included */
}

/* ---- reference semantics ------------------------------------------------- */

enum { OP_DIV, OP_MOD, OP_SDIV, OP_SMOD };

static uint64_t ref_divmod(int op, int is64, uint64_t a, uint64_t b)
{
	if (!is64) {
		uint32_t x = (uint32_t)a, y = (uint32_t)b;
		int32_t sx = (int32_t)x, sy = (int32_t)y;
		switch (op) {
		case OP_DIV: return y ? x / y : 0;
		case OP_MOD: return y ? x % y : x;
		case OP_SDIV:
			if (!y) return 0;
			if (sy == -1) return (uint32_t)(0u - x);
			return (uint32_t)(sx / sy);
		default:
			if (!y) return x;
			if (sy == -1) return 0;
			return (uint32_t)(sx % sy);
		}
	}
	int64_t sa = (int64_t)a, sb = (int64_t)b;
	switch (op) {
	case OP_DIV: return b ? a / b : 0;
	case OP_MOD: return b ? a % b : a;
	case OP_SDIV:
		if (!b) return 0;
		if (sb == -1) return 0 - a;
		return (uint64_t)(sa / sb);
	default:
		if (!b) return a;
		if (sb == -1) return 0;
		return (uint64_t)(sa % sb);
	}
}

/*
 * A program that sets r0..r9 to distinct values, then dst = a and src = b,
 * runs op, and copies r0..r9 to out[] (through the stack, since every
 * register may be the one under test).  Returns the instruction count.
 */
static uint64_t out_regs[10];

static size_t build_reg_test(struct isa_insn *p, int dst, int src, uint64_t a, uint64_t b,
			     struct isa_insn op)
{
	size_t n = 0;
	for (int r = 0; r <= 9; r++) {
		struct isa_insn ld[2] = {LDDW(r, 0x1111111111111111ull * (uint64_t)(r + 1))};
		p[n++] = ld[0];
		p[n++] = ld[1];
	}
	struct isa_insn lb[2] = {LDDW(src, b)}, la[2] = {LDDW(dst, a)};
	p[n++] = lb[0], p[n++] = lb[1];
	p[n++] = la[0], p[n++] = la[1];
	op.dst = (uint8_t)dst;
	op.src = (uint8_t)(ISA_SRC(op.code) == ISA_X || ISA_CLASS(op.code) == ISA_STX ? src : 0);
	p[n++] = op;
	for (int r = 0; r <= 9; r++)
		p[n++] = I(ISA_OPC_STX_DW, ISA_REG_FP, r, (int16_t)(-8 * (r + 1)), 0);
	struct isa_insn lo[2] = {LDDW(0, (uintptr_t)out_regs)};
	p[n++] = lo[0], p[n++] = lo[1];
	for (int r = 0; r <= 9; r++) {
		p[n++] = I(ISA_OPC_LDX_DW, 1, ISA_REG_FP, (int16_t)(-8 * (r + 1)), 0);
		p[n++] = I(ISA_OPC_STX_DW, 0, 1, (int16_t)(8 * r), 0);
	}
	p[n++] = EXIT;
	return n;
}

/* Run op with dst = a, src = b; check dst = want and every other register kept. */
static void check_op(struct isa_insn op, int dst, int src, uint64_t a, uint64_t b,
		     uint64_t want, const char *what)
{
	struct isa_insn p[128];
	size_t n = build_reg_test(p, dst, src, a, b, op);
	run_ok(p, n, NULL, 0);
	for (int r = 0; r <= 9; r++) {
		/* build_reg_test loads src with b even for K forms */
		uint64_t exp = r == dst ? want : r == src ? b
					   : 0x1111111111111111ull * (uint64_t)(r + 1);
		if (out_regs[r] != exp)
			fail_msg("%s (op 0x%02x off %d imm %d, r%d=0x%llx, r%d=0x%llx): r%d = 0x%llx, "
				 "expected 0x%llx", what, op.code, op.off, op.imm, dst,
				 (unsigned long long)a, src, (unsigned long long)b, r,
				 (unsigned long long)out_regs[r], (unsigned long long)exp);
	}
}

static const uint64_t corner[] = {
	0, 1, 2, 3, 7, 0xffffffffffffffffull, 0xfffffffffffffffeull, 0xfffffffffffffff9ull,
	0x8000000000000000ull, 0x7fffffffffffffffull, 0x80000000ull, 0x7fffffffull,
	0xffffffffull, 0xfffffffeull, 0x100000000ull, 0xffffffff80000000ull,
	0x123456789abcdef0ull, 0x00000001ffffffffull,
};
#define NCORNER (sizeof(corner) / sizeof(corner[0]))

static void test_divmod_corners(void **state)
{
	/* (dst, src) pairs that alias the registers division uses: rax, rdx. */
	static const int pairs[][2] = {{0, 3}, {3, 0}, {1, 2}, {3, 3}, {0, 0}, {6, 5}, {4, 3}};
	for (int is64 = 0; is64 <= 1; is64++)
		for (int op = OP_DIV; op <= OP_SMOD; op++) {
			uint8_t base = (op == OP_DIV || op == OP_SDIV ? ISA_ALU_DIV : ISA_ALU_MOD) |
				       (is64 ? ISA_ALU64 : ISA_ALU);
			int16_t off = op >= OP_SDIV;
			for (size_t ai = 0; ai < NCORNER; ai++)
				for (size_t bi = 0; bi < NCORNER; bi++) {
					uint64_t a = corner[ai], b = corner[bi];
					const int *pr = pairs[(ai + bi) % 7];
					uint64_t bb = pr[0] == pr[1] ? a : b;
					check_op(I(base | ISA_X, 0, 0, off, 0), pr[0], pr[1], a, bb,
						 ref_divmod(op, is64, a, bb), "divmod X");
					/* The K form divides by the sign-extended imm. */
					int32_t k = (int32_t)(uint32_t)b;
					uint64_t kv = is64 ? (uint64_t)(int64_t)k : (uint32_t)k;
					check_op(I(base | ISA_K, 0, 0, off, k), pr[0], 9, a, 0,
						 ref_divmod(op, is64, a, kv), "divmod K");
				}
		}
}

static uint64_t ref_shift(int op, int is64, uint64_t a, uint64_t n)
{
	if (is64) {
		n &= 63;
		return op == ISA_ALU_LSH ? a << n : op == ISA_ALU_RSH ? a >> n
								 : (uint64_t)((int64_t)a >> n);
	}
	uint32_t x = (uint32_t)a;
	n &= 31;
	return op == ISA_ALU_LSH ? (uint32_t)(x << n)
	       : op == ISA_ALU_RSH ? x >> n : (uint32_t)((int32_t)x >> n);
}

static void test_shift_corners(void **state)
{
	static const uint64_t counts[] = {0, 1, 31, 32, 33, 63, 64, 65, 127, 0xffffffff,
					  0x100000020ull};
	/* r4 is rcx, the register x86 shifts by. */
	static const int pairs[][2] = {{0, 4}, {4, 0}, {4, 4}, {1, 2}, {4, 3}, {3, 4}};
	static const int ops[] = {ISA_ALU_LSH, ISA_ALU_RSH, ISA_ALU_ARSH};
	for (int is64 = 0; is64 <= 1; is64++)
		for (size_t o = 0; o < 3; o++)
			for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++)
				for (size_t ai = 0; ai < NCORNER; ai += 3) {
					uint8_t base = (uint8_t)(ops[o] | (is64 ? ISA_ALU64 : ISA_ALU));
					uint64_t a = corner[ai] | 0x8000000080000000ull, n = counts[ci];
					const int *pr = pairs[(ci + ai) % 6];
					uint64_t nn = pr[0] == pr[1] ? a : n;
					check_op(I(base | ISA_X, 0, 0, 0, 0), pr[0], pr[1], a, nn,
						 ref_shift(ops[o], is64, a, nn), "shift X");
					check_op(I(base | ISA_K, 0, 0, 0, (int32_t)n), pr[0], 9, a, 0,
						 ref_shift(ops[o], is64, a, (uint32_t)n), "shift K");
				}
}

static void test_alu32_zero_extends(void **state)
{
	static const uint8_t ops[] = {ISA_ALU_ADD, ISA_ALU_SUB, ISA_ALU_MUL, ISA_ALU_OR,
				      ISA_ALU_AND, ISA_ALU_XOR, ISA_ALU_MOV};
	for (size_t i = 0; i < sizeof(ops); i++) {
		uint64_t a = 0xffffffff00000005ull, b = 0xaaaaaaaa00000003ull, want;
		uint32_t x = (uint32_t)a, y = (uint32_t)b;
		switch (ops[i]) {
		case ISA_ALU_ADD: want = (uint32_t)(x + y); break;
		case ISA_ALU_SUB: want = (uint32_t)(x - y); break;
		case ISA_ALU_MUL: want = (uint32_t)(x * y); break;
		case ISA_ALU_OR: want = x | y; break;
		case ISA_ALU_AND: want = x & y; break;
		case ISA_ALU_XOR: want = x ^ y; break;
		default: want = y; break;
		}
		check_op(I(ISA_ALU | ISA_X | ops[i], 0, 0, 0, 0), 2, 7, a, b, want, "alu32 X");
	}
	/* neg, mov to itself, and the byte swaps at every width. */
	check_op(I(ISA_OPC_ALU32_NEG, 0, 0, 0, 0), 3, 9, 0xffffffff00000005ull, 0, 0xfffffffbull,
		 "neg32");
	check_op(I(ISA_OPC_ALU32_MOV_X, 0, 0, 0, 0), 5, 5, 0xffffffff12345678ull,
		 0xffffffff12345678ull, 0x12345678, "mov32 self");
	uint64_t v = 0x0123456789abcdefull;
	check_op(I(ISA_OPC_ALU32_TO_LE, 0, 0, 0, 16), 1, 9, v, 0, 0xcdef, "le16");
	check_op(I(ISA_OPC_ALU32_TO_LE, 0, 0, 0, 32), 1, 9, v, 0, 0x89abcdef, "le32");
	check_op(I(ISA_OPC_ALU32_TO_LE, 0, 0, 0, 64), 1, 9, v, 0, v, "le64");
	check_op(I(ISA_OPC_ALU32_TO_BE, 0, 0, 0, 16), 2, 9, v, 0, 0xefcd, "be16");
	check_op(I(ISA_OPC_ALU32_TO_BE, 0, 0, 0, 32), 6, 9, v, 0, 0xefcdab89, "be32");
	check_op(I(ISA_OPC_ALU32_TO_BE, 0, 0, 0, 64), 9, 8, v, 0, 0xefcdab8967452301ull, "be64");
	check_op(I(ISA_OPC_ALU64_BSWAP, 0, 0, 0, 16), 7, 9, v, 0, 0xefcd, "bswap16");
	check_op(I(ISA_OPC_ALU64_BSWAP, 0, 0, 0, 32), 0, 9, v, 0, 0xefcdab89, "bswap32");
	check_op(I(ISA_OPC_ALU64_BSWAP, 0, 0, 0, 64), 4, 9, v, 0, 0xefcdab8967452301ull,
		 "bswap64");
	/* movsx with byte registers that need REX (sil, dil) and r8. */
	check_op(I(ISA_OPC_ALU64_MOV_X, 0, 0, 8, 0), 0, 1, 0, 0x80, 0xffffffffffffff80ull,
		 "movsx8 from dil");
	check_op(I(ISA_OPC_ALU64_MOV_X, 0, 0, 16, 0), 5, 2, 0, 0x18000, 0xffffffffffff8000ull,
		 "movsx16");
	check_op(I(ISA_OPC_ALU64_MOV_X, 0, 0, 32, 0), 2, 5, 0, 0x80000000, 0xffffffff80000000ull,
		 "movsx32");
	check_op(I(ISA_OPC_ALU32_MOV_X, 0, 0, 8, 0), 3, 2, 0, 0xff, 0xffffffffull, "movsx32 8");
}

/* ---- memory and atomics -------------------------------------------------- */

static void test_stores_with_byte_registers(void **state)
{
	uint8_t mem[16] = {0};
	/* stxb from r2 (sil) and r1 (dil) as data: both need a REX prefix. */
	struct isa_insn p[] = {
		I(ISA_OPC_ALU64_MOV_X, 3, 1, 0, 0),
		I(ISA_OPC_ALU64_MOV_K, 2, 0, 0, 0x1ab),
		I(ISA_OPC_STX_B, 3, 2, 0, 0),
		I(ISA_OPC_STX_B, 3, 1, 1, 0), /* low byte of the pointer itself */
		I(ISA_OPC_ST_H, 3, 0, 2, 0x1234),
		I(ISA_OPC_ST_DW, 3, 0, 8, -2),
		I(ISA_OPC_LDXSX_B, 0, 3, 0, 0),
		EXIT,
	};
	uint64_t r0 = run_ok(p, sizeof(p) / sizeof(p[0]), mem, sizeof(mem));
	assert_int_equal(r0, 0xffffffffffffffabull);
	assert_int_equal(mem[0], 0xab);
	assert_int_equal(mem[1], (uint8_t)(uintptr_t)mem);
	assert_int_equal(mem[2], 0x34);
	assert_int_equal(mem[3], 0x12);
	uint64_t q;
	memcpy(&q, mem + 8, 8);
	assert_int_equal(q, 0xfffffffffffffffeull);
}

static void test_cmpxchg_aliasing(void **state)
{
	for (int w = 0; w <= 1; w++) {
		uint8_t code = w ? ISA_OPC_ATOMIC_DW : ISA_OPC_ATOMIC_W;
		uint64_t mem[2];
		/* src = r0: the new value is the compared value itself. */
		mem[0] = 0xffffffff00000007ull;
		struct isa_insn a[] = {
			LDDW(0, 0xaaaaaaaa00000007ull),
			I(code, 1, 0, 0, ISA_ATOMIC_CMPXCHG),
			EXIT,
		};
		uint64_t r0 = run_ok(a, 4, mem, sizeof(mem));
		assert_int_equal(r0, w ? 0xffffffff00000007ull : 7);
		assert_int_equal(mem[0], w ? 0xffffffff00000007ull : 0xffffffff00000007ull);
		/* dst = r0: the address is in the register cmpxchg compares. */
		mem[0] = 5;
		struct isa_insn b[] = {
			I(ISA_OPC_ALU64_MOV_X, 0, 1, 0, 0),
			I(ISA_OPC_ALU64_MOV_K, 2, 0, 0, 9),
			I(code, 0, 2, 0, ISA_ATOMIC_CMPXCHG),
			EXIT,
		};
		r0 = run_ok(b, 4, mem, sizeof(mem));
		/* r0 (the pointer) differs from 5: no store, r0 = old. */
		assert_int_equal(r0, 5);
		assert_int_equal(mem[0], 5);
		/* success and failure, with r0 and r3 (rdx) as operands */
		mem[0] = 0x1234;
		struct isa_insn c[] = {
			I(ISA_OPC_ALU64_MOV_K, 0, 0, 0, 0x1234),
			I(ISA_OPC_ALU64_MOV_K, 3, 0, 0, 77),
			I(code, 1, 3, 8, ISA_ATOMIC_CMPXCHG), /* mem[1] = garbage: fails */
			I(ISA_OPC_ALU64_MOV_K, 0, 0, 0, 0x1234),
			I(code, 1, 3, 0, ISA_ATOMIC_CMPXCHG), /* succeeds */
			I(ISA_OPC_ALU64_ADD_X, 0, 3, 0, 0),
			EXIT,
		};
		mem[1] = 99;
		r0 = run_ok(c, 7, mem, sizeof(mem));
		assert_int_equal(r0, 0x1234 + 77);
		assert_int_equal(mem[0], 77);
		assert_int_equal(mem[1], 99);
	}
}

static void test_atomic_fetch_ops(void **state)
{
	static const int ops[] = {ISA_ATOMIC_ADD, ISA_ATOMIC_OR, ISA_ATOMIC_AND, ISA_ATOMIC_XOR,
				  ISA_ATOMIC_XCHG};
	for (int w = 0; w <= 1; w++)
		for (size_t o = 0; o < 5; o++)
			for (int src = 0; src <= 5; src += 5) { /* r0 (rax) and r5 */
				uint64_t m0 = 0xf0f0f0f0f0f0f0f0ull, v = 0x0ff00ff00ff00ff1ull;
				uint64_t mem[1] = {m0};
				int fetch = ops[o] == ISA_ATOMIC_XCHG ? 0 : ISA_FETCH;
				struct isa_insn p[] = {
					LDDW(src, v),
					I(w ? ISA_OPC_ATOMIC_DW : ISA_OPC_ATOMIC_W, 1, src, 0,
					  ops[o] | fetch),
					I(ISA_OPC_ALU64_MOV_X, 0, src, 0, 0),
					EXIT,
				};
				uint64_t r0 = run_ok(p, 5, mem, sizeof(mem));
				uint64_t x = w ? m0 : (uint32_t)m0, y = w ? v : (uint32_t)v, r;
				switch (ops[o]) {
				case ISA_ATOMIC_ADD: r = x + y; break;
				case ISA_ATOMIC_OR: r = x | y; break;
				case ISA_ATOMIC_AND: r = x & y; break;
				case ISA_ATOMIC_XOR: r = x ^ y; break;
				default: r = y; break;
				}
				if (!w)
					r = (uint32_t)r | (m0 & 0xffffffff00000000ull);
				assert_int_equal(r0, x);
				assert_int_equal(mem[0], r);
			}
}

/* ---- calls --------------------------------------------------------------- */

static void test_helper_call_args(void **state)
{
	struct isa_insn p[] = {
		I(ISA_OPC_ALU64_MOV_K, 6, 0, 0, 42),
		I(ISA_OPC_ALU64_MOV_K, 1, 0, 0, 1),
		I(ISA_OPC_ALU64_MOV_K, 2, 0, 0, 2),
		I(ISA_OPC_ALU64_MOV_K, 3, 0, 0, 3),
		I(ISA_OPC_ALU64_MOV_K, 4, 0, 0, 4),
		I(ISA_OPC_ALU64_MOV_K, 5, 0, 0, 5),
		I(ISA_OPC_JMP_CALL, 0, 0, 0, 7),
		I(ISA_OPC_ALU64_ADD_X, 0, 6, 0, 0),
		EXIT,
	};
	assert_int_equal(run_ok(p, 9, NULL, 0), 54321 + 42);
}

/*
 * depth frames: each function stores its depth on its own stack, sets r6,
 * calls the next, and checks its stack slot and r6 survived.  The deepest
 * returns 1; each level adds its slot, so r0 = sum of depths + 1.
 */
static size_t build_call_chain(struct isa_insn *p, int depth)
{
	size_t n = 0;
	for (int d = 1; d <= depth; d++) {
		p[n++] = I(ISA_OPC_ST_DW, ISA_REG_FP, 0, -8, d);
		p[n++] = I(ISA_OPC_ALU64_MOV_K, 6, 0, 0, 100 * d);
		if (d < depth) /* the next function starts 5 instructions after this one */
			p[n++] = I(ISA_OPC_JMP_CALL, 0, ISA_CALL_LOCAL, 0, 5);
		else
			p[n++] = I(ISA_OPC_ALU64_MOV_K, 0, 0, 0, 1);
		p[n++] = I(ISA_OPC_LDX_DW, 1, ISA_REG_FP, -8, 0);
		p[n++] = I(ISA_OPC_ALU64_ADD_X, 0, 1, 0, 0);
		/* r6 must still be 100 * d: r0 += r6 - 100 * d */
		p[n++] = I(ISA_OPC_ALU64_SUB_K, 6, 0, 0, 100 * d);
		p[n++] = I(ISA_OPC_ALU64_ADD_X, 0, 6, 0, 0);
		p[n++] = EXIT;
	}
	return n;
}

static void test_local_calls_deep(void **state)
{
	struct isa_insn p[8 * ISA_MAX_CALL_DEPTH];
	for (int depth = 1; depth <= ISA_MAX_CALL_DEPTH; depth++) {
		size_t n = build_call_chain(p, depth);
		uint64_t want = 1 + (uint64_t)depth * (depth + 1) / 2;
		assert_int_equal(run_ok(p, n, NULL, 0), want);
	}
}

static void test_call_depth_error(void **state)
{
	struct isa_insn p[8 * (ISA_MAX_CALL_DEPTH + 1)];
	size_t n = build_call_chain(p, ISA_MAX_CALL_DEPTH + 1);
	struct err e = {{0}};
	uint64_t r0;
	int rc = jit_exec(p, n, NULL, 0, &r0, &e);
	assert_int_equal(rc, -E2BIG);
	assert_non_null(strstr(e.msg, "call depth exceeds 8 frames"));
	/* the call that went too deep: in function 8, its third instruction */
	assert_non_null(strstr(e.msg, "insn 58:"));
	/* Infinite recursion stops the same way. */
	struct isa_insn rec[] = {
		I(ISA_OPC_JMP_CALL, 0, ISA_CALL_LOCAL, 0, -1),
		EXIT,
	};
	rc = jit_exec(rec, 2, NULL, 0, &r0, &e);
	assert_int_equal(rc, -E2BIG);
	assert_non_null(strstr(e.msg, "insn 0: call depth"));
}

static void test_callx(void **state)
{
	/* callx r6 = helper 7 (helper_mix), with the arguments in r1..r5 */
	struct isa_insn p[] = {
		I(ISA_OPC_ALU64_MOV_K, 6, 0, 0, 7),
		I(ISA_OPC_ALU64_MOV_K, 1, 0, 0, 1),
		I(ISA_OPC_ALU64_MOV_K, 2, 0, 0, 2),
		I(ISA_OPC_ALU64_MOV_K, 3, 0, 0, 3),
		I(ISA_OPC_ALU64_MOV_K, 4, 0, 0, 4),
		I(ISA_OPC_ALU64_MOV_K, 5, 0, 0, 5),
		I(ISA_OPC_JMP_CALLX, 6, 0, 0, 0),
		EXIT,
	};
	assert_int_equal(run_ok(p, 8, NULL, 0), 54321);
	/* an id without a helper, and one past the table, fault at run time */
	static const int64_t bad[] = {99, HELPER_TABLE_SIZE, -1};
	for (size_t k = 0; k < 3; k++) {
		struct isa_insn q[] = {
			LDDW(3, bad[k]),
			I(ISA_OPC_JMP_CALLX, 3, 0, 0, 0),
			EXIT,
		};
		struct err e = {{0}};
		uint64_t r0;
		char want[64];
		assert_int_equal(jit_exec(q, 4, NULL, 0, &r0, &e), -ENOENT);
		snprintf(want, sizeof(want), "insn 2: callx: unknown helper %llu",
			 (unsigned long long)bad[k]);
		if (!strstr(e.msg, want))
			fail_msg("expected '%s' in '%s'", want, e.msg);
	}
}

/* ---- direct entry --------------------------------------------------------- */

/* 0 when the native stack was 16-byte aligned at the call, as the ABI wants. */
static uint64_t helper_stack_misalign(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				      uint64_t r5)
{
	/* The forced frame: rbp = the caller's rsp at the call - 16. */
	return (uintptr_t)__builtin_frame_address(0) & 15;
}

/*
 * canary_call(fn, r1, after): fn(r1, 0, 0, 0, 0) with canaries in every
 * native callee-saved register; after[0..5] = rbx, rbp, r12..r15 once fn has
 * returned (the System V ABI says they come back unchanged).
 */
uint64_t canary_call(jit_direct_fn fn, uint64_t r1, uint64_t *after);
__asm__(".text\n"
	".globl canary_call\n"
	".hidden canary_call\n"
	".type canary_call, @function\n"
	"canary_call:\n"
	"	push %rbx\n	push %rbp\n	push %r12\n	push %r13\n	push %r14\n	push %r15\n"
	"	push %rdx\n" /* seven pushes: rsp is 16-byte aligned for the call */
	"	mov %rdi, %rax\n	mov %rsi, %rdi\n"
	"	xor %esi, %esi\n	xor %edx, %edx\n	xor %ecx, %ecx\n	xor %r8d, %r8d\n"
	"	movabs $0xca11ab1e00000001, %rbx\n	movabs $0xca11ab1e00000002, %rbp\n"
	"	movabs $0xca11ab1e00000003, %r12\n	movabs $0xca11ab1e00000004, %r13\n"
	"	movabs $0xca11ab1e00000005, %r14\n	movabs $0xca11ab1e00000006, %r15\n"
	"	call *%rax\n"
	"	pop %rdx\n"
	"	mov %rbx, 0(%rdx)\n	mov %rbp, 8(%rdx)\n	mov %r12, 16(%rdx)\n"
	"	mov %r13, 24(%rdx)\n	mov %r14, 32(%rdx)\n	mov %r15, 40(%rdx)\n"
	"	pop %r15\n	pop %r14\n	pop %r13\n	pop %r12\n	pop %rbp\n	pop %rbx\n"
	"	ret\n"
	".size canary_call, .-canary_call\n");

/*
 * A program without local calls and callx is one native function called
 * straight from C; it saves only the callee-saved registers it uses.  For
 * every subset of r6..r10: the native callee-saved registers survive, the
 * stack is aligned at a helper call, and r6..r9 and the eBPF stack survive
 * the helper.  r0 = 0 when all holds.
 */
static void test_direct_entry(void **state)
{
	enum { ARG = 0x1234 };

	init_helpers();
	test_helpers.fn[8] = helper_stack_misalign;
	for (unsigned mask = 0; mask < 32; mask++) {
		struct isa_insn q[32];
		size_t n = 0;
		for (int r = 6; r <= 9; r++)
			if (mask >> (r - 6) & 1)
				q[n++] = I(ISA_OPC_ALU64_MOV_K, r, 0, 0, r * 11);
		if (mask & 16)
			q[n++] = I(ISA_OPC_STX_DW, ISA_REG_FP, 1, -8, 0);
		q[n++] = I(ISA_OPC_JMP_CALL, 0, ISA_CALL_HELPER, 0, 8);
		for (int r = 6; r <= 9; r++) {
			if (mask >> (r - 6) & 1) {
				q[n++] = I(ISA_OPC_ALU64_ADD_X, 0, r, 0, 0);
				q[n++] = I(ISA_OPC_ALU64_SUB_K, 0, 0, 0, r * 11);
			}
		}
		if (mask & 16) {
			q[n++] = I(ISA_OPC_LDX_DW, 2, ISA_REG_FP, -8, 0);
			q[n++] = I(ISA_OPC_ALU64_SUB_K, 2, 0, 0, ARG);
			q[n++] = I(ISA_OPC_ALU64_ADD_X, 0, 2, 0, 0);
		}
		q[n++] = EXIT;

		struct prog p = {.name = "direct", .insns = q, .insn_cnt = n};
		struct err e = {{0}};
		uint64_t after[6];
		assert_int_equal(jit_compile(&p, &test_helpers, &e), 0);
		jit_direct_fn fn = jit_direct(&p);
		assert_non_null(fn);
		if (canary_call(fn, ARG, after) != 0)
			fail_msg("subset 0x%x: misaligned stack or lost registers", mask);
		for (int k = 0; k < 6; k++)
			if (after[k] != 0xca11ab1e00000001ull + (uint64_t)k)
				fail_msg("subset 0x%x: native callee-saved register %d clobbered",
					 mask, k);
		jit_free(&p);
		assert_null(jit_direct(&p));
	}

	/* Programs that can fault at run time keep the trampoline. */
	struct isa_insn chain[16];
	size_t n = build_call_chain(chain, 2);
	struct isa_insn callx[] = {
		I(ISA_OPC_ALU64_MOV_K, 6, 0, 0, 7),
		I(ISA_OPC_JMP_CALLX, 6, 0, 0, 0),
		EXIT,
	};
	struct prog local = {.name = "local", .insns = chain, .insn_cnt = n};
	struct prog cx = {.name = "callx", .insns = callx, .insn_cnt = 3};
	struct err e = {{0}};
	assert_int_equal(jit_compile(&local, &test_helpers, &e), 0);
	assert_int_equal(jit_compile(&cx, &test_helpers, &e), 0);
	assert_null(jit_direct(&local));
	assert_null(jit_direct(&cx));
	jit_free(&local);
	jit_free(&cx);
}

/* ---- multiplication by constants ------------------------------------------- */

/*
 * Multiplication by an immediate takes cheaper forms for some constants
 * (0, 1, powers of two, 3/5/9, 2^k +- 1): every such constant and its
 * neighbours, both widths, every register, against C.
 */
static void test_mul_by_constant(void **state)
{
	static const uint64_t vals[] = {0, 1, 2, 0x7f, 0x80000000u, 0xffffffffu,
					0x123456789abcdef1ull, 0x8000000000000000ull,
					0xffffffffffffffffull};
	int32_t imms[200];
	size_t n_imm = 0;
	for (int k = 0; k < 31; k++) {
		int64_t p2 = (int64_t)1 << k;
		for (int64_t d = -1; d <= 1; d++)
			if (p2 + d >= INT32_MIN && p2 + d <= INT32_MAX)
				imms[n_imm++] = (int32_t)(p2 + d);
	}
	imms[n_imm++] = INT32_MAX;
	imms[n_imm++] = -1;
	imms[n_imm++] = -31;
	imms[n_imm++] = 0;

	for (int w = 0; w < 2; w++) {
		for (int r = 0; r < 10; r++) {
			for (size_t k = 0; k < n_imm; k++) {
				for (size_t v = 0; v < sizeof(vals) / sizeof(vals[0]); v++) {
					struct isa_insn q[] = {
						LDDW(r, vals[v]),
						I((w ? ISA_ALU64 : ISA_ALU) | ISA_K | ISA_ALU_MUL, r,
						  0, 0, imms[k]),
						I(ISA_OPC_ALU64_MOV_X, 0, r, 0, 0),
						EXIT,
					};
					uint64_t want = w ? vals[v] * (uint64_t)(int64_t)imms[k]
							  : (uint32_t)((uint32_t)vals[v] *
								       (uint32_t)imms[k]);
					uint64_t got = run_ok(q, 5, NULL, 0);
					if (got != want)
						fail_msg("alu%d r%d 0x%llx * %d: 0x%llx, want 0x%llx",
							 w ? 64 : 32, r, (unsigned long long)vals[v],
							 imms[k], (unsigned long long)got,
							 (unsigned long long)want);
				}
			}
		}
	}
}

/* ---- mov + add as lea ------------------------------------------------------ */

/*
 * "mov d, s; add d, t" becomes lea d, [s + t]: every register triple (the
 * encodings of rbp/r13 bases and r8..r15 need care), both widths, register
 * and immediate addends.  r0..r9 start with distinct values from memory.
 */
static void test_mov_add_lea(void **state)
{
	uint64_t val[10];
	for (int r = 0; r < 10; r++)
		val[r] = 0x9e3779b97f4a7c15ull * (uint64_t)(r + 1) ^ 0xffffffffull;

	for (int w = 0; w < 2; w++) {
		uint8_t cls = w ? ISA_ALU64 : ISA_ALU;
		for (int d = 0; d < 10; d++) {
			for (int sreg = 0; sreg < 10; sreg++) {
				for (int t = 0; t <= 10; t++) { /* t == 10: the immediate */
					struct isa_insn q[16];
					size_t n = 0;
					for (int r = 0; r < 10; r++)
						if (r != 1)
							q[n++] = I(ISA_OPC_LDX_DW, r, 1, 8 * r, 0);
					q[n++] = I(ISA_OPC_LDX_DW, 1, 1, 8, 0);
					q[n++] = I(cls | ISA_X | ISA_ALU_MOV, d, sreg, 0, 0);
					if (t < 10)
						q[n++] = I(cls | ISA_X | ISA_ALU_ADD, d, t, 0, 0);
					else
						q[n++] = I(cls | ISA_K | ISA_ALU_ADD, d, 0, 0, -77777);
					q[n++] = I(ISA_OPC_ALU64_MOV_X, 0, d, 0, 0);
					q[n++] = EXIT;

					uint64_t mem[10];
					memcpy(mem, val, sizeof(mem));
					uint64_t addend = t < 10 ? (t == d ? val[sreg] : val[t])
								 : (uint64_t)-77777;
					uint64_t want = val[sreg] + addend;
					if (!w)
						want = (uint32_t)want;
					uint64_t got = run_ok(q, n, mem, sizeof(mem));
					if (got != want)
						fail_msg("alu%d: mov r%d, r%d; add r%d, %s%d: 0x%llx, want "
							 "0x%llx", w ? 64 : 32, d, sreg, d,
							 t < 10 ? "r" : "", t < 10 ? t : -77777,
							 (unsigned long long)got, (unsigned long long)want);
				}
			}
		}
	}

	/* r10 as the source: the usual pointer into the stack. */
	struct isa_insn fp[] = {
		I(ISA_OPC_ALU64_MOV_X, 2, ISA_REG_FP, 0, 0),
		I(ISA_OPC_ALU64_ADD_K, 2, 0, 0, -16),
		I(ISA_OPC_ST_DW, 2, 0, 0, 4242),
		I(ISA_OPC_ALU64_MOV_X, 3, ISA_REG_FP, 0, 0),
		I(ISA_OPC_ALU64_ADD_X, 3, 2, 0, 0), /* r10 + r10 - 16: only compared */
		I(ISA_OPC_LDX_DW, 0, ISA_REG_FP, -16, 0),
		EXIT,
	};
	assert_int_equal(run_ok(fp, 7, NULL, 0), 4242);

	/* A jump lands on the add: both instructions must stay. */
	struct isa_insn target[] = {
		I(ISA_OPC_ALU64_MOV_K, 0, 0, 0, 5),
		I(ISA_OPC_ALU64_MOV_K, 2, 0, 0, 7),
		I(ISA_OPC_JMP_JEQ_K, 1, 0, 1, 0),
		I(ISA_OPC_ALU64_MOV_X, 0, 2, 0, 0),
		I(ISA_OPC_ALU64_ADD_K, 0, 0, 0, 1),
		EXIT,
	};
	assert_int_equal(run_ok(target, 6, NULL, 0), 6);
	assert_int_equal(run_ok(target, 6, (void *)1, 0), 8);
}

/* ---- loop alignment -------------------------------------------------------- */

/* Offset of the first occurrence of pat in the compiled code, or -1. */
static long code_find(const struct prog *p, const uint8_t *pat, size_t len)
{
	size_t n;
	const uint8_t *code = jit_code(p, &n);

	for (size_t k = 0; k + len <= n; k++)
		if (!memcmp(code + k, pat, len))
			return (long)k;
	return -1;
}

/*
 * The head of a small straight-line loop starts on a 32-byte boundary (the
 * padding before it is nops, so the result does not change); the tail of a
 * branchy loop is not padded.
 */
static void test_loop_alignment(void **state)
{
	static const uint8_t add_rax_1[] = {0x48, 0x83, 0xc0, 0x01};
	static const uint8_t add_rax_2[] = {0x48, 0x83, 0xc0, 0x02};
	for (int lead = 0; lead < 40; lead++) {
		struct isa_insn q[64];
		size_t n = 0;
		/* lead instructions of various sizes shift the loop around */
		for (int k = 0; k < lead; k++)
			q[n++] = k % 3 ? I(ISA_OPC_ALU64_MOV_K, 3, 0, 0, 100000 * k)
				       : I(ISA_OPC_ALU64_ADD_K, 3, 0, 0, 1);
		q[n++] = I(ISA_OPC_ALU64_MOV_K, 0, 0, 0, 0);
		q[n++] = I(ISA_OPC_ALU64_MOV_K, 1, 0, 0, 10);
		q[n++] = I(ISA_OPC_ALU64_ADD_K, 0, 0, 0, 1); /* loop head */
		q[n++] = I(ISA_OPC_ALU64_SUB_K, 1, 0, 0, 1);
		q[n++] = I(ISA_OPC_JMP_JNE_K, 1, 0, -3, 0);
		q[n++] = EXIT;

		struct prog p = {.name = "loop", .insns = q, .insn_cnt = n};
		struct prog_run_opts o = {0};
		struct err e = {{0}};
		uint64_t r0 = 0;
		assert_int_equal(jit_compile(&p, &test_helpers, &e), 0);
		long at = code_find(&p, add_rax_1, sizeof(add_rax_1));
		if (at < 0 || at % 32)
			fail_msg("lead %d: loop head at offset %ld, not 32-byte aligned", lead, at);
		assert_int_equal(jit_run(&p, &o, &r0, &e), 0);
		assert_int_equal(r0, 10);
		jit_free(&p);
	}

	/* A loop with a branch inside: its head stays where it falls. */
	struct isa_insn branchy[] = {
		I(ISA_OPC_ALU64_MOV_K, 0, 0, 0, 0),
		I(ISA_OPC_ALU64_MOV_K, 1, 0, 0, 10),
		I(ISA_OPC_ALU64_ADD_K, 0, 0, 0, 2), /* head */
		I(ISA_OPC_JMP_JGT_K, 1, 0, 1, 5),
		I(ISA_OPC_ALU64_ADD_K, 0, 0, 0, 1),
		I(ISA_OPC_ALU64_SUB_K, 1, 0, 0, 1),
		I(ISA_OPC_JMP_JNE_K, 1, 0, -5, 0),
		EXIT,
	};
	struct prog p = {.name = "branchy", .insns = branchy, .insn_cnt = 8};
	struct err e = {{0}};
	assert_int_equal(jit_compile(&p, &test_helpers, &e), 0);
	/* after xor eax, eax (prologue); xor eax, eax; mov edi, 10 */
	assert_int_equal(code_find(&p, add_rax_2, sizeof(add_rax_2)), 9);
	jit_free(&p);
	assert_int_equal(run_ok(branchy, 8, NULL, 0), 25);
}

/* ---- jumps --------------------------------------------------------------- */

static void test_long_and_short_jumps(void **state)
{
	/* A loop around a body too large for 8-bit displacements, and jumps
	 * forward over it: exercises both encodings and the layout passes. */
	enum { BODY = 200 };
	struct isa_insn p[BODY + 16];
	size_t n = 0;
	p[n++] = I(ISA_OPC_ALU64_MOV_K, 0, 0, 0, 0);
	p[n++] = I(ISA_OPC_ALU64_MOV_K, 6, 0, 0, 10);
	size_t loop = n;
	for (int k = 0; k < BODY; k++)
		p[n++] = I(ISA_OPC_ALU64_ADD_K, 0, 0, 0, 1);
	p[n++] = I(ISA_OPC_ALU64_SUB_K, 6, 0, 0, 1);
	p[n] = I(ISA_OPC_JMP_JNE_K, 6, 0, (int16_t)((int64_t)loop - (int64_t)n - 1), 0);
	n++;
	p[n++] = I(ISA_OPC_JMP32_JA, 0, 0, 0, 1);
	p[n++] = I(ISA_OPC_ALU64_MOV_K, 0, 0, 0, -1); /* skipped */
	p[n++] = EXIT;
	assert_int_equal(run_ok(p, n, NULL, 0), 10 * BODY);
}

/* ---- errors -------------------------------------------------------------- */

static void expect_compile_error(const struct isa_insn *insns, size_t n, const char *msg)
{
	struct prog p = {.name = "bad", .insns = (struct isa_insn *)insns, .insn_cnt = n};
	struct err e = {{0}};
	init_helpers();
	int rc = jit_compile(&p, &test_helpers, &e);
	assert_true(rc < 0);
	assert_null(p.jit);
	if (!strstr(e.msg, msg))
		fail_msg("expected '%s' in '%s'", msg, e.msg);
}

static void test_compile_errors(void **state)
{
	struct isa_insn unknown[] = {I(0x8e, 0, 0, 0, 0), EXIT};
	expect_compile_error(unknown, 2, "insn 0: unknown opcode 0x8e");
	struct isa_insn badjmp[] = {I(ISA_OPC_JMP_JA, 0, 0, 5, 0), EXIT};
	expect_compile_error(badjmp, 2, "insn 0: jump target 6 is outside the program");
	struct isa_insn mid[] = {I(ISA_OPC_JMP_JA, 0, 0, 1, 0), LDDW(0, 1), EXIT};
	expect_compile_error(mid, 4, "middle of an LD_IMM64");
	struct isa_insn helper[] = {I(ISA_OPC_JMP_CALL, 0, 0, 0, 99), EXIT};
	expect_compile_error(helper, 2, "insn 0: helper 99 is not in the helper table");
	struct isa_insn fp[] = {I(ISA_OPC_ALU64_MOV_K, ISA_REG_FP, 0, 0, 0), EXIT};
	expect_compile_error(fp, 2, "r10 is read-only");
	struct isa_insn reg[] = {I(ISA_OPC_ALU64_MOV_X, 0, 12, 0, 0), EXIT};
	expect_compile_error(reg, 2, "register r12 does not exist");
	struct isa_insn falloff[] = {I(ISA_OPC_ALU64_MOV_K, 0, 0, 0, 0)};
	expect_compile_error(falloff, 1, "insn 0: execution can fall through to the end");
	struct isa_insn intofunc[] = {
		I(ISA_OPC_JMP_CALL, 0, ISA_CALL_LOCAL, 0, 1),
		I(ISA_OPC_ALU64_MOV_K, 0, 0, 0, 0),
		EXIT,
	};
	expect_compile_error(intofunc, 3, "insn 1: execution can fall through to another function");
	struct isa_insn map[] = {I(0x18, 1, ISA_PSEUDO_MAP_FD, 0, 3), I(0, 0, 0, 0, 0), EXIT};
	expect_compile_error(map, 3, "map index 3 out of range");
	struct isa_insn end[] = {I(ISA_OPC_ALU32_TO_BE, 0, 0, 0, 24), EXIT};
	expect_compile_error(end, 2, "byte swap width 24");
	struct isa_insn sdiv[] = {I(ISA_OPC_ALU64_DIV_X, 0, 1, 2, 0), EXIT};
	expect_compile_error(sdiv, 2, "division off=2");
}

static void test_map_fd_pointer_and_code_bytes(void **state)
{
	/* LD_IMM64 MAP_FD loads the handle's address (never dereferenced here). */
	struct map *maps[2] = {(struct map *)(uintptr_t)0x1000, (struct map *)(uintptr_t)0x123456789ull};
	struct isa_insn insns[] = {I(0x18, 0, ISA_PSEUDO_MAP_FD, 0, 1), I(0, 0, 0, 0, 0), EXIT};
	struct prog p = {.name = "m", .insns = insns, .insn_cnt = 3, .maps = maps, .map_cnt = 2};
	struct err e = {{0}};
	uint64_t r0 = 0;
	init_helpers();
	assert_int_equal(jit_compile(&p, &test_helpers, &e), 0);
	struct prog_run_opts o = {0};
	assert_int_equal(jit_run(&p, &o, &r0, &e), 0);
	assert_int_equal(r0, 0x123456789ull);
	size_t len;
	const uint8_t *code = jit_code(&p, &len);
	assert_non_null(code);
	assert_true(len > 10);
	/* The last instruction of the image is EXIT's ret. */
	assert_int_equal(code[len - 1], 0xc3);
	/* Running with another helper table is refused. */
	struct helper_table other = {{0}};
	o.helpers = &other;
	assert_int_equal(jit_run(&p, &o, &r0, &e), -EINVAL);
	jit_free(&p);
	assert_null(p.jit);
	code = jit_code(&p, &len);
	assert_null(code);
	assert_int_equal(len, 0);
	assert_int_equal(jit_run(&p, NULL, &r0, &e), -EINVAL);
}

static void test_map_value_access(void **state)
{
	/* LD_IMM64 MAP_VALUE = the array's value + offset: store, atomic add, load */
	struct map_def def = {.type = MAP_TYPE_ARRAY, .key_size = 4, .value_size = 32,
			      .max_entries = 1, .name = "data"};
	struct map *map;
	struct err e = {{0}};
	assert_int_equal(map_create(&def, &map, &e), 0);
	struct map *maps[1] = {map};
	struct isa_insn insns[] = {
		I(0x18, 1, ISA_PSEUDO_MAP_VALUE, 0, 0), I(0, 0, 0, 0, 8),
		I(ISA_OPC_ST_DW, 1, 0, 0, 40),
		I(ISA_OPC_ALU64_MOV_K, 2, 0, 0, 2),
		I(ISA_OPC_ATOMIC_DW, 1, 2, 0, ISA_ATOMIC_ADD),
		I(ISA_OPC_LDX_DW, 0, 1, 0, 0),
		EXIT,
	};
	struct prog p = {.name = "m", .insns = insns, .insn_cnt = 7, .maps = maps, .map_cnt = 1};
	uint64_t r0 = 0;
	assert_int_equal(jit_compile(&p, NULL, &e), 0);
	assert_int_equal(prog_run(&p, PROG_BACKEND_JIT, NULL, &r0, &e), 0);
	assert_int_equal(r0, 42);
	uint64_t v;
	memcpy(&v, (uint8_t *)map_array_base(map) + 8, 8);
	assert_int_equal(v, 42);
	jit_free(&p);
	map_free(map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conformance_all),
		cmocka_unit_test(test_divmod_corners),
		cmocka_unit_test(test_shift_corners),
		cmocka_unit_test(test_alu32_zero_extends),
		cmocka_unit_test(test_stores_with_byte_registers),
		cmocka_unit_test(test_cmpxchg_aliasing),
		cmocka_unit_test(test_atomic_fetch_ops),
		cmocka_unit_test(test_helper_call_args),
		cmocka_unit_test(test_local_calls_deep),
		cmocka_unit_test(test_call_depth_error),
		cmocka_unit_test(test_callx),
		cmocka_unit_test(test_direct_entry),
		cmocka_unit_test(test_mul_by_constant),
		cmocka_unit_test(test_mov_add_lea),
		cmocka_unit_test(test_loop_alignment),
		cmocka_unit_test(test_long_and_short_jumps),
		cmocka_unit_test(test_compile_errors),
		cmocka_unit_test(test_map_fd_pointer_and_code_bytes),
		cmocka_unit_test(test_map_value_access),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
