/* SPDX-License-Identifier: MIT */
/*
 * x64_emit.c - x86-64 encodings (Intel SDM vol. 2, chapter 2).
 *
 * Prefix order: lock, operand size (0x66), REX, opcode, ModRM, SIB,
 * displacement, immediate.
 */
#include "x64_emit.h"

void x64_imm16(struct x64_buf *b, uint16_t v)
{
	x64_byte(b, (uint8_t)v);
	x64_byte(b, (uint8_t)(v >> 8));
}

void x64_imm32(struct x64_buf *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		x64_byte(b, (uint8_t)(v >> (8 * i)));
}

void x64_imm64(struct x64_buf *b, uint64_t v)
{
	x64_imm32(b, (uint32_t)v);
	x64_imm32(b, (uint32_t)(v >> 32));
}

static int fits_s8(int64_t v)
{
	return v >= INT8_MIN && v <= INT8_MAX;
}

/*
 * Prefixes and REX for operands reg (ModRM.reg) and rm (ModRM.rm or SIB
 * base).  REX is needed for 64-bit operands, for r8..r15, and for byte
 * operands in spl/bpl/sil/dil (without REX, 4..7 encode ah/ch/dh/bh).
 */
static void prefixes_sib(struct x64_buf *b, unsigned flags, int reg, int index, int rm)
{
	uint8_t rex = 0x40;

	if (flags & X64_LOCK)
		x64_byte(b, 0xf0);
	if (flags & X64_16)
		x64_byte(b, 0x66);
	if (flags & X64_W)
		rex |= 0x08;
	if (reg & 8)
		rex |= 0x04;
	if (index & 8)
		rex |= 0x02;
	if (rm & 8)
		rex |= 0x01;
	if (rex != 0x40 || ((flags & X64_BYTE) && ((reg >= 4 && reg <= 7) || (rm >= 4 && rm <= 7))))
		x64_byte(b, rex);
}

static void prefixes(struct x64_buf *b, unsigned flags, int reg, int rm)
{
	prefixes_sib(b, flags, reg, 0, rm);
}

static void opcode(struct x64_buf *b, unsigned op)
{
	if (op > 0xff)
		x64_byte(b, (uint8_t)(op >> 8));
	x64_byte(b, (uint8_t)op);
}

void x64_rr(struct x64_buf *b, unsigned flags, unsigned op, int reg, int rm)
{
	prefixes(b, flags, reg, rm);
	opcode(b, op);
	x64_byte(b, (uint8_t)(0xc0 | (reg & 7) << 3 | (rm & 7)));
}

void x64_rm(struct x64_buf *b, unsigned flags, unsigned op, int reg, int base,
	    int32_t disp)
{
	prefixes(b, flags, reg, base);
	opcode(b, op);
	/* rbp/r13 as base have no disp-less form; rsp/r12 need a SIB byte. */
	unsigned mod = disp == 0 && (base & 7) != X64_RBP ? 0x00 : fits_s8(disp) ? 0x40 : 0x80;
	x64_byte(b, (uint8_t)(mod | (reg & 7) << 3 | (base & 7)));
	if ((base & 7) == X64_RSP)
		x64_byte(b, 0x24);
	if (mod == 0x40)
		x64_byte(b, (uint8_t)disp);
	else if (mod == 0x80)
		x64_imm32(b, (uint32_t)disp);
}

void x64_lea_bi(struct x64_buf *b, unsigned flags, int dst, int base, int index,
		unsigned scale)
{
	prefixes_sib(b, flags, dst, index, base);
	x64_byte(b, 0x8d);
	/* rbp/r13 as base need mod 01 and a zero disp8 (mod 00 there means none). */
	int need_disp = (base & 7) == X64_RBP;
	x64_byte(b, (uint8_t)((need_disp ? 0x40 : 0x00) | (dst & 7) << 3 | 0x04));
	x64_byte(b, (uint8_t)(scale << 6 | (index & 7) << 3 | (base & 7))); /* SIB */
	if (need_disp)
		x64_byte(b, 0);
}

void x64_alu_rr(struct x64_buf *b, unsigned flags, enum x64_alu op, int dst, int src)
{
	x64_rr(b, flags, op, src, dst);
}

void x64_alu_ri(struct x64_buf *b, unsigned flags, enum x64_alu op, int dst, int32_t imm)
{
	int digit = op >> 3; /* 0x01 add /0, 0x09 or /1, ... 0x39 cmp /7 */

	if (fits_s8(imm)) {
		x64_rr(b, flags, 0x83, digit, dst);
		x64_byte(b, (uint8_t)imm);
	} else {
		x64_rr(b, flags, 0x81, digit, dst);
		x64_imm32(b, (uint32_t)imm);
	}
}

void x64_test_ri(struct x64_buf *b, unsigned flags, int dst, int32_t imm)
{
	x64_rr(b, flags, 0xf7, 0, dst);
	x64_imm32(b, (uint32_t)imm);
}

void x64_mov_rr(struct x64_buf *b, unsigned flags, int dst, int src)
{
	x64_rr(b, flags, X64_MOV, src, dst);
}

void x64_mov_ri32(struct x64_buf *b, int dst, uint32_t imm)
{
	if (imm == 0) {
		x64_alu_rr(b, 0, X64_XOR, dst, dst);
		return;
	}
	prefixes(b, 0, 0, dst);
	x64_byte(b, (uint8_t)(0xb8 + (dst & 7)));
	x64_imm32(b, imm);
}

void x64_mov_ri64(struct x64_buf *b, int dst, uint64_t imm)
{
	if (imm <= UINT32_MAX) {
		x64_mov_ri32(b, dst, (uint32_t)imm);
	} else if ((int64_t)imm >= INT32_MIN && (int64_t)imm <= INT32_MAX) {
		x64_rr(b, X64_W, 0xc7, 0, dst);
		x64_imm32(b, (uint32_t)imm);
	} else {
		prefixes(b, X64_W, 0, dst);
		x64_byte(b, (uint8_t)(0xb8 + (dst & 7)));
		x64_imm64(b, imm);
	}
}

void x64_shift_ri(struct x64_buf *b, unsigned flags, int digit, int dst, uint8_t n)
{
	if (n == 1) {
		x64_rr(b, flags, 0xd1, digit, dst);
	} else {
		x64_rr(b, flags, 0xc1, digit, dst);
		x64_byte(b, n);
	}
}

void x64_shift_cl(struct x64_buf *b, unsigned flags, int digit, int dst)
{
	x64_rr(b, flags, 0xd3, digit, dst);
}

void x64_push(struct x64_buf *b, int r)
{
	prefixes(b, 0, 0, r);
	x64_byte(b, (uint8_t)(0x50 + (r & 7)));
}

void x64_pop(struct x64_buf *b, int r)
{
	prefixes(b, 0, 0, r);
	x64_byte(b, (uint8_t)(0x58 + (r & 7)));
}

void x64_bswap(struct x64_buf *b, unsigned flags, int r)
{
	prefixes(b, flags, 0, r);
	x64_byte(b, 0x0f);
	x64_byte(b, (uint8_t)(0xc8 + (r & 7)));
}

void x64_jcc(struct x64_buf *b, enum x64_cc cc, size_t target, int use_short)
{
	if (use_short) {
		x64_byte(b, (uint8_t)(0x70 | cc));
		x64_byte(b, (uint8_t)(int8_t)((int64_t)target - (int64_t)(b->len + 1)));
	} else {
		x64_byte(b, 0x0f);
		x64_byte(b, (uint8_t)(0x80 | cc));
		x64_imm32(b, (uint32_t)((int64_t)target - (int64_t)(b->len + 4)));
	}
}

void x64_jmp(struct x64_buf *b, size_t target, int use_short)
{
	if (use_short) {
		x64_byte(b, 0xeb);
		x64_byte(b, (uint8_t)(int8_t)((int64_t)target - (int64_t)(b->len + 1)));
	} else {
		x64_byte(b, 0xe9);
		x64_imm32(b, (uint32_t)((int64_t)target - (int64_t)(b->len + 4)));
	}
}

void x64_call_rel(struct x64_buf *b, size_t target)
{
	x64_byte(b, 0xe8);
	x64_imm32(b, (uint32_t)((int64_t)target - (int64_t)(b->len + 4)));
}

void x64_call_abs(struct x64_buf *b, uint64_t addr)
{
	x64_mov_ri64(b, X64_R11, addr);
	x64_rr(b, 0, 0xff, 2, X64_R11);
}

void x64_ret(struct x64_buf *b)
{
	x64_byte(b, 0xc3);
}

void x64_nop(struct x64_buf *b, size_t n)
{
	/* The recommended nop of each length 1..9 (Intel SDM vol. 2, NOP). */
	static const uint8_t nops[9][9] = {
		{0x90},
		{0x66, 0x90},
		{0x0f, 0x1f, 0x00},
		{0x0f, 0x1f, 0x40, 0x00},
		{0x0f, 0x1f, 0x44, 0x00, 0x00},
		{0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00},
		{0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00},
		{0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
		{0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
	};

	while (n) {
		size_t k = n < 9 ? n : 9;
		for (size_t j = 0; j < k; j++)
			x64_byte(b, nops[k - 1][j]);
		n -= k;
	}
}
