/* SPDX-License-Identifier: MIT */
/*
 * interp_loop.h - the interpreter's dispatch loop, included twice by
 * interp.c: once with INTERP_CHECKED 0 (the fast path: no checks at all)
 * and once with INTERP_CHECKED 1 (every memory access checked against the
 * regions the program may touch).  A template by inclusion, because GCC
 * does not inline functions that use computed goto.
 *
 * Before including, interp.c defines INTERP_LOOP (the function's name) and
 * INTERP_CHECKED.  The dispatch table is generated from ISA_OPCODES: each
 * opcode NAME jumps to the label op_NAME, so an opcode added to the list
 * without a body here does not compile.
 */

static int INTERP_LOOP(struct interp_run *run)
{
	const struct prog *p = run->prog;
	const struct isa_insn *const insns = p->insns, *in = insns;
	uint64_t *const reg = run->reg;
	struct interp_frame *frame = run->frames; /* frames[0]: the outermost */
	int err;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
#define INTERP_LABEL(name, code) [code] = &&op_##name,
	static const void *const dispatch[256] = {
		[0 ... 255] = &&op_invalid,
		ISA_OPCODES(INTERP_LABEL)
	};
#undef INTERP_LABEL
#pragma GCC diagnostic pop

#define IDX ((size_t)(in - insns))
#define DST reg[in->dst]
#define SRC reg[in->src]
#define IMM64 ((uint64_t)(int64_t)in->imm) /* imm sign-extended to 64 bits */
#define IMM32 ((uint32_t)in->imm)
#define NEXT                                                                   \
	do {                                                                   \
		in++;                                                          \
		goto *dispatch[in->code];                                      \
	} while (0)
#define ADDR(base) ((base) + (uint64_t)(int64_t)in->off)
#define CHECK(addr, size, what)                                                \
	do {                                                                   \
		if (INTERP_CHECKED && interp_check(run, frame, IDX, (addr), (size), (what))) \
			return -EFAULT;                                        \
	} while (0)

/* ALU ops whose 64-bit and 32-bit forms differ only in width. */
#define ALU(name, expr64, expr32)                                              \
	op_ALU64_##name##_K : { uint64_t s = IMM64; DST = (expr64); NEXT; }    \
	op_ALU64_##name##_X : { uint64_t s = SRC; DST = (expr64); NEXT; }      \
	op_ALU32_##name##_K : { uint32_t d = (uint32_t)DST, s = IMM32; DST = (uint32_t)(expr32); NEXT; } \
	op_ALU32_##name##_X : { uint32_t d = (uint32_t)DST, s = (uint32_t)SRC; DST = (uint32_t)(expr32); NEXT; }

/* Conditional jumps: 64-bit and 32-bit, register and immediate. */
#define JMP(name, op, type64, type32)                                          \
	op_JMP_##name##_K : if ((type64)DST op (type64)IMM64) in += in->off; NEXT; \
	op_JMP_##name##_X : if ((type64)DST op (type64)SRC) in += in->off; NEXT; \
	op_JMP32_##name##_K : if ((type32)DST op (type32)IMM32) in += in->off; NEXT; \
	op_JMP32_##name##_X : if ((type32)DST op (type32)SRC) in += in->off; NEXT;

/* Loads and stores: width type, the value to store. */
#define LDX(name, type, ext)                                                   \
	op_LDX##name : {                                                       \
		uint64_t a = ADDR(SRC);                                        \
		type v;                                                        \
		CHECK(a, sizeof(type), "read");                                \
		memcpy(&v, (const void *)(uintptr_t)a, sizeof(v));             \
		DST = (uint64_t)(ext)v;                                        \
		NEXT;                                                          \
	}
#define STORE(name, type, value)                                               \
	op_##name : {                                                          \
		uint64_t a = ADDR(DST);                                        \
		type v = (type)(value);                                        \
		CHECK(a, sizeof(type), "write");                               \
		memcpy((void *)(uintptr_t)a, &v, sizeof(v));                    \
		NEXT;                                                          \
	}

	goto *dispatch[in->code];

	/* uint64_t d = DST where the 64-bit expression needs it */
	ALU(ADD, DST + s, d + s)
	ALU(SUB, DST - s, d - s)
	ALU(MUL, DST * s, d * s)
	ALU(OR, DST | s, d | s)
	ALU(AND, DST & s, d & s)
	ALU(XOR, DST ^ s, d ^ s)
	ALU(LSH, DST << (s & 63), d << (s & 31))
	ALU(RSH, DST >> (s & 63), d >> (s & 31))
	ALU(ARSH, (uint64_t)((int64_t)DST >> (s & 63)), (uint32_t)((int32_t)d >> (s & 31)))
	/* off = 1: signed.  x / 0 = 0; INT_MIN / -1 = INT_MIN (no trap). */
	ALU(DIV, in->off ? interp_sdiv64(DST, s) : (s ? DST / s : 0),
	    in->off ? interp_sdiv32(d, s) : (s ? d / s : 0))
	/* x % 0 = x (64-bit: unchanged; 32-bit: upper half cleared). */
	ALU(MOD, in->off ? interp_smod64(DST, s) : (s ? DST % s : DST),
	    in->off ? interp_smod32(d, s) : (s ? d % s : d))

op_ALU64_MOV_K:
	DST = IMM64;
	NEXT;
op_ALU64_MOV_X: /* off 8/16/32: movsx */
	switch (in->off) {
	case 8: DST = (uint64_t)(int64_t)(int8_t)SRC; break;
	case 16: DST = (uint64_t)(int64_t)(int16_t)SRC; break;
	case 32: DST = (uint64_t)(int64_t)(int32_t)SRC; break;
	default: DST = SRC;
	}
	NEXT;
op_ALU32_MOV_K:
	DST = IMM32;
	NEXT;
op_ALU32_MOV_X:
	switch (in->off) {
	case 8: DST = (uint32_t)(int32_t)(int8_t)SRC; break;
	case 16: DST = (uint32_t)(int32_t)(int16_t)SRC; break;
	default: DST = (uint32_t)SRC;
	}
	NEXT;
op_ALU64_NEG:
	DST = 0 - DST;
	NEXT;
op_ALU32_NEG:
	DST = (uint32_t)(0 - (uint32_t)DST);
	NEXT;
op_ALU32_TO_LE: /* the host is little-endian: truncate only */
	DST = in->imm == 16 ? (uint16_t)DST : in->imm == 32 ? (uint32_t)DST : DST;
	NEXT;
op_ALU32_TO_BE:
op_ALU64_BSWAP:
	DST = in->imm == 16   ? __builtin_bswap16((uint16_t)DST)
	      : in->imm == 32 ? __builtin_bswap32((uint32_t)DST)
			      : __builtin_bswap64(DST);
	NEXT;

op_JMP_JA:
	in += in->off;
	NEXT;
op_JMP32_JA:
	in += in->imm;
	NEXT;
	JMP(JEQ, ==, uint64_t, uint32_t)
	JMP(JNE, !=, uint64_t, uint32_t)
	JMP(JGT, >, uint64_t, uint32_t)
	JMP(JGE, >=, uint64_t, uint32_t)
	JMP(JLT, <, uint64_t, uint32_t)
	JMP(JLE, <=, uint64_t, uint32_t)
	JMP(JSGT, >, int64_t, int32_t)
	JMP(JSGE, >=, int64_t, int32_t)
	JMP(JSLT, <, int64_t, int32_t)
	JMP(JSLE, <=, int64_t, int32_t)
op_JMP_JSET_K:
	if (DST & IMM64)
		in += in->off;
	NEXT;
op_JMP_JSET_X:
	if (DST & SRC)
		in += in->off;
	NEXT;
op_JMP32_JSET_K:
	if ((uint32_t)DST & IMM32)
		in += in->off;
	NEXT;
op_JMP32_JSET_X:
	if ((uint32_t)DST & (uint32_t)SRC)
		in += in->off;
	NEXT;

op_JMP_CALL:
	if (in->src == ISA_CALL_LOCAL) {
		if (frame + 1 == run->frames + ISA_MAX_CALL_DEPTH)
			return err_set(run->e, E2BIG, "insn %zu: call depth limit of %d frames exceeded",
				       IDX, ISA_MAX_CALL_DEPTH);
		memcpy(frame->saved, &reg[6], sizeof(frame->saved));
		frame->ret = in;
		frame++;
		/* A fresh 512-byte frame below the caller's. */
		reg[ISA_REG_FP] = run->stack_top - (uint64_t)(frame - run->frames) * ISA_STACK_SIZE;
		in += in->imm;
		NEXT;
	}
	if ((err = interp_helper(run, IDX, (uint32_t)in->imm)))
		return err;
	NEXT;
op_JMP_CALLX: /* uBPF's callx: the helper whose id is in the register */
	if (DST >= HELPER_TABLE_SIZE)
		return err_set(run->e, ENOENT, "insn %zu: callx: unknown helper %llu", IDX,
			       (unsigned long long)DST);
	if ((err = interp_helper(run, IDX, (uint32_t)DST)))
		return err;
	NEXT;
op_JMP_EXIT:
	if (frame == run->frames)
		return 0;
	frame--;
	memcpy(&reg[6], frame->saved, sizeof(frame->saved));
	reg[ISA_REG_FP] = run->stack_top - (uint64_t)(frame - run->frames) * ISA_STACK_SIZE;
	in = frame->ret;
	NEXT;

op_LD_IMM64:
	if (in->src == ISA_PSEUDO_NONE) {
		DST = (uint64_t)(uint32_t)in[1].imm << 32 | (uint32_t)in->imm;
	} else if ((err = interp_ld_map(run, IDX))) {
		return err;
	}
	in++;
	NEXT;

	LDX(_W, uint32_t, uint32_t)
	LDX(_H, uint16_t, uint16_t)
	LDX(_B, uint8_t, uint8_t)
	LDX(_DW, uint64_t, uint64_t)
	LDX(SX_W, int32_t, int64_t)
	LDX(SX_H, int16_t, int64_t)
	LDX(SX_B, int8_t, int64_t)
	STORE(ST_W, uint32_t, in->imm)
	STORE(ST_H, uint16_t, in->imm)
	STORE(ST_B, uint8_t, in->imm)
	STORE(ST_DW, uint64_t, IMM64)
	STORE(STX_W, uint32_t, SRC)
	STORE(STX_H, uint16_t, SRC)
	STORE(STX_B, uint8_t, SRC)
	STORE(STX_DW, uint64_t, SRC)

op_ATOMIC_W: {
	uint64_t a = ADDR(DST);
	CHECK(a, 4, "atomic access");
	uint32_t *ptr = (uint32_t *)(uintptr_t)a, v = (uint32_t)SRC, old;
	switch (in->imm & ~ISA_FETCH) {
	case ISA_ATOMIC_ADD: old = __atomic_fetch_add(ptr, v, __ATOMIC_SEQ_CST); break;
	case ISA_ATOMIC_OR: old = __atomic_fetch_or(ptr, v, __ATOMIC_SEQ_CST); break;
	case ISA_ATOMIC_AND: old = __atomic_fetch_and(ptr, v, __ATOMIC_SEQ_CST); break;
	case ISA_ATOMIC_XOR: old = __atomic_fetch_xor(ptr, v, __ATOMIC_SEQ_CST); break;
	case ISA_ATOMIC_XCHG & ~ISA_FETCH: old = __atomic_exchange_n(ptr, v, __ATOMIC_SEQ_CST); break;
	default: /* cmpxchg: compare with r0, old value into r0 */
		old = (uint32_t)reg[0];
		__atomic_compare_exchange_n(ptr, &old, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		reg[0] = old;
		NEXT;
	}
	if (in->imm & ISA_FETCH)
		SRC = old;
	NEXT;
}
op_ATOMIC_DW: {
	uint64_t a = ADDR(DST);
	CHECK(a, 8, "atomic access");
	uint64_t *ptr = (uint64_t *)(uintptr_t)a, v = SRC, old;
	switch (in->imm & ~ISA_FETCH) {
	case ISA_ATOMIC_ADD: old = __atomic_fetch_add(ptr, v, __ATOMIC_SEQ_CST); break;
	case ISA_ATOMIC_OR: old = __atomic_fetch_or(ptr, v, __ATOMIC_SEQ_CST); break;
	case ISA_ATOMIC_AND: old = __atomic_fetch_and(ptr, v, __ATOMIC_SEQ_CST); break;
	case ISA_ATOMIC_XOR: old = __atomic_fetch_xor(ptr, v, __ATOMIC_SEQ_CST); break;
	case ISA_ATOMIC_XCHG & ~ISA_FETCH: old = __atomic_exchange_n(ptr, v, __ATOMIC_SEQ_CST); break;
	default:
		old = reg[0];
		__atomic_compare_exchange_n(ptr, &old, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		reg[0] = old;
		NEXT;
	}
	if (in->imm & ISA_FETCH)
		SRC = old;
	NEXT;
}

op_invalid: /* only reachable with bytecode that isa_decode() rejects */
	return err_set(run->e, EINVAL, "insn %zu: invalid opcode 0x%02x (bytecode not decoded)",
		       IDX, in->code);

#undef IDX
#undef DST
#undef SRC
#undef IMM64
#undef IMM32
#undef NEXT
#undef ADDR
#undef CHECK
#undef ALU
#undef JMP
#undef LDX
#undef STORE
}
