/* SPDX-License-Identifier: MIT */
/*
 * disasm.c - one instruction to text (see disasm.h for the syntax).
 */
#include "disasm.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Small immediates read best in decimal, masks and addresses in hex. */
static void disasm_imm(char *buf, size_t len, int32_t imm)
{
	if (imm >= -65536 && imm <= 65535)
		snprintf(buf, len, "%d", imm);
	else
		snprintf(buf, len, "0x%" PRIx32, (uint32_t)imm);
}

/* "[%r1+8]", "[%r10-8]", "[%r1]" */
static void disasm_mem(char *buf, size_t len, unsigned reg, int16_t off)
{
	if (off)
		snprintf(buf, len, "[%%r%u%+d]", reg, off);
	else
		snprintf(buf, len, "[%%r%u]", reg);
}

/* A jump target: "+3"/"-4" relative to the next slot, or "L12". */
static void disasm_target(char *buf, size_t len, size_t idx, int64_t rel, unsigned flags)
{
	if (flags & DISASM_LABELS)
		snprintf(buf, len, "L%" PRId64, (int64_t)idx + 1 + rel);
	else
		snprintf(buf, len, "%+" PRId64, rel);
}

static size_t disasm_raw(const struct isa_insn *in, char *buf, size_t len)
{
	snprintf(buf, len, ".insn 0x%02x, %u, %u, %d, %d", in->code, in->dst, in->src,
		 in->off, in->imm);
	return 1;
}

static size_t disasm_alu(const struct isa_insn *in, const char *name, char *buf, size_t len)
{
	uint8_t op = ISA_OP(in->code);
	const char *sfx = ISA_CLASS(in->code) == ISA_ALU ? "32" : "";
	char imm[24];

	if (op == ISA_ALU_END) {
		snprintf(buf, len, "%s%d %%r%u", name, in->imm, in->dst);
		return 1;
	}
	if (op == ISA_ALU_NEG) {
		snprintf(buf, len, "%s %%r%u", name, in->dst);
		return 1;
	}
	if ((op == ISA_ALU_DIV || op == ISA_ALU_MOD) && in->off == 1) {
		snprintf(buf, len, "s%s %%r%u, ", name, in->dst);
	} else if (op == ISA_ALU_MOV && ISA_SRC(in->code) == ISA_X && in->off) {
		snprintf(buf, len, "movsx%d%s %%r%u, %%r%u", in->off,
			 *sfx ? "32" : "64", in->dst, in->src);
		return 1;
	} else {
		snprintf(buf, len, "%s %%r%u, ", name, in->dst);
	}
	size_t n = strlen(buf);
	if (ISA_SRC(in->code) == ISA_X) {
		snprintf(buf + n, len - n, "%%r%u", in->src);
	} else {
		disasm_imm(imm, sizeof(imm), in->imm);
		snprintf(buf + n, len - n, "%s", imm);
	}
	return 1;
}

static size_t disasm_jmp(const struct isa_insn *in, const char *name, size_t idx,
			 unsigned flags, char *buf, size_t len)
{
	char tgt[32], imm[24];

	switch (in->code) {
	case ISA_OPC_JMP_EXIT:
		snprintf(buf, len, "exit");
		return 1;
	case ISA_OPC_JMP_CALLX:
		snprintf(buf, len, "callx %%r%u", in->dst);
		return 1;
	case ISA_OPC_JMP_CALL:
		if (in->src == ISA_CALL_LOCAL) {
			disasm_target(tgt, sizeof(tgt), idx, in->imm, flags);
			snprintf(buf, len, "call local %s", tgt);
		} else if (in->src == ISA_CALL_HELPER) {
			snprintf(buf, len, "call %d", in->imm);
		} else {
			return disasm_raw(in, buf, len);
		}
		return 1;
	case ISA_OPC_JMP_JA:
		disasm_target(tgt, sizeof(tgt), idx, in->off, flags);
		snprintf(buf, len, "ja %s", tgt);
		return 1;
	case ISA_OPC_JMP32_JA:
		disasm_target(tgt, sizeof(tgt), idx, in->imm, flags);
		snprintf(buf, len, "ja32 %s", tgt);
		return 1;
	}
	disasm_target(tgt, sizeof(tgt), idx, in->off, flags);
	if (ISA_SRC(in->code) == ISA_X) {
		snprintf(buf, len, "%s %%r%u, %%r%u, %s", name, in->dst, in->src, tgt);
	} else {
		disasm_imm(imm, sizeof(imm), in->imm);
		snprintf(buf, len, "%s %%r%u, %s, %s", name, in->dst, imm, tgt);
	}
	return 1;
}

/* "lock add32 [%r1+8], %r2", "lock fetch or [%r10-8], %r3", "lock cmpxchg ..." */
static size_t disasm_atomic(const struct isa_insn *in, char *buf, size_t len)
{
	const char *sfx = in->code == ISA_OPC_ATOMIC_W ? "32" : "";
	const char *op = NULL, *fetch = "";
	char mem[32];

#define ATOMIC_NAME(name, val, mn)                                             \
	if ((in->imm & ~ISA_FETCH) == ((val) & ~ISA_FETCH))                     \
		op = mn;
	ISA_ATOMIC_OPS(ATOMIC_NAME)
#undef ATOMIC_NAME
	if (!op)
		return disasm_raw(in, buf, len);
	if ((in->imm & ISA_FETCH) && in->imm != ISA_ATOMIC_XCHG && in->imm != ISA_ATOMIC_CMPXCHG)
		fetch = "fetch ";
	disasm_mem(mem, sizeof(mem), in->dst, in->off);
	snprintf(buf, len, "lock %s%s%s %s, %%r%u", fetch, op, sfx, mem, in->src);
	return 1;
}

size_t disasm_insn(const struct isa_insn *insns, size_t cnt, size_t idx,
		   unsigned flags, char *buf, size_t len)
{
	const struct isa_insn *in = &insns[idx];
	const char *name = isa_opcode_name(in->code);
	char mem[32], imm[24];

	if (!name)
		return disasm_raw(in, buf, len);
	switch (ISA_CLASS(in->code)) {
	case ISA_ALU:
	case ISA_ALU64:
		return disasm_alu(in, name, buf, len);
	case ISA_JMP:
	case ISA_JMP32:
		return disasm_jmp(in, name, idx, flags, buf, len);
	case ISA_LD: {
		if (idx + 1 >= cnt) /* truncated: show what there is */
			return disasm_raw(in, buf, len);
		uint32_t hi = (uint32_t)insns[idx + 1].imm, lo = (uint32_t)in->imm;
		if (in->src == ISA_PSEUDO_MAP_FD)
			snprintf(buf, len, "lddw %%r%u, map[%d]", in->dst, in->imm);
		else if (in->src == ISA_PSEUDO_MAP_VALUE)
			snprintf(buf, len, "lddw %%r%u, map_value[%d]+%" PRIu32, in->dst,
				 in->imm, hi);
		else if (in->src == ISA_PSEUDO_NONE)
			snprintf(buf, len, "lddw %%r%u, 0x%" PRIx64, in->dst,
				 (uint64_t)hi << 32 | lo);
		else
			return disasm_raw(in, buf, len);
		return 2;
	}
	case ISA_LDX:
		disasm_mem(mem, sizeof(mem), in->src, in->off);
		snprintf(buf, len, "%s %%r%u, %s", name, in->dst, mem);
		return 1;
	case ISA_ST:
		disasm_mem(mem, sizeof(mem), in->dst, in->off);
		disasm_imm(imm, sizeof(imm), in->imm);
		snprintf(buf, len, "%s %s, %s", name, mem, imm);
		return 1;
	default: /* ISA_STX */
		if (ISA_MODE(in->code) == ISA_ATOMIC)
			return disasm_atomic(in, buf, len);
		disasm_mem(mem, sizeof(mem), in->dst, in->off);
		snprintf(buf, len, "%s %s, %%r%u", name, mem, in->src);
		return 1;
	}
}

/* Where does the jump or local call at insns[i] go?  -1 if it is not one. */
static int64_t disasm_branch_target(const struct isa_insn *in, size_t i)
{
	uint8_t cls = ISA_CLASS(in->code);

	if (!isa_opcode_valid(in->code) || (cls != ISA_JMP && cls != ISA_JMP32))
		return -1;
	if (in->code == ISA_OPC_JMP_EXIT || in->code == ISA_OPC_JMP_CALLX)
		return -1;
	if (in->code == ISA_OPC_JMP_CALL)
		return in->src == ISA_CALL_LOCAL ? (int64_t)i + 1 + in->imm : -1;
	if (in->code == ISA_OPC_JMP32_JA)
		return (int64_t)i + 1 + in->imm;
	return (int64_t)i + 1 + in->off;
}

void disasm_program(FILE *out, const struct isa_insn *insns, size_t cnt)
{
	unsigned char *is_target = calloc(cnt ? cnt : 1, 1);
	int labels_ok = is_target != NULL;
	char buf[DISASM_BUF_SIZE];

	/* Labels only when every target is a slot of the program; otherwise
	 * relative offsets still say exactly what the bytes hold. */
	enum { TARGET = 1, SECOND_SLOT = 2 };
	for (size_t i = 0; labels_ok && i < cnt; i++) {
		int64_t t = disasm_branch_target(&insns[i], i);
		if (t >= (int64_t)cnt || t < -1)
			labels_ok = 0;
		else if (t >= 0)
			is_target[t] |= TARGET;
		if (insns[i].code == ISA_OPC_LD_IMM64 && i + 1 < cnt)
			is_target[++i] |= SECOND_SLOT;
	}
	for (size_t i = 0; labels_ok && i < cnt; i++)
		if (is_target[i] == (TARGET | SECOND_SLOT))
			labels_ok = 0;
	for (size_t i = 0; i < cnt;) {
		if (labels_ok && is_target[i])
			fprintf(out, "L%zu:\n", i);
		i += disasm_insn(insns, cnt, i, labels_ok ? DISASM_LABELS : 0, buf, sizeof(buf));
		fprintf(out, "\t%s\n", buf);
	}
	free(is_target);
}
