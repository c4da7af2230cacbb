/* SPDX-License-Identifier: MIT */
/*
 * jit_x64.c - eBPF -> x86-64 translation.
 *
 * Register mapping and calling convention
 * ---------------------------------------
 *   eBPF  r0  r1  r2  r3  r4  r5  r6  r7  r8  r9  r10
 *   x86   rax rdi rsi rdx rcx r8  rbx r13 r14 r15 rbp
 * r1..r5 sit in the System V argument registers, so a helper call is a plain
 * native call (the helper's return lands in rax = r0), and r6..r9 and the
 * frame pointer sit in callee-saved registers, so helpers preserve them.
 * r9, r10, r11 are scratch inside one translated instruction (division,
 * shifts by register, atomics, helper addresses); nothing lives in them
 * across instructions.  r12 holds the trampoline's stack pointer for the
 * whole run.
 *
 * A program without local calls and callx cannot fault at run time, and its
 * image is one function called straight from C (a direct image):
 *   uint64_t fn(r1, r2, r3, r4, r5)
 * Its prologue saves only the callee-saved registers the program mentions
 * (r6..r9, and rbp when it uses r10: then it also sets up the 512-byte stack),
 * zeroes r0 and the r6..r9 it mentions (as the interpreter starts them), and
 * EXIT undoes that and returns.  This is what a hot host probe calls: a
 * program that touches none of r6..r10 costs a call, an xor and a ret.
 *
 * Any other image starts with a trampoline, called from C as
 *   uint64_t fn(r1, r2, r3, r4, r5, struct jit_state *state)
 * which saves the native callee-saved registers, pushes state, keeps that
 * stack pointer in r12, zeroes r0 and r6..r9 and calls the main function.
 * Every eBPF function (the main program and each local-call target) has the
 * same frame: the call's return address, the caller's r6..r9 and r10
 * (pushed by the callee's prologue, which is how r6..r9 survive local calls)
 * and a fresh 512-byte eBPF stack below r10 = rbp.  EXIT restores them and
 * returns, in any function.  A frame is JIT_FRAME bytes, so frame k's stack
 * pointer is r12 - k * JIT_FRAME, and a local call checks the depth with one
 * compare against r12.  A run-time fault (a call past ISA_MAX_CALL_DEPTH
 * frames, callx to a helper that does not exist) stores the instruction's
 * index, the kind of fault and a value in *state and unwinds to the
 * trampoline, which returns to jit_run to report it.
 * The native stack stays 16-byte aligned at every helper call, in both kinds
 * of image.
 *
 * Layout is decided in passes (as Linux's x86 JIT does): the first pass uses
 * 32-bit displacements everywhere, each next pass picks the 2-byte form for
 * jumps whose distance in the previous pass fits in 8 bits.  Sizes only
 * shrink, so the decisions stay valid, and the passes stop when a pass
 * reproduces the layout of the one before: its bytes are then final.
 */
#include "jit.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "jit_mem.h"
#include "map.h"
#include "x64_emit.h"

enum {
	JIT_SAVED_REGS = 5,                                 /* r6..r9, r10 */
	JIT_FRAME = 8 + 8 * JIT_SAVED_REGS + ISA_STACK_SIZE, /* ret + saved + stack */
	JIT_MAX_PASSES = 20,
};

_Static_assert(JIT_FRAME % 16 == 0, "frames must keep the stack 16-byte aligned");

static const int8_t reg_map[ISA_NR_REGS] = {
	X64_RAX, X64_RDI, X64_RSI, X64_RDX, X64_RCX, X64_R8,
	X64_RBX, X64_R13, X64_R14, X64_R15, X64_RBP,
};

enum jit_fault { JIT_FAULT_DEPTH = 1, JIT_FAULT_HELPER = 2 };

/* Shared with the generated code, which writes it at these offsets. */
struct jit_state {
	int32_t fault_insn;   /* 0: -1, or the instruction that faulted */
	int32_t fault_kind;   /* 4: enum jit_fault */
	uint64_t fault_value; /* 8: the helper id of a bad callx */
};
_Static_assert(offsetof(struct jit_state, fault_value) == 8, "layout used by the code");

typedef uint64_t (*jit_entry_fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
				 struct jit_state *);

struct jit_image {
	struct jit_mem mem;
	size_t code_len;
	const struct helper_table *helpers;
	jit_direct_fn direct; /* the entry of a direct image, else NULL */
};

/* What lands on an instruction (scan_prog). */
enum jit_land {
	JIT_LAND_JUMP = 1, /* some jump */
	JIT_LAND_LOOP = 2, /* the head of a small loop (mark_jump_target): aligned */
};

/* The form a jump took in the passes so far (use_short). */
enum jit_jump_form { JIT_JUMP_LONG, JIT_JUMP_SHORT, JIT_JUMP_LONG_STUCK };

/*
 * Loop heads start on a 32-byte boundary, so that a small loop sits in as few
 * of the front end's 32-byte fetch windows as it can and its speed does not
 * depend on where the code before it happened to end.
 */
enum { JIT_LOOP_ALIGN = 32, JIT_SMALL_LOOP = 32 /* instructions */ };

/* How a function's frame is built and torn down (emit_prologue, emit_exit). */
enum jit_fn_kind {
	JIT_FN_DIRECT, /* the whole program, called from C: saves only what it uses */
	JIT_FN_MAIN,   /* the main function under the trampoline */
	JIT_FN_CALLEE, /* a local-call target (main too when a call targets it) */
};

/* Offsets of one pass's layout.  body[i]: first byte of insn i's code;
 * end[i]: after it; func[i]: the prologue of a function starting at i. */
struct jit_layout {
	uint32_t *body, *end, *func;
};

struct jit_ctx {
	const struct prog *p;
	const struct helper_table *helpers;
	struct err *e;
	struct x64_buf b;
	struct jit_layout cur, prev; /* this pass and the one before */
	uint8_t *is_func;            /* insn i starts a function */
	uint8_t *is_imm_hi;          /* insn i is the second slot of LD_IMM64 */
	uint8_t *lands;              /* enum jit_land flags of insn i */
	uint8_t *jump_form;          /* enum jit_jump_form of the jump at insn i */
	int all_long;                /* first pass: no 2-byte jumps */
	size_t exit_off, abort_off;  /* trampoline labels */
	enum jit_fn_kind fn_kind;    /* of the function being emitted */
	int main_is_callee;          /* a local call targets insn 0: main saves like a callee */
	int direct;                  /* no local call, no callx: a direct image */
	int calls_helpers;           /* some instruction calls a helper */
	unsigned used_regs;          /* bit r: some instruction names eBPF register r */
};

#define PROG_NAME(p) ((p)->name ? (p)->name : "?")

__attribute__((format(printf, 3, 4))) static int insn_err(struct jit_ctx *c, size_t i,
							  const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(c->e, EINVAL, "jit: prog '%s': insn %zu: %s", PROG_NAME(c->p), i, msg);
}

static int fits_s8(int64_t v)
{
	return v >= INT8_MIN && v <= INT8_MAX;
}

/* ---- trampoline ---------------------------------------------------------- */

static void emit_trampoline(struct jit_ctx *c)
{
	struct x64_buf *b = &c->b;
	static const int8_t saved[] = {X64_RBP, X64_RBX, X64_R12, X64_R13, X64_R14, X64_R15};

	for (size_t k = 0; k < sizeof(saved); k++)
		x64_push(b, saved[k]);
	x64_push(b, X64_R9); /* state: [r12] */
	x64_mov_rr(b, X64_W, X64_R12, X64_RSP);
	static const int8_t zeroed[] = {X64_RAX, X64_RBX, X64_R13, X64_R14, X64_R15};
	for (size_t k = 0; k < sizeof(zeroed); k++)
		x64_alu_rr(b, 0, X64_XOR, zeroed[k], zeroed[k]);
	x64_call_rel(b, c->prev.func[0]);

	c->exit_off = b->len;
	x64_pop(b, X64_R9);
	for (size_t k = sizeof(saved); k-- > 0;)
		x64_pop(b, saved[k]);
	x64_ret(b);

	/* A fault: eax = instruction, r10d = kind, r9 = value (emit_fault). */
	c->abort_off = b->len;
	x64_mov_rr(b, X64_W, X64_RSP, X64_R12);
	x64_rm(b, X64_W, 0x8b, X64_R11, X64_RSP, 0);
	x64_rm(b, 0, 0x89, X64_RAX, X64_R11, 0);
	x64_rm(b, 0, 0x89, X64_R10, X64_R11, 4);
	x64_rm(b, X64_W, 0x89, X64_R9, X64_R11, 8);
	x64_jmp(b, c->exit_off, 1);
}

static void emit_fault(struct x64_buf *b, size_t abort_off, size_t i, enum jit_fault kind)
{
	x64_mov_ri32(b, X64_RAX, (uint32_t)i);
	x64_mov_ri32(b, X64_R10, kind);
	x64_jmp(b, abort_off, 0);
}

static size_t fault_size(size_t i, enum jit_fault kind)
{
	struct x64_buf m = {NULL, 0};
	emit_fault(&m, 0, i, kind);
	return m.len;
}

/*
 * The main function's frame has the same size as a callee's (the depth check
 * counts frames from r12), but its saved-register slots stay unused: the
 * trampoline already saved the native callee-saved registers and restores
 * them, so main skips five pushes and five pops on every run.
 */
enum { JIT_SAVED_BYTES = 8 * JIT_SAVED_REGS };

static int uses_reg(const struct jit_ctx *c, int r)
{
	return (c->used_regs >> r) & 1;
}

/*
 * A direct image's frame: the callee-saved registers of the r6..r10 it uses,
 * then (with r10) the eBPF stack below rbp.  At entry rsp is 8 off a 16-byte
 * boundary, so with an even number of pushes a helper call needs 8 bytes more.
 */
static int direct_pushes(const struct jit_ctx *c)
{
	int n = 0;

	for (int r = 6; r <= ISA_REG_FP; r++)
		n += uses_reg(c, r);
	return n;
}

static int direct_pad(const struct jit_ctx *c)
{
	return c->calls_helpers && direct_pushes(c) % 2 == 0 ? 8 : 0;
}

static void emit_direct_prologue(struct jit_ctx *c)
{
	struct x64_buf *b = &c->b;
	int pad = direct_pad(c);

	for (int r = 6; r <= ISA_REG_FP; r++)
		if (uses_reg(c, r))
			x64_push(b, reg_map[r]);
	if (uses_reg(c, ISA_REG_FP)) {
		x64_mov_rr(b, X64_W, X64_RBP, X64_RSP);
		x64_rm(b, X64_W, 0x8d, X64_RSP, X64_RSP, -ISA_STACK_SIZE - pad); /* lea */
	} else if (pad) {
		x64_push(b, X64_R11); /* any value: only the alignment counts */
	}
	x64_alu_rr(b, 0, X64_XOR, X64_RAX, X64_RAX);
	for (int r = 6; r < ISA_REG_FP; r++)
		if (uses_reg(c, r))
			x64_alu_rr(b, 0, X64_XOR, reg_map[r], reg_map[r]);
}

static void emit_direct_exit(struct jit_ctx *c)
{
	struct x64_buf *b = &c->b;

	if (uses_reg(c, ISA_REG_FP))
		x64_mov_rr(b, X64_W, X64_RSP, X64_RBP);
	else if (direct_pad(c))
		x64_pop(b, X64_R11);
	for (int r = ISA_REG_FP; r >= 6; r--)
		if (uses_reg(c, r))
			x64_pop(b, reg_map[r]);
	x64_ret(b);
}

static void emit_prologue(struct jit_ctx *c)
{
	struct x64_buf *b = &c->b;

	switch (c->fn_kind) {
	case JIT_FN_DIRECT:
		emit_direct_prologue(c);
		return;
	case JIT_FN_MAIN:
		x64_rm(b, X64_W, 0x8d, X64_RBP, X64_RSP, -JIT_SAVED_BYTES); /* lea */
		x64_rm(b, X64_W, 0x8d, X64_RSP, X64_RSP, -JIT_SAVED_BYTES - ISA_STACK_SIZE);
		return;
	case JIT_FN_CALLEE:
		for (int r = 6; r <= ISA_REG_FP; r++)
			x64_push(b, reg_map[r]);
		x64_mov_rr(b, X64_W, X64_RBP, X64_RSP);
		x64_alu_ri(b, X64_W, X64_SUB, X64_RSP, ISA_STACK_SIZE);
		return;
	}
}

static void emit_exit(struct jit_ctx *c)
{
	struct x64_buf *b = &c->b;

	switch (c->fn_kind) {
	case JIT_FN_DIRECT:
		emit_direct_exit(c);
		return;
	case JIT_FN_MAIN:
		x64_rm(b, X64_W, 0x8d, X64_RSP, X64_RBP, JIT_SAVED_BYTES); /* lea */
		x64_ret(b);
		return;
	case JIT_FN_CALLEE:
		x64_mov_rr(b, X64_W, X64_RSP, X64_RBP);
		for (int r = ISA_REG_FP; r >= 6; r--)
			x64_pop(b, reg_map[r]);
		x64_ret(b);
		return;
	}
}

/* ---- ALU --------------------------------------------------------------- */

/* Shift dst by the count in eBPF register src (x86 wants it in cl = r4). */
static void emit_shift_x(struct x64_buf *b, unsigned w, int digit, int dst, int src)
{
	if (src == X64_RCX) {
		x64_shift_cl(b, w, digit, dst);
		return;
	}
	x64_mov_rr(b, X64_W, X64_R11, X64_RCX);
	x64_mov_rr(b, X64_W, X64_RCX, src);
	if (dst == X64_RCX) {
		/* r4 itself is shifted: its value waits in r11. */
		x64_shift_cl(b, w, digit, X64_R11);
		x64_mov_rr(b, X64_W, X64_RCX, X64_R11);
	} else {
		x64_shift_cl(b, w, digit, dst);
		x64_mov_rr(b, X64_W, X64_RCX, X64_R11);
	}
}

/*
 * The three outcomes of a division, each leaving the result in r11 with
 * rax = the dividend (r9, r10 hold the caller's rax, rdx):
 *   by zero:  div -> 0, mod -> dividend
 *   by -1 (signed): div -> -dividend (no trap at INT_MIN), mod -> 0
 *   otherwise: the hardware division
 * 32-bit forms leave r11 zero-extended.
 */
static void emit_div_zero(struct x64_buf *b, unsigned w, int is_mod)
{
	if (is_mod)
		x64_mov_rr(b, w, X64_R11, X64_RAX);
	else
		x64_alu_rr(b, 0, X64_XOR, X64_R11, X64_R11);
}

static void emit_div_minus1(struct x64_buf *b, unsigned w, int is_mod)
{
	if (is_mod) {
		x64_alu_rr(b, 0, X64_XOR, X64_R11, X64_R11);
	} else {
		x64_rr(b, w, 0xf7, 3, X64_RAX); /* neg */
		x64_mov_rr(b, w, X64_R11, X64_RAX);
	}
}

static void emit_div_hw(struct x64_buf *b, unsigned w, int is_mod, int is_signed)
{
	if (is_signed) {
		if (w)
			x64_byte(b, 0x48);
		x64_byte(b, 0x99); /* cqo / cdq */
		x64_rr(b, w, 0xf7, 7, X64_R11); /* idiv */
	} else {
		x64_alu_rr(b, 0, X64_XOR, X64_RDX, X64_RDX);
		x64_rr(b, w, 0xf7, 6, X64_R11); /* div */
	}
	x64_mov_rr(b, w, X64_R11, is_mod ? X64_RDX : X64_RAX);
}

static size_t measure_div(void (*fn)(struct x64_buf *, unsigned, int), unsigned w, int is_mod)
{
	struct x64_buf m = {NULL, 0};
	fn(&m, w, is_mod);
	return m.len;
}

static void emit_divmod(struct x64_buf *b, unsigned w, int is_mod, int is_signed, int dst,
			int src, int is_k, int32_t imm)
{
	x64_mov_rr(b, X64_W, X64_R9, X64_RAX);
	x64_mov_rr(b, X64_W, X64_R10, X64_RDX);
	if (is_k)
		x64_mov_ri64(b, X64_R11, w ? (uint64_t)(int64_t)imm : (uint32_t)imm);
	else
		x64_mov_rr(b, X64_W, X64_R11, src);
	x64_mov_rr(b, X64_W, X64_RAX, dst);

	if (is_k) {
		/* The divisor is known: emit only its outcome. */
		if (imm == 0)
			emit_div_zero(b, w, is_mod);
		else if (is_signed && imm == -1)
			emit_div_minus1(b, w, is_mod);
		else
			emit_div_hw(b, w, is_mod, is_signed);
	} else {
		struct x64_buf m = {NULL, 0};
		emit_div_hw(&m, w, is_mod, is_signed);
		size_t hw = m.len;
		size_t zero = measure_div(emit_div_zero, w, is_mod);
		size_t minus1 = measure_div(emit_div_minus1, w, is_mod);
		size_t signed_part = is_signed ? 4 + 2 + minus1 + 2 : 0;

		x64_alu_rr(b, w, X64_TEST, X64_R11, X64_R11);
		x64_jcc(b, X64_CC_E, b->len + 2 + signed_part + hw + 2, 1);
		if (is_signed) {
			x64_alu_ri(b, w, X64_CMP, X64_R11, -1); /* 4 bytes: 83 /7 ib */
			x64_jcc(b, X64_CC_NE, b->len + 2 + minus1 + 2, 1);
			emit_div_minus1(b, w, is_mod);
			x64_jmp(b, b->len + 2 + hw + 2 + zero, 1);
		}
		emit_div_hw(b, w, is_mod, is_signed);
		x64_jmp(b, b->len + 2 + zero, 1);
		emit_div_zero(b, w, is_mod);
	}
	x64_mov_rr(b, X64_W, X64_RAX, X64_R9);
	x64_mov_rr(b, X64_W, X64_RDX, X64_R10);
	x64_mov_rr(b, X64_W, dst, X64_R11);
}

static int emit_end(struct jit_ctx *c, size_t i, struct isa_insn in, int dst)
{
	struct x64_buf *b = &c->b;
	int swap = !(ISA_CLASS(in.code) == ISA_ALU && ISA_SRC(in.code) == ISA_K); /* not to-le */

	switch (in.imm) {
	case 16:
		if (swap)
			x64_shift_ri(b, X64_16, 1, dst, 8); /* ror r16, 8 */
		x64_rr(b, 0, 0x0fb7, dst, dst);          /* movzx r32, r16 */
		return 0;
	case 32:
		if (swap)
			x64_bswap(b, 0, dst);
		else
			x64_mov_rr(b, 0, dst, dst); /* zero-extend */
		return 0;
	case 64:
		if (swap)
			x64_bswap(b, X64_W, dst);
		return 0;
	default:
		return insn_err(c, i, "byte swap width %d is not 16, 32 or 64", in.imm);
	}
}

/*
 * dst *= imm in a cheaper form than imul where one gives the same bits (the
 * product modulo 2^64, or modulo 2^32 zero-extended): by 0, 1, a power of
 * two, 3, 5 or 9 (one lea), 2^k + 1 or 2^k - 1 (shift, then add or subtract
 * the copy in r11: two cycles of latency where imul takes three; x * 31 is
 * the classic hash step).  Returns 0, emitting nothing, for other constants.
 */
static int emit_mul_k(struct x64_buf *b, unsigned w, int dst, int32_t imm)
{
	if (imm < 0)
		return 0;
	uint32_t v = (uint32_t)imm;
	if (v == 0) {
		x64_alu_rr(b, 0, X64_XOR, dst, dst);
		return 1;
	}
	if (v == 1) {
		if (!w)
			x64_mov_rr(b, 0, dst, dst); /* zero-extends */
		return 1;
	}
	if ((v & (v - 1)) == 0) {
		x64_shift_ri(b, w, 4, dst, (uint8_t)__builtin_ctz(v)); /* shl */
		return 1;
	}
	if (v == 3 || v == 5 || v == 9) {
		x64_lea_bi(b, w, dst, dst, dst, (unsigned)__builtin_ctz(v - 1));
		return 1;
	}
	int plus = ((v - 1) & (v - 2)) == 0; /* v = 2^k + 1 */
	int minus = (v & (v + 1)) == 0;      /* v = 2^k - 1 */
	if (!plus && !minus)
		return 0;
	x64_mov_rr(b, X64_W, X64_R11, dst);
	x64_shift_ri(b, w, 4, dst, (uint8_t)__builtin_ctz(plus ? v - 1 : v + 1));
	x64_alu_rr(b, w, plus ? X64_ADD : X64_SUB, dst, X64_R11);
	return 1;
}

static int emit_alu(struct jit_ctx *c, size_t i, struct isa_insn in)
{
	struct x64_buf *b = &c->b;
	unsigned w = ISA_CLASS(in.code) == ISA_ALU64 ? X64_W : 0;
	int is_k = ISA_SRC(in.code) == ISA_K;
	int dst = reg_map[in.dst], src = reg_map[in.src];
	int op = ISA_OP(in.code);

	if (in.dst == ISA_REG_FP)
		return insn_err(c, i, "r10 is read-only");
	if (op != ISA_ALU_MOV && op != ISA_ALU_DIV && op != ISA_ALU_MOD && in.off != 0)
		return insn_err(c, i, "reserved field off=%d must be 0", in.off);

	switch (op) {
	case ISA_ALU_ADD: case ISA_ALU_SUB: case ISA_ALU_OR: case ISA_ALU_AND:
	case ISA_ALU_XOR: {
		static const enum x64_alu alu[16] = {
			[ISA_ALU_ADD >> 4] = X64_ADD, [ISA_ALU_SUB >> 4] = X64_SUB,
			[ISA_ALU_OR >> 4] = X64_OR,   [ISA_ALU_AND >> 4] = X64_AND,
			[ISA_ALU_XOR >> 4] = X64_XOR,
		};
		if (is_k)
			x64_alu_ri(b, w, alu[op >> 4], dst, in.imm);
		else
			x64_alu_rr(b, w, alu[op >> 4], dst, src);
		return 0;
	}
	case ISA_ALU_MUL:
		if (!is_k) {
			x64_rr(b, w, 0x0faf, dst, src);
		} else if (!emit_mul_k(b, w, dst, in.imm)) {
			x64_rr(b, w, 0x69, dst, dst); /* imul r, r/m, imm32 */
			x64_imm32(b, (uint32_t)in.imm);
		}
		return 0;
	case ISA_ALU_DIV: case ISA_ALU_MOD:
		if (in.off != 0 && in.off != 1)
			return insn_err(c, i, "division off=%d is not 0 or 1 (signed)", in.off);
		emit_divmod(b, w, op == ISA_ALU_MOD, in.off == 1, dst, src, is_k, in.imm);
		return 0;
	case ISA_ALU_LSH: case ISA_ALU_RSH: case ISA_ALU_ARSH: {
		int digit = op == ISA_ALU_LSH ? 4 : op == ISA_ALU_RSH ? 5 : 7;
		if (!is_k) {
			emit_shift_x(b, w, digit, dst, src);
			return 0;
		}
		/* Counts are masked to the operand width, as the interpreter does. */
		uint8_t n = (uint8_t)(in.imm & (w ? 63 : 31));
		if (n)
			x64_shift_ri(b, w, digit, dst, n);
		else if (!w)
			x64_mov_rr(b, 0, dst, dst); /* still zero-extends */
		return 0;
	}
	case ISA_ALU_NEG:
		x64_rr(b, w, 0xf7, 3, dst);
		return 0;
	case ISA_ALU_MOV:
		if (is_k) {
			if (in.off)
				return insn_err(c, i, "mov with immediate has off=%d", in.off);
			if (w)
				x64_mov_ri64(b, dst, (uint64_t)(int64_t)in.imm);
			else
				x64_mov_ri32(b, dst, (uint32_t)in.imm);
		} else if (in.off == 0) {
			if (dst != src || !w)
				x64_mov_rr(b, w, dst, src);
		} else if (in.off == 8) {
			x64_rr(b, w | X64_BYTE, 0x0fbe, dst, src); /* movsx r, r8 */
		} else if (in.off == 16) {
			x64_rr(b, w, 0x0fbf, dst, src); /* movsx r, r16 */
		} else if (in.off == 32 && w) {
			x64_rr(b, X64_W, 0x63, dst, src); /* movsxd */
		} else {
			return insn_err(c, i, "movsx width off=%d is not 8, 16%s", in.off,
					w ? " or 32" : "");
		}
		return 0;
	case ISA_ALU_END:
		return emit_end(c, i, in, dst);
	default:
		return insn_err(c, i, "unknown ALU operation 0x%02x", op);
	}
}

/* ---- memory ------------------------------------------------------------- */

static int emit_atomic(struct jit_ctx *c, size_t i, struct isa_insn in)
{
	struct x64_buf *b = &c->b;
	unsigned w = ISA_SIZE(in.code) == ISA_DW ? X64_W : 0;
	int dst = reg_map[in.dst], src = reg_map[in.src];
	static const enum x64_alu alu[16] = {
		[ISA_ATOMIC_ADD >> 4] = X64_ADD, [ISA_ATOMIC_OR >> 4] = X64_OR,
		[ISA_ATOMIC_AND >> 4] = X64_AND, [ISA_ATOMIC_XOR >> 4] = X64_XOR,
	};

	if ((in.imm & ISA_FETCH) && in.src == ISA_REG_FP)
		return insn_err(c, i, "atomic fetch into r10, which is read-only");
	switch (in.imm) {
	case ISA_ATOMIC_ADD: case ISA_ATOMIC_OR: case ISA_ATOMIC_AND: case ISA_ATOMIC_XOR:
		x64_rm(b, w | X64_LOCK, alu[in.imm >> 4], src, dst, in.off);
		return 0;
	case ISA_ATOMIC_ADD | ISA_FETCH:
		x64_rm(b, w | X64_LOCK, 0x0fc1, src, dst, in.off); /* lock xadd */
		return 0;
	case ISA_ATOMIC_OR | ISA_FETCH: case ISA_ATOMIC_AND | ISA_FETCH:
	case ISA_ATOMIC_XOR | ISA_FETCH: {
		/* A compare-exchange loop; cmpxchg works on rax = r0, kept in r9. */
		int operand = src == X64_RAX ? X64_R9 : src;
		x64_mov_rr(b, X64_W, X64_R9, X64_RAX);
		x64_rm(b, X64_W, 0x8d, X64_R10, dst, in.off); /* lea */
		x64_rm(b, w, 0x8b, X64_RAX, X64_R10, 0);
		size_t loop = b->len;
		x64_mov_rr(b, X64_W, X64_R11, X64_RAX);
		x64_alu_rr(b, w, alu[(in.imm & ~ISA_FETCH) >> 4], X64_R11, operand);
		x64_rm(b, w | X64_LOCK, 0x0fb1, X64_R11, X64_R10, 0);
		x64_jcc(b, X64_CC_NE, loop, 1);
		if (src != X64_RAX) {
			x64_mov_rr(b, X64_W, src, X64_RAX);
			x64_mov_rr(b, X64_W, X64_RAX, X64_R9);
		}
		return 0;
	}
	case ISA_ATOMIC_XCHG:
		x64_rm(b, w, 0x87, src, dst, in.off); /* xchg locks implicitly */
		return 0;
	case ISA_ATOMIC_CMPXCHG: {
		int base = dst;
		int32_t disp = in.off;
		if (dst == X64_RAX) {
			/* The address is in r0, which cmpxchg also compares. */
			x64_rm(b, X64_W, 0x8d, X64_R10, dst, in.off);
			base = X64_R10;
			disp = 0;
		}
		x64_rm(b, w | X64_LOCK, 0x0fb1, src, base, disp);
		if (!w)
			x64_mov_rr(b, 0, X64_RAX, X64_RAX); /* r0 = (u32)old */
		return 0;
	}
	default:
		return insn_err(c, i, "unknown atomic operation imm=0x%x", (unsigned)in.imm);
	}
}

/* Loads, stores and sign-extending loads: opcode and flags per opcode byte. */
static void emit_ldx(struct x64_buf *b, struct isa_insn in, unsigned flags, unsigned op)
{
	x64_rm(b, flags, op, reg_map[in.dst], reg_map[in.src], in.off);
}

static void emit_st(struct x64_buf *b, struct isa_insn in)
{
	int dst = reg_map[in.dst];

	switch (ISA_SIZE(in.code)) {
	case ISA_B:
		x64_rm(b, 0, 0xc6, 0, dst, in.off);
		x64_byte(b, (uint8_t)in.imm);
		break;
	case ISA_H:
		x64_rm(b, X64_16, 0xc7, 0, dst, in.off);
		x64_imm16(b, (uint16_t)in.imm);
		break;
	case ISA_W:
		x64_rm(b, 0, 0xc7, 0, dst, in.off);
		x64_imm32(b, (uint32_t)in.imm);
		break;
	default:
		x64_rm(b, X64_W, 0xc7, 0, dst, in.off); /* sign-extended imm32 */
		x64_imm32(b, (uint32_t)in.imm);
		break;
	}
}

static void emit_stx(struct x64_buf *b, struct isa_insn in)
{
	static const unsigned flags[4] = {[ISA_W >> 3] = 0, [ISA_H >> 3] = X64_16,
					  [ISA_B >> 3] = X64_BYTE, [ISA_DW >> 3] = X64_W};
	unsigned size = ISA_SIZE(in.code) >> 3;

	x64_rm(b, flags[size], size == ISA_B >> 3 ? 0x88 : 0x89, reg_map[in.src],
	       reg_map[in.dst], in.off);
}

static int emit_ld_imm64(struct jit_ctx *c, size_t i, struct isa_insn in)
{
	const struct prog *p = c->p;
	struct isa_insn hi = p->insns[i + 1];
	uint64_t v;

	if (in.dst == ISA_REG_FP)
		return insn_err(c, i, "r10 is read-only");
	switch (in.src) {
	case ISA_PSEUDO_NONE:
		v = (uint32_t)in.imm | (uint64_t)(uint32_t)hi.imm << 32;
		break;
	case ISA_PSEUDO_MAP_FD:
	case ISA_PSEUDO_MAP_VALUE:
		if (in.imm < 0 || (size_t)in.imm >= p->map_cnt || !p->maps || !p->maps[in.imm])
			return insn_err(c, i, "map index %d out of range (program has %zu maps)",
					in.imm, p->map_cnt);
		if (in.src == ISA_PSEUDO_MAP_FD) {
			v = (uintptr_t)p->maps[in.imm];
		} else {
			uint8_t *base = map_array_base(p->maps[in.imm]);
			if (!base)
				return insn_err(c, i, "map %d has no directly addressable value",
						in.imm);
			v = (uintptr_t)(base + (uint32_t)hi.imm);
		}
		break;
	default:
		return insn_err(c, i, "unsupported LD_IMM64 source %d", in.src);
	}
	x64_mov_ri64(&c->b, reg_map[in.dst], v);
	return 0;
}

/* ---- jumps and calls ---------------------------------------------------- */

static int jump_target(struct jit_ctx *c, size_t i, int64_t rel, size_t *target)
{
	int64_t t = (int64_t)i + 1 + rel;

	if (t < 0 || t >= (int64_t)c->p->insn_cnt)
		return insn_err(c, i, "jump target %lld is outside the program", (long long)t);
	if (c->is_imm_hi[t])
		return insn_err(c, i, "jump target %lld is the middle of an LD_IMM64", (long long)t);
	*target = (size_t)t;
	return 0;
}

/*
 * Jump to insn t from the end of insn i: the 2-byte form when the distance
 * in the last layout fits.  Sizes mostly shrink from pass to pass, but loop
 * alignment can lengthen a distance again; a jump that must go back from
 * short to long stays long for good, so each jump changes form at most
 * twice and the passes converge.
 */
static int use_short(struct jit_ctx *c, size_t i, size_t t)
{
	uint8_t *form = &c->jump_form[i];

	if (c->all_long || *form == JIT_JUMP_LONG_STUCK)
		return 0;
	if (fits_s8((int64_t)c->prev.body[t] - (int64_t)c->prev.end[i])) {
		*form = JIT_JUMP_SHORT;
		return 1;
	}
	if (*form == JIT_JUMP_SHORT)
		*form = JIT_JUMP_LONG_STUCK;
	return 0;
}

static int emit_jmp(struct jit_ctx *c, size_t i, struct isa_insn in)
{
	struct x64_buf *b = &c->b;
	unsigned w = ISA_CLASS(in.code) == ISA_JMP ? X64_W : 0;
	int dst = reg_map[in.dst], src = reg_map[in.src];
	int op = ISA_OP(in.code);
	size_t t;
	int rc;
	enum x64_cc cc;

	if (op == ISA_JMP_JA) {
		int64_t rel = ISA_CLASS(in.code) == ISA_JMP32 ? in.imm : in.off;
		if ((rc = jump_target(c, i, rel, &t)))
			return rc;
		x64_jmp(b, c->prev.body[t], use_short(c, i, t));
		return 0;
	}
	if ((rc = jump_target(c, i, in.off, &t)))
		return rc;
	switch (op) {
	case ISA_JMP_JEQ: cc = X64_CC_E; break;
	case ISA_JMP_JNE: cc = X64_CC_NE; break;
	case ISA_JMP_JSET: cc = X64_CC_NE; break;
	case ISA_JMP_JGT: cc = X64_CC_A; break;
	case ISA_JMP_JGE: cc = X64_CC_AE; break;
	case ISA_JMP_JLT: cc = X64_CC_B; break;
	case ISA_JMP_JLE: cc = X64_CC_BE; break;
	case ISA_JMP_JSGT: cc = X64_CC_G; break;
	case ISA_JMP_JSGE: cc = X64_CC_GE; break;
	case ISA_JMP_JSLT: cc = X64_CC_L; break;
	case ISA_JMP_JSLE: cc = X64_CC_LE; break;
	default:
		return insn_err(c, i, "unknown jump operation 0x%02x", op);
	}
	if (op == ISA_JMP_JSET) {
		if (ISA_SRC(in.code) == ISA_K)
			x64_test_ri(b, w, dst, in.imm);
		else
			x64_alu_rr(b, w, X64_TEST, dst, src);
	} else {
		/* test r, r sets the flags of cmp r, 0 for every condition, shorter. */
		if (ISA_SRC(in.code) == ISA_K && in.imm == 0)
			x64_alu_rr(b, w, X64_TEST, dst, dst);
		else if (ISA_SRC(in.code) == ISA_K)
			x64_alu_ri(b, w, X64_CMP, dst, in.imm);
		else
			x64_alu_rr(b, w, X64_CMP, dst, src);
	}
	x64_jcc(b, cc, c->prev.body[t], use_short(c, i, t));
	return 0;
}

static int emit_call(struct jit_ctx *c, size_t i, struct isa_insn in)
{
	struct x64_buf *b = &c->b;

	switch (in.src) {
	case ISA_CALL_HELPER: {
		if (in.imm < 0 || in.imm >= HELPER_TABLE_SIZE || !c->helpers->fn[in.imm])
			return insn_err(c, i, "helper %d is not in the helper table", in.imm);
		x64_call_abs(b, (uintptr_t)c->helpers->fn[in.imm]);
		return 0;
	}
	case ISA_CALL_LOCAL: {
		size_t t;
		int rc = jump_target(c, i, in.imm, &t);
		if (rc)
			return rc;
		/* Frame k has rsp = r12 - k * JIT_FRAME; frame k + 1 must exist. */
		x64_rm(b, X64_W, 0x8d, X64_R11, X64_R12,
		       -(int32_t)JIT_FRAME * (ISA_MAX_CALL_DEPTH - 1));
		x64_alu_rr(b, X64_W, X64_CMP, X64_RSP, X64_R11);
		x64_jcc(b, X64_CC_AE, b->len + 2 + fault_size(i, JIT_FAULT_DEPTH), 1);
		emit_fault(b, c->abort_off, i, JIT_FAULT_DEPTH);
		x64_call_rel(b, c->prev.func[t]);
		return 0;
	}
	default:
		return insn_err(c, i, "call with src=%d (kfunc) is not supported", in.src);
	}
}

/* r11 = helpers->fn[r9], then call it; jz to skip bytes past the call if NULL. */
static void emit_callx_lookup(struct x64_buf *b, const struct helper_table *h, size_t skip)
{
	x64_mov_ri64(b, X64_R11, (uintptr_t)h->fn);
	x64_mov_rr(b, X64_W, X64_R10, X64_R9);
	x64_shift_ri(b, X64_W, 4, X64_R10, 3);
	x64_alu_rr(b, X64_W, X64_ADD, X64_R11, X64_R10);
	x64_rm(b, X64_W, 0x8b, X64_R11, X64_R11, 0);
	x64_alu_rr(b, X64_W, X64_TEST, X64_R11, X64_R11);
	x64_jcc(b, X64_CC_E, b->len + 2 + 3 + skip, 1);
	x64_rr(b, 0, 0xff, 2, X64_R11); /* call r11: 3 bytes */
}

/*
 * callx dst (uBPF's extension, as the interpreter runs it): call the helper
 * whose id is in dst, looked up at run time; an id without a helper faults.
 */
static void emit_callx(struct jit_ctx *c, size_t i, struct isa_insn in)
{
	struct x64_buf *b = &c->b, m = {NULL, 0};
	size_t fault = fault_size(i, JIT_FAULT_HELPER);

	emit_callx_lookup(&m, c->helpers, 2);
	x64_mov_rr(b, X64_W, X64_R9, reg_map[in.dst]);
	x64_alu_ri(b, X64_W, X64_CMP, X64_R9, HELPER_TABLE_SIZE);
	x64_jcc(b, X64_CC_AE, b->len + 2 + m.len + 2, 1);
	emit_callx_lookup(b, c->helpers, 2);
	x64_jmp(b, b->len + 2 + fault, 1);
	emit_fault(b, c->abort_off, i, JIT_FAULT_HELPER);
}

/* ---- two instructions as one -------------------------------------------- */

/*
 * "mov dst, src" then "add dst, src2" (or an immediate), both of one width,
 * is a single lea: the sum without the copy, one instruction less on every
 * address computation (clang emits this pair for each pointer + offset).
 * The flags, which lea leaves alone, are dead: no translated instruction
 * reads flags another one set (every jump sets its own).  Not when a jump or
 * call lands on the add, which must then exist on its own.  Emits the lea and
 * returns 1, or returns 0 and emits nothing.
 */
static int emit_mov_add(struct jit_ctx *c, size_t i)
{
	const struct isa_insn *in = &c->p->insns[i];

	if (i + 1 >= c->p->insn_cnt || (c->lands[i + 1] & JIT_LAND_JUMP) || c->is_func[i + 1])
		return 0;
	unsigned cls = ISA_CLASS(in[0].code);
	unsigned w = cls == ISA_ALU64 ? X64_W : 0;
	if ((cls != ISA_ALU64 && cls != ISA_ALU) || in[0].code != (cls | ISA_X | ISA_ALU_MOV) ||
	    in[0].off != 0 || in[1].dst != in[0].dst || in[1].off != 0 ||
	    (in[1].code != (cls | ISA_X | ISA_ALU_ADD) && in[1].code != (cls | ISA_K | ISA_ALU_ADD)))
		return 0;
	if (in[0].dst >= ISA_REG_FP || in[0].src >= ISA_NR_REGS || in[1].src >= ISA_NR_REGS)
		return 0; /* left to emit_insn's errors */
	int dst = reg_map[in[0].dst], src = reg_map[in[0].src];
	if (ISA_SRC(in[1].code) == ISA_K) {
		x64_rm(&c->b, w, 0x8d, dst, src, in[1].imm);
	} else {
		/* dst holds src once the mov is done: "add dst, dst" adds src. */
		int src2 = in[1].src == in[0].dst ? src : reg_map[in[1].src];
		x64_lea_bi(&c->b, w, dst, src, src2, 0);
	}
	return 1;
}

/* ---- one instruction ---------------------------------------------------- */

/*
 * A case per entry of ISA_OPCODES: the switch is over enum isa_opcode with
 * no default, so -Wswitch turns a missing opcode into a build error.
 */
static int emit_insn(struct jit_ctx *c, size_t i)
{
	struct isa_insn in = c->p->insns[i];
	struct x64_buf *b = &c->b;

	/* LD_IMM64 and CALL use src for something else, checked where used. */
	int src_is_reg = in.code != ISA_OPC_LD_IMM64 && in.code != ISA_OPC_JMP_CALL;
	if (in.dst >= ISA_NR_REGS || (src_is_reg && in.src >= ISA_NR_REGS))
		return insn_err(c, i, "register r%d does not exist",
				in.dst >= ISA_NR_REGS ? in.dst : in.src);
	if (ISA_CLASS(in.code) == ISA_LDX && in.dst == ISA_REG_FP)
		return insn_err(c, i, "r10 is read-only");
	switch ((enum isa_opcode)in.code) {
	case ISA_OPC_ALU32_ADD_K: case ISA_OPC_ALU32_ADD_X:
	case ISA_OPC_ALU32_SUB_K: case ISA_OPC_ALU32_SUB_X:
	case ISA_OPC_ALU32_MUL_K: case ISA_OPC_ALU32_MUL_X:
	case ISA_OPC_ALU32_DIV_K: case ISA_OPC_ALU32_DIV_X:
	case ISA_OPC_ALU32_OR_K: case ISA_OPC_ALU32_OR_X:
	case ISA_OPC_ALU32_AND_K: case ISA_OPC_ALU32_AND_X:
	case ISA_OPC_ALU32_LSH_K: case ISA_OPC_ALU32_LSH_X:
	case ISA_OPC_ALU32_RSH_K: case ISA_OPC_ALU32_RSH_X:
	case ISA_OPC_ALU32_NEG:
	case ISA_OPC_ALU32_MOD_K: case ISA_OPC_ALU32_MOD_X:
	case ISA_OPC_ALU32_XOR_K: case ISA_OPC_ALU32_XOR_X:
	case ISA_OPC_ALU32_MOV_K: case ISA_OPC_ALU32_MOV_X:
	case ISA_OPC_ALU32_ARSH_K: case ISA_OPC_ALU32_ARSH_X:
	case ISA_OPC_ALU32_TO_LE: case ISA_OPC_ALU32_TO_BE:
	case ISA_OPC_ALU64_ADD_K: case ISA_OPC_ALU64_ADD_X:
	case ISA_OPC_ALU64_SUB_K: case ISA_OPC_ALU64_SUB_X:
	case ISA_OPC_ALU64_MUL_K: case ISA_OPC_ALU64_MUL_X:
	case ISA_OPC_ALU64_DIV_K: case ISA_OPC_ALU64_DIV_X:
	case ISA_OPC_ALU64_OR_K: case ISA_OPC_ALU64_OR_X:
	case ISA_OPC_ALU64_AND_K: case ISA_OPC_ALU64_AND_X:
	case ISA_OPC_ALU64_LSH_K: case ISA_OPC_ALU64_LSH_X:
	case ISA_OPC_ALU64_RSH_K: case ISA_OPC_ALU64_RSH_X:
	case ISA_OPC_ALU64_NEG:
	case ISA_OPC_ALU64_MOD_K: case ISA_OPC_ALU64_MOD_X:
	case ISA_OPC_ALU64_XOR_K: case ISA_OPC_ALU64_XOR_X:
	case ISA_OPC_ALU64_MOV_K: case ISA_OPC_ALU64_MOV_X:
	case ISA_OPC_ALU64_ARSH_K: case ISA_OPC_ALU64_ARSH_X:
	case ISA_OPC_ALU64_BSWAP:
		return emit_alu(c, i, in);

	case ISA_OPC_JMP_JA: case ISA_OPC_JMP32_JA:
	case ISA_OPC_JMP_JEQ_K: case ISA_OPC_JMP_JEQ_X:
	case ISA_OPC_JMP_JGT_K: case ISA_OPC_JMP_JGT_X:
	case ISA_OPC_JMP_JGE_K: case ISA_OPC_JMP_JGE_X:
	case ISA_OPC_JMP_JSET_K: case ISA_OPC_JMP_JSET_X:
	case ISA_OPC_JMP_JNE_K: case ISA_OPC_JMP_JNE_X:
	case ISA_OPC_JMP_JSGT_K: case ISA_OPC_JMP_JSGT_X:
	case ISA_OPC_JMP_JSGE_K: case ISA_OPC_JMP_JSGE_X:
	case ISA_OPC_JMP_JLT_K: case ISA_OPC_JMP_JLT_X:
	case ISA_OPC_JMP_JLE_K: case ISA_OPC_JMP_JLE_X:
	case ISA_OPC_JMP_JSLT_K: case ISA_OPC_JMP_JSLT_X:
	case ISA_OPC_JMP_JSLE_K: case ISA_OPC_JMP_JSLE_X:
	case ISA_OPC_JMP32_JEQ_K: case ISA_OPC_JMP32_JEQ_X:
	case ISA_OPC_JMP32_JGT_K: case ISA_OPC_JMP32_JGT_X:
	case ISA_OPC_JMP32_JGE_K: case ISA_OPC_JMP32_JGE_X:
	case ISA_OPC_JMP32_JSET_K: case ISA_OPC_JMP32_JSET_X:
	case ISA_OPC_JMP32_JNE_K: case ISA_OPC_JMP32_JNE_X:
	case ISA_OPC_JMP32_JSGT_K: case ISA_OPC_JMP32_JSGT_X:
	case ISA_OPC_JMP32_JSGE_K: case ISA_OPC_JMP32_JSGE_X:
	case ISA_OPC_JMP32_JLT_K: case ISA_OPC_JMP32_JLT_X:
	case ISA_OPC_JMP32_JLE_K: case ISA_OPC_JMP32_JLE_X:
	case ISA_OPC_JMP32_JSLT_K: case ISA_OPC_JMP32_JSLT_X:
	case ISA_OPC_JMP32_JSLE_K: case ISA_OPC_JMP32_JSLE_X:
		return emit_jmp(c, i, in);

	case ISA_OPC_JMP_CALL:
		return emit_call(c, i, in);
	case ISA_OPC_JMP_CALLX:
		emit_callx(c, i, in);
		return 0;
	case ISA_OPC_JMP_EXIT:
		emit_exit(c);
		return 0;

	case ISA_OPC_LD_IMM64:
		return emit_ld_imm64(c, i, in);
	case ISA_OPC_LDX_W:
		emit_ldx(b, in, 0, 0x8b);
		return 0;
	case ISA_OPC_LDX_H:
		emit_ldx(b, in, 0, 0x0fb7); /* movzx */
		return 0;
	case ISA_OPC_LDX_B:
		emit_ldx(b, in, 0, 0x0fb6);
		return 0;
	case ISA_OPC_LDX_DW:
		emit_ldx(b, in, X64_W, 0x8b);
		return 0;
	case ISA_OPC_LDXSX_W:
		emit_ldx(b, in, X64_W, 0x63); /* movsxd */
		return 0;
	case ISA_OPC_LDXSX_H:
		emit_ldx(b, in, X64_W, 0x0fbf);
		return 0;
	case ISA_OPC_LDXSX_B:
		emit_ldx(b, in, X64_W, 0x0fbe);
		return 0;
	case ISA_OPC_ST_W: case ISA_OPC_ST_H: case ISA_OPC_ST_B: case ISA_OPC_ST_DW:
		emit_st(b, in);
		return 0;
	case ISA_OPC_STX_W: case ISA_OPC_STX_H: case ISA_OPC_STX_B: case ISA_OPC_STX_DW:
		emit_stx(b, in);
		return 0;
	case ISA_OPC_ATOMIC_W: case ISA_OPC_ATOMIC_DW:
		return emit_atomic(c, i, in);
	}
	return insn_err(c, i, "unknown opcode 0x%02x", in.code);
}

/* ---- passes ------------------------------------------------------------- */

static int emit_pass(struct jit_ctx *c)
{
	const struct prog *p = c->p;

	c->b.len = 0;
	if (!c->direct)
		emit_trampoline(c);
	for (size_t i = 0; i < p->insn_cnt; i++) {
		if (c->is_imm_hi[i]) {
			c->cur.body[i] = c->cur.end[i] = (uint32_t)c->b.len;
			continue;
		}
		if (c->is_func[i]) {
			c->fn_kind = c->direct ? JIT_FN_DIRECT
				   : i == 0 && !c->main_is_callee ? JIT_FN_MAIN
				   : JIT_FN_CALLEE;
			c->cur.func[i] = (uint32_t)c->b.len;
			emit_prologue(c);
		}
		if (c->lands[i] & JIT_LAND_LOOP)
			x64_nop(&c->b, -c->b.len % JIT_LOOP_ALIGN);
		c->cur.body[i] = (uint32_t)c->b.len;
		if (emit_mov_add(c, i)) {
			/* The add's code is in the lea: it starts and ends there. */
			c->cur.end[i] = (uint32_t)c->b.len;
			i++;
			c->cur.body[i] = c->cur.end[i] = (uint32_t)c->b.len;
			continue;
		}
		int rc = emit_insn(c, i);
		if (rc)
			return rc;
		c->cur.end[i] = (uint32_t)c->b.len;
		if (c->b.len > UINT32_MAX / 2)
			return err_set(c->e, E2BIG, "jit: prog '%s': code too large", PROG_NAME(p));
	}
	return 0;
}

static int layout_equal(const struct jit_ctx *c)
{
	size_t n = c->p->insn_cnt * sizeof(uint32_t);
	return !memcmp(c->cur.body, c->prev.body, n) && !memcmp(c->cur.end, c->prev.end, n) &&
	       !memcmp(c->cur.func, c->prev.func, n);
}

static void layout_copy(struct jit_ctx *c)
{
	size_t n = c->p->insn_cnt * sizeof(uint32_t);
	memcpy(c->prev.body, c->cur.body, n);
	memcpy(c->prev.end, c->cur.end, n);
	memcpy(c->prev.func, c->cur.func, n);
}

static int is_jump(struct isa_insn in)
{
	unsigned cls = ISA_CLASS(in.code), op = ISA_OP(in.code);

	return (cls == ISA_JMP || cls == ISA_JMP32) && op != ISA_JMP_CALL &&
	       op != ISA_JMP_EXIT && in.code != ISA_OPC_JMP_CALLX;
}

/*
 * Where the jump at insn i lands (a bad target is reported when the jump is
 * emitted).  A backward jump over a few straight-line instructions closes a
 * small loop, whose head gets aligned: there the alignment pays on every
 * iteration and its padding runs once per entry.  Other backward targets
 * (the shared tails of a switch, say) are left alone: padding there would
 * run on hot paths that fall through into them.
 */
static void mark_jump_target(struct jit_ctx *c, size_t i, struct isa_insn in)
{
	if (!is_jump(in))
		return;
	int64_t t = (int64_t)i + 1 + (in.code == ISA_OPC_JMP32_JA ? in.imm : in.off);
	if (t < 0 || t >= (int64_t)c->p->insn_cnt)
		return;
	c->lands[t] |= JIT_LAND_JUMP;
	if (t > (int64_t)i || (int64_t)i - t > JIT_SMALL_LOOP)
		return;
	for (size_t k = (size_t)t; k < i; k++)
		if (is_jump(c->p->insns[k]) && !c->is_imm_hi[k])
			return;
	c->lands[t] |= JIT_LAND_LOOP;
}

/*
 * Mark LD_IMM64 second slots and function starts, note the registers and
 * calls that shape the frame (see the top of the file), reject what cannot
 * run.
 */
static int scan_prog(struct jit_ctx *c)
{
	const struct prog *p = c->p;
	size_t n = p->insn_cnt;

	c->is_func[0] = 1;
	c->direct = 1;
	for (size_t i = 0; i < n; i++) {
		if (p->insns[i].code != ISA_OPC_LD_IMM64)
			continue;
		if (i + 1 >= n)
			return insn_err(c, i, "LD_IMM64 lacks its second slot");
		c->is_imm_hi[++i] = 1;
	}
	for (size_t i = 0; i < n; i++) {
		struct isa_insn in = p->insns[i];
		size_t t;
		if (c->is_imm_hi[i])
			continue;
		/* Fields that are not registers only add a needless save. */
		c->used_regs |= 1u << (in.dst & 15) | 1u << (in.src & 15);
		mark_jump_target(c, i, in);
		if (in.code == ISA_OPC_JMP_CALLX)
			c->direct = 0;
		if (in.code != ISA_OPC_JMP_CALL)
			continue;
		if (in.src == ISA_CALL_HELPER)
			c->calls_helpers = 1;
		if (in.src != ISA_CALL_LOCAL)
			continue;
		c->direct = 0;
		int rc = jump_target(c, i, in.imm, &t);
		if (rc)
			return rc;
		c->is_func[t] = 1;
		if (t == 0)
			c->main_is_callee = 1;
	}
	/*
	 * Never run into code that is not this function's: past the end of the
	 * image, or into the next function's prologue (which expects a call).
	 */
	for (size_t i = 1; i <= n; i++) {
		if (i < n && !c->is_func[i])
			continue;
		uint8_t last = p->insns[i - 1].code;
		if (c->is_imm_hi[i - 1] || (last != ISA_OPC_JMP_EXIT && last != ISA_OPC_JMP_JA &&
					    last != ISA_OPC_JMP32_JA))
			return insn_err(c, i - 1, "execution can fall through to %s (the "
					"instruction is not exit or ja)",
					i == n ? "the end of the program" : "another function");
	}
	return 0;
}

static void ctx_free(struct jit_ctx *c)
{
	free(c->cur.body);
	free(c->cur.end);
	free(c->cur.func);
	free(c->prev.body);
	free(c->prev.end);
	free(c->prev.func);
	free(c->is_func);
	free(c->is_imm_hi);
	free(c->lands);
	free(c->jump_form);
}

int jit_compile(struct prog *p, const struct helper_table *helpers, struct err *e)
{
	struct jit_ctx c = {.p = p, .helpers = helpers ? helpers : helper_table_default(), .e = e};
	struct jit_image *img = NULL;
	uint8_t *scratch = NULL;
	size_t n = p->insn_cnt;
	int rc;

	jit_free(p);
	if (n == 0 || !p->insns)
		return err_set(e, EINVAL, "jit: prog '%s': no instructions", PROG_NAME(p));
	if (n > UINT32_MAX / 64)
		return err_set(e, E2BIG, "jit: prog '%s': %zu instructions is too many",
			       PROG_NAME(p), n);
	c.cur.body = calloc(n, sizeof(uint32_t));
	c.cur.end = calloc(n, sizeof(uint32_t));
	c.cur.func = calloc(n, sizeof(uint32_t));
	c.prev.body = calloc(n, sizeof(uint32_t));
	c.prev.end = calloc(n, sizeof(uint32_t));
	c.prev.func = calloc(n, sizeof(uint32_t));
	c.is_func = calloc(n, 1);
	c.is_imm_hi = calloc(n, 1);
	c.lands = calloc(n, 1);
	c.jump_form = calloc(n, 1);
	if (!c.cur.body || !c.cur.end || !c.cur.func || !c.prev.body || !c.prev.end ||
	    !c.prev.func || !c.is_func || !c.is_imm_hi || !c.lands ||
	    !c.jump_form) {
		rc = err_set(e, ENOMEM, "jit: prog '%s': out of memory", PROG_NAME(p));
		goto out;
	}
	if ((rc = scan_prog(&c)))
		goto out;

	/*
	 * Pass 0 only measures (every jump long: the largest layout).  Later
	 * passes write into a scratch buffer of that size; once a pass
	 * reproduces the previous layout, the bytes it wrote are final.  Loop
	 * padding does not break the bound: no instruction is longer than in
	 * pass 0, and aligning up an offset that is not larger gives an offset
	 * that is not larger, so every offset stays at or below pass 0's.
	 */
	c.all_long = 1;
	if ((rc = emit_pass(&c)))
		goto out;
	layout_copy(&c);
	c.all_long = 0;
	scratch = malloc(c.b.len);
	if (!scratch) {
		rc = err_set(e, ENOMEM, "jit: prog '%s': out of memory", PROG_NAME(p));
		goto out;
	}
	c.b.code = scratch;
	int converged = 0;
	for (int pass = 1; pass < JIT_MAX_PASSES && !converged; pass++) {
		if ((rc = emit_pass(&c)))
			goto out;
		converged = layout_equal(&c);
		layout_copy(&c);
	}
	if (!converged) {
		rc = err_set(e, EFAULT, "jit: prog '%s': code layout did not converge",
			     PROG_NAME(p));
		goto out;
	}

	img = calloc(1, sizeof(*img));
	if (!img) {
		rc = err_set(e, ENOMEM, "jit: prog '%s': out of memory", PROG_NAME(p));
		goto out;
	}
	size_t len = c.b.len;
	if ((rc = jit_mem_alloc(&img->mem, len, e)))
		goto out;
	memcpy(img->mem.base, scratch, len);
	if ((rc = jit_mem_seal(&img->mem, e)))
		goto out;
	img->code_len = len;
	img->helpers = c.helpers;
	img->direct = c.direct ? (jit_direct_fn)img->mem.base : NULL;
	p->jit = img;
	img = NULL;
out:
	if (img) {
		jit_mem_free(&img->mem);
		free(img);
	}
	free(scratch);
	ctx_free(&c);
	return rc;
}

int jit_run(const struct prog *p, const struct prog_run_opts *opts, uint64_t *r0,
	    struct err *e)
{
	static const struct prog_run_opts no_opts;
	const struct jit_image *img = p->jit;
	struct jit_state state = {.fault_insn = -1};

	if (!img)
		return err_set(e, EINVAL, "jit: prog '%s' is not compiled", PROG_NAME(p));
	if (!opts)
		opts = &no_opts;
	if (opts->helpers && opts->helpers != img->helpers)
		return err_set(e, EINVAL, "jit: prog '%s' was compiled with another helper table",
			       PROG_NAME(p));
	if (img->direct) {
		*r0 = img->direct(opts->args[0], opts->args[1], opts->args[2], opts->args[3],
				  opts->args[4]);
		return 0;
	}
	jit_entry_fn fn = (jit_entry_fn)img->mem.base;
	uint64_t ret = fn(opts->args[0], opts->args[1], opts->args[2], opts->args[3],
			  opts->args[4], &state);
	if (state.fault_kind == JIT_FAULT_DEPTH)
		return err_set(e, E2BIG, "jit: prog '%s': insn %d: call depth exceeds %d frames",
			       PROG_NAME(p), state.fault_insn, ISA_MAX_CALL_DEPTH);
	if (state.fault_kind == JIT_FAULT_HELPER)
		return err_set(e, ENOENT, "jit: prog '%s': insn %d: callx: unknown helper %llu",
			       PROG_NAME(p), state.fault_insn,
			       (unsigned long long)state.fault_value);
	*r0 = ret;
	return 0;
}

jit_direct_fn jit_direct(const struct prog *p)
{
	const struct jit_image *img = p->jit;

	return img ? img->direct : NULL;
}

const uint8_t *jit_code(const struct prog *p, size_t *len)
{
	const struct jit_image *img = p->jit;

	*len = img ? img->code_len : 0;
	return img ? img->mem.base : NULL;
}

void jit_free(struct prog *p)
{
	struct jit_image *img = p->jit;

	if (!img)
		return;
	jit_mem_free(&img->mem);
	free(img);
	p->jit = NULL;
}
