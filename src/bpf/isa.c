/* SPDX-License-Identifier: MIT */
/*
 * isa.c - the bytecode decoder: opcode names and the RFC 9669 encoding rules.
 *
 * Everything here is driven by the lists in isa.h: the set of valid opcode
 * bytes comes from ISA_OPCODES, the mnemonics from ISA_ALU_OPS/ISA_JMP_OPS.
 */
#include "isa.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ISA_VALID_ENTRY(name, code) [code] = 1,
static const unsigned char isa_valid[256] = {ISA_OPCODES(ISA_VALID_ENTRY)};
#undef ISA_VALID_ENTRY

int isa_opcode_valid(uint8_t code)
{
	return isa_valid[code];
}

/*
 * Mnemonics of the arithmetic and jump classes, by opcode byte.  END, NEG,
 * CALLX and the load/store classes are named in isa_opcode_name() itself,
 * since their names do not follow the "op" + "32" pattern.
 */
#define ALU32_K(n, v, mn) [ISA_ALU | ISA_K | (v)] = mn "32",
#define ALU32_X(n, v, mn) [ISA_ALU | ISA_X | (v)] = mn "32",
#define ALU64_K(n, v, mn) [ISA_ALU64 | ISA_K | (v)] = mn,
#define ALU64_X(n, v, mn) [ISA_ALU64 | ISA_X | (v)] = mn,
#define JMP_K(n, v, mn) [ISA_JMP | ISA_K | (v)] = mn,
#define JMP_X(n, v, mn) [ISA_JMP | ISA_X | (v)] = mn,
#define JMP32_K(n, v, mn) [ISA_JMP32 | ISA_K | (v)] = mn "32",
#define JMP32_X(n, v, mn) [ISA_JMP32 | ISA_X | (v)] = mn "32",
static const char *const isa_op_names[256] = {
	ISA_ALU_OPS(ALU32_K) ISA_ALU_OPS(ALU32_X) ISA_ALU_OPS(ALU64_K)
	ISA_ALU_OPS(ALU64_X) ISA_JMP_OPS(JMP_K) ISA_JMP_OPS(JMP_X)
	ISA_JMP_OPS(JMP32_K) ISA_JMP_OPS(JMP32_X)
};
#undef ALU32_K
#undef ALU32_X
#undef ALU64_K
#undef ALU64_X
#undef JMP_K
#undef JMP_X
#undef JMP32_K
#undef JMP32_X

const char *isa_opcode_name(uint8_t code)
{
	static const char *const ldx[4] = {"ldxw", "ldxh", "ldxb", "ldxdw"};
	static const char *const ldxsx[4] = {"ldxsw", "ldxsh", "ldxsb", "ldxsdw"};
	static const char *const st[4] = {"stw", "sth", "stb", "stdw"};
	static const char *const stx[4] = {"stxw", "stxh", "stxb", "stxdw"};
	unsigned sz = ISA_SIZE(code) >> 3;

	if (!isa_valid[code])
		return NULL;
	switch (code) {
	case ISA_OPC_ALU32_TO_LE:
		return "le";
	case ISA_OPC_ALU32_TO_BE:
		return "be";
	case ISA_OPC_ALU64_BSWAP:
		return "bswap";
	case ISA_OPC_JMP_CALLX:
		return "callx";
	case ISA_OPC_JMP32_JA:
		return "ja32";
	case ISA_OPC_LD_IMM64:
		return "lddw";
	case ISA_OPC_ATOMIC_W:
		return "atomic32";
	case ISA_OPC_ATOMIC_DW:
		return "atomic";
	}
	switch (ISA_CLASS(code)) {
	case ISA_LDX:
		return ISA_MODE(code) == ISA_MEMSX ? ldxsx[sz] : ldx[sz];
	case ISA_ST:
		return st[sz];
	case ISA_STX:
		return stx[sz];
	default:
		return isa_op_names[code];
	}
}

/* Record the first rule broken; always returns -EINVAL. */
__attribute__((format(printf, 3, 4))) static int
isa_reject(struct isa_error *err, size_t idx, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		err->index = idx;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Is atomic imm one of ISA_ATOMIC_OPS, alone or (for the first four) with ISA_FETCH? */
static int isa_atomic_imm_valid(int32_t imm)
{
#define ISA_ATOMIC_CASE(name, val, mn)                                         \
	if (imm == (val) || (((val) & ISA_FETCH) == 0 && imm == ((val) | ISA_FETCH))) \
		return 1;
	ISA_ATOMIC_OPS(ISA_ATOMIC_CASE)
#undef ISA_ATOMIC_CASE
	return 0;
}

/* A field that RFC 9669 reserves must be zero. */
#define REQUIRE_ZERO(field)                                                    \
	do {                                                                   \
		if (in->field)                                                 \
			return isa_reject(err, i, "%s: reserved field " #field "=%d must be 0", \
					  name, (int)in->field);               \
	} while (0)

/* Checks of one slot that need no knowledge of the other slots. */
static int isa_check_fields(const struct isa_insn *in, size_t i, int allow_callx,
			    struct isa_error *err)
{
	uint8_t code = in->code;
	const char *name = isa_opcode_name(code);
	uint8_t cls = ISA_CLASS(code), op = ISA_OP(code);

	if (!name) {
		if (cls == ISA_LD && (ISA_MODE(code) == ISA_ABS || ISA_MODE(code) == ISA_IND))
			return isa_reject(err, i, "opcode 0x%02x: legacy packet access (BPF_ABS/BPF_IND) is not supported",
					  code);
		return isa_reject(err, i, "unknown opcode 0x%02x", code);
	}
	if (in->dst >= ISA_NR_REGS)
		return isa_reject(err, i, "%s: invalid destination register r%d", name, in->dst);
	if (in->src >= ISA_NR_REGS && !(code == ISA_OPC_LD_IMM64))
		return isa_reject(err, i, "%s: invalid source register r%d", name, in->src);

	switch (cls) {
	case ISA_ALU:
	case ISA_ALU64:
		if (in->dst == ISA_REG_FP)
			return isa_reject(err, i, "%s: r10 is read-only", name);
		if (op == ISA_ALU_END) {
			REQUIRE_ZERO(src);
			REQUIRE_ZERO(off);
			if (in->imm != 16 && in->imm != 32 && in->imm != 64)
				return isa_reject(err, i, "%s: width imm=%d must be 16, 32 or 64",
						  name, in->imm);
			return 0;
		}
		if (op == ISA_ALU_NEG) {
			REQUIRE_ZERO(src);
			REQUIRE_ZERO(off);
			REQUIRE_ZERO(imm);
			return 0;
		}
		if (ISA_SRC(code) == ISA_K)
			REQUIRE_ZERO(src);
		else
			REQUIRE_ZERO(imm);
		if (op == ISA_ALU_DIV || op == ISA_ALU_MOD) {
			if (in->off != 0 && in->off != 1)
				return isa_reject(err, i, "%s: off=%d must be 0 (unsigned) or 1 (signed)",
						  name, in->off);
		} else if (op == ISA_ALU_MOV && ISA_SRC(code) == ISA_X) {
			int ok = in->off == 0 || in->off == 8 || in->off == 16 ||
				 (in->off == 32 && cls == ISA_ALU64);
			if (!ok)
				return isa_reject(err, i, "%s: sign-extension width off=%d must be 0, 8, 16%s",
						  name, in->off, cls == ISA_ALU64 ? " or 32" : "");
		} else {
			REQUIRE_ZERO(off);
		}
		return 0;

	case ISA_JMP:
	case ISA_JMP32:
		if (code == ISA_OPC_JMP_JA) {
			REQUIRE_ZERO(dst);
			REQUIRE_ZERO(src);
			REQUIRE_ZERO(imm);
		} else if (code == ISA_OPC_JMP32_JA) {
			REQUIRE_ZERO(dst);
			REQUIRE_ZERO(src);
			REQUIRE_ZERO(off);
		} else if (code == ISA_OPC_JMP_EXIT) {
			REQUIRE_ZERO(dst);
			REQUIRE_ZERO(src);
			REQUIRE_ZERO(off);
			REQUIRE_ZERO(imm);
		} else if (code == ISA_OPC_JMP_CALL) {
			REQUIRE_ZERO(dst);
			REQUIRE_ZERO(off);
			if (in->src == ISA_CALL_KFUNC)
				return isa_reject(err, i, "call: kernel function calls (src=2) are not supported");
			if (in->src != ISA_CALL_HELPER && in->src != ISA_CALL_LOCAL)
				return isa_reject(err, i, "call: src=%d must be 0 (helper) or 1 (local call)",
						  in->src);
			if (in->src == ISA_CALL_HELPER && in->imm < 0)
				return isa_reject(err, i, "call: negative helper id %d", in->imm);
		} else if (code == ISA_OPC_JMP_CALLX) {
			if (!allow_callx)
				return isa_reject(err, i, "callx: calls through a register are not part of RFC 9669 and not enabled");
			REQUIRE_ZERO(src);
			REQUIRE_ZERO(off);
			REQUIRE_ZERO(imm);
		} else if (ISA_SRC(code) == ISA_K) {
			REQUIRE_ZERO(src);
		} else {
			REQUIRE_ZERO(imm);
		}
		return 0;

	case ISA_LD: /* only LD_IMM64 is valid; its second slot is checked by the caller */
		REQUIRE_ZERO(off);
		if (in->dst == ISA_REG_FP)
			return isa_reject(err, i, "%s: r10 is read-only", name);
		if (in->src != ISA_PSEUDO_NONE && in->src != ISA_PSEUDO_MAP_FD &&
		    in->src != ISA_PSEUDO_MAP_VALUE)
			return isa_reject(err, i, "lddw: unsupported pseudo source src=%d (supported: 0 value, 1 map, 2 map value)",
					  in->src);
		if (in->src != ISA_PSEUDO_NONE && in->imm < 0)
			return isa_reject(err, i, "lddw: negative map index %d", in->imm);
		return 0;

	case ISA_LDX:
		if (in->dst == ISA_REG_FP)
			return isa_reject(err, i, "%s: r10 is read-only", name);
		REQUIRE_ZERO(imm);
		return 0;

	case ISA_ST:
		REQUIRE_ZERO(src);
		return 0;

	default: /* ISA_STX */
		if (ISA_MODE(code) != ISA_ATOMIC) {
			REQUIRE_ZERO(imm);
			return 0;
		}
		if (!isa_atomic_imm_valid(in->imm))
			return isa_reject(err, i, "%s: unknown atomic operation imm=0x%x", name,
					  (unsigned)in->imm);
		if ((in->imm & ISA_FETCH) && in->imm != ISA_ATOMIC_CMPXCHG &&
		    in->src == ISA_REG_FP)
			return isa_reject(err, i, "%s: fetch into r10, which is read-only", name);
		return 0;
	}
}

/* The slot a jump or local call at i lands on, or an error if there is none. */
static int isa_check_target(size_t cnt, size_t i, int64_t rel,
			    const unsigned char *is_second, const char *what,
			    struct isa_error *err)
{
	int64_t target = (int64_t)i + 1 + rel;

	if (target < 0 || target >= (int64_t)cnt)
		return isa_reject(err, i, "%s target %lld is out of range (program has %zu instructions)",
				  what, (long long)target, cnt);
	if (is_second[target])
		return isa_reject(err, i, "%s target %lld is the second slot of lddw at %lld",
				  what, (long long)target, (long long)target - 1);
	return 0;
}

int isa_decode(const struct isa_insn *insns, size_t cnt, int allow_callx,
	       struct isa_error *err)
{
	unsigned char *is_second;
	int ret = 0;

	if (cnt == 0)
		return isa_reject(err, 0, "empty program");
	is_second = calloc(cnt, 1);
	if (!is_second)
		return isa_reject(err, 0, "out of memory");

	/* Pass 1: every slot's own fields, and where the second slots of lddw are. */
	for (size_t i = 0; i < cnt && !ret; i++) {
		const struct isa_insn *in = &insns[i];
		ret = isa_check_fields(in, i, allow_callx, err);
		if (ret || in->code != ISA_OPC_LD_IMM64)
			continue;
		if (i + 1 == cnt) {
			ret = isa_reject(err, i, "lddw: missing second slot (last instruction)");
			break;
		}
		const struct isa_insn *next = &insns[i + 1];
		if (next->code || next->dst || next->src || next->off)
			ret = isa_reject(err, i + 1, "second slot of lddw at %zu: code, registers and off must be 0 (code=0x%02x dst=%d src=%d off=%d)",
					 i, next->code, next->dst, next->src, next->off);
		else if (in->src == ISA_PSEUDO_MAP_FD && next->imm)
			ret = isa_reject(err, i + 1, "second slot of lddw at %zu: imm=%d must be 0 for a map reference",
					 i, next->imm);
		is_second[i + 1] = 1;
		i++;
	}

	/* Pass 2: jump and call targets land on a first slot inside the program. */
	for (size_t i = 0; i < cnt && !ret; i++) {
		const struct isa_insn *in = &insns[i];
		uint8_t cls = ISA_CLASS(in->code);

		if (is_second[i] || (cls != ISA_JMP && cls != ISA_JMP32))
			continue;
		if (in->code == ISA_OPC_JMP_EXIT || in->code == ISA_OPC_JMP_CALLX)
			continue;
		if (in->code == ISA_OPC_JMP_CALL) {
			if (in->src == ISA_CALL_LOCAL)
				ret = isa_check_target(cnt, i, in->imm, is_second,
						       "local call", err);
		} else if (in->code == ISA_OPC_JMP32_JA) {
			ret = isa_check_target(cnt, i, in->imm, is_second, "jump", err);
		} else {
			ret = isa_check_target(cnt, i, in->off, is_second, "jump", err);
		}
	}
	free(is_second);
	return ret;
}
