/* SPDX-License-Identifier: MIT */
/*
 * x64_emit.h - x86-64 instruction encoding (REX, ModRM, SIB, immediates).
 *
 * This layer knows the x86-64 encoding and nothing about eBPF; jit_x64.c maps
 * eBPF onto it.  Every function appends to an x64_buf.  A buffer whose code
 * is NULL only counts bytes: the JIT's sizing passes run the same emitters
 * as the final pass, so the sizes they measure are the sizes it writes.
 */
#ifndef GPUEXT_BPF_X64_EMIT_H
#define GPUEXT_BPF_X64_EMIT_H

#include <stddef.h>
#include <stdint.h>

enum x64_reg {
	X64_RAX, X64_RCX, X64_RDX, X64_RBX, X64_RSP, X64_RBP, X64_RSI, X64_RDI,
	X64_R8, X64_R9, X64_R10, X64_R11, X64_R12, X64_R13, X64_R14, X64_R15,
};

/* Condition codes (the low nibble of Jcc). */
enum x64_cc {
	X64_CC_B = 0x2, X64_CC_AE = 0x3, X64_CC_E = 0x4, X64_CC_NE = 0x5,
	X64_CC_BE = 0x6, X64_CC_A = 0x7, X64_CC_L = 0xc, X64_CC_GE = 0xd,
	X64_CC_LE = 0xe, X64_CC_G = 0xf,
};

/* Operand size and prefixes of one instruction. */
enum x64_flags {
	X64_W = 1u << 0,     /* 64-bit operand: REX.W */
	X64_16 = 1u << 1,    /* 16-bit operand: 0x66 prefix */
	X64_BYTE = 1u << 2,  /* byte register operand: REX so 4..7 mean spl..dil */
	X64_LOCK = 1u << 3,  /* lock prefix */
};

/* Classic two-operand ALU opcodes "op r/m, reg" and their /digit for 0x81. */
enum x64_alu {
	X64_ADD = 0x01, X64_OR = 0x09, X64_AND = 0x21, X64_SUB = 0x29,
	X64_XOR = 0x31, X64_CMP = 0x39, X64_TEST = 0x85, X64_MOV = 0x89,
};

struct x64_buf {
	uint8_t *code; /* NULL: count only */
	size_t len;
};

static inline void x64_byte(struct x64_buf *b, uint8_t v)
{
	if (b->code)
		b->code[b->len] = v;
	b->len++;
}

void x64_imm16(struct x64_buf *b, uint16_t v);
void x64_imm32(struct x64_buf *b, uint32_t v);
void x64_imm64(struct x64_buf *b, uint64_t v);

/*
 * One instruction with a register operand in ModRM.rm.  op is one byte, or
 * two with 0x0f as the high byte (0x0faf = imul).  reg is a register or a
 * /digit opcode extension.
 */
void x64_rr(struct x64_buf *b, unsigned flags, unsigned op, int reg, int rm);
/* The same with a memory operand [base + disp]. */
void x64_rm(struct x64_buf *b, unsigned flags, unsigned op, int reg, int base,
	    int32_t disp);

/* lea dst, [base + index * (1 << scale)]; index is not rsp, scale 0..3. */
void x64_lea_bi(struct x64_buf *b, unsigned flags, int dst, int base, int index,
		unsigned scale);

/* Frequently used forms. */
void x64_alu_rr(struct x64_buf *b, unsigned flags, enum x64_alu op, int dst, int src);
/* op dst, imm (sign-extended imm8 form when it fits); op is not TEST/MOV. */
void x64_alu_ri(struct x64_buf *b, unsigned flags, enum x64_alu op, int dst, int32_t imm);
void x64_test_ri(struct x64_buf *b, unsigned flags, int dst, int32_t imm);
void x64_mov_rr(struct x64_buf *b, unsigned flags, int dst, int src);
/* dst = imm as a 64-bit value, in the shortest encoding. */
void x64_mov_ri64(struct x64_buf *b, int dst, uint64_t imm);
/* dst32 = imm (zero-extended to 64 bits). */
void x64_mov_ri32(struct x64_buf *b, int dst, uint32_t imm);
/* /digit shift by an immediate (4 shl, 5 shr, 7 sar, 1 ror) or by cl. */
void x64_shift_ri(struct x64_buf *b, unsigned flags, int digit, int dst, uint8_t n);
void x64_shift_cl(struct x64_buf *b, unsigned flags, int digit, int dst);
void x64_push(struct x64_buf *b, int r);
void x64_pop(struct x64_buf *b, int r);
void x64_bswap(struct x64_buf *b, unsigned flags, int r);

/*
 * Jumps to an offset in the buffer.  The caller picks the 2-byte form
 * (use_short) when it knows the displacement fits in 8 bits; the JIT decides
 * from the previous pass's layout and checks that the final pass matches it.
 */
void x64_jcc(struct x64_buf *b, enum x64_cc cc, size_t target, int use_short);
void x64_jmp(struct x64_buf *b, size_t target, int use_short);
void x64_call_rel(struct x64_buf *b, size_t target);
void x64_call_abs(struct x64_buf *b, uint64_t addr); /* through r11 */
void x64_ret(struct x64_buf *b);
/* n bytes of padding, in as few multi-byte nops as the recommended forms allow. */
void x64_nop(struct x64_buf *b, size_t n);

#endif /* GPUEXT_BPF_X64_EMIT_H */
