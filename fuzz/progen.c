/* SPDX-License-Identifier: MIT */
/*
 * progen.c - the random program generator (contract in progen.h).
 *
 * A function is a prologue (r9 = the memory, every register and the used
 * stack written), a block of items, and an epilogue.  An item is a
 * self-contained snippet (an ALU op, a load, a helper call with its argument
 * set-up and the re-initialisation of r1..r5 after it, a loop, ...), so
 * every item boundary is a safe jump target: forward jumps skip whole items
 * of their own block.  Register roles: r0..r7 random, r8 loop counter
 * (read-only inside blocks), r9 memory base, r10 stack.
 */
#include "progen.h"

#include <stdlib.h>
#include <string.h>

enum {
	GEN_WRITABLE = 8, /* r0..r7 */
	GEN_READABLE = 9, /* r0..r8 */
	GEN_REG_COUNTER = 8,
	GEN_REG_MEM = 9,
	GEN_MAX_FUNCS = 6,
};

#define I(c, d, s, o, i) ((struct isa_insn){.code = (uint8_t)(c), .dst = (d), .src = (s), .off = (int16_t)(o), .imm = (int32_t)(i)})

struct gen_fix {
	size_t at;   /* instruction to patch */
	size_t item; /* target: boundary index in its block, or function number */
};

struct gen {
	uint64_t rng;
	const struct progen_cfg *cfg;
	struct isa_insn *p;
	size_t n, cap;
	int oom;
	int nfuncs, cur_func;
	size_t func_start[GEN_MAX_FUNCS];
	struct gen_fix *calls;
	size_t ncalls, capcalls;
};

uint64_t progen_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rnd(struct gen *g, uint32_t n)
{
	return (uint32_t)(progen_rand(&g->rng) % n);
}

static void emit(struct gen *g, struct isa_insn in)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 256;
		struct isa_insn *p = realloc(g->p, cap * sizeof(*p));
		if (!p) {
			g->oom = 1;
			g->n = 0; /* keep writing somewhere valid; the result is dropped */
			return;
		}
		g->p = p;
		g->cap = cap;
	}
	g->p[g->n++] = in;
}

static int32_t rand_imm(struct gen *g)
{
	static const int32_t corner[] = {0, 1, -1, 2, -2, 7, 31, 32, 33, 63, 64, 65,
					 INT32_MIN, INT32_MAX, 0xffff, 0x8000, 0x80, 0xff};
	switch (rnd(g, 6)) {
	case 0: case 1:
		return corner[rnd(g, sizeof(corner) / sizeof(corner[0]))];
	case 2: case 3:
		return (int32_t)rnd(g, 64) - 32;
	default:
		return (int32_t)(uint32_t)progen_rand(&g->rng);
	}
}

static uint64_t rand_u64(struct gen *g)
{
	static const uint64_t corner[] = {0, ~0ull, 1ull << 63, ~0ull >> 1, 0xffffffffull,
					  0x80000000ull, 0x100000000ull, 0xffffffff80000000ull};
	if (rnd(g, 3) == 0)
		return corner[rnd(g, sizeof(corner) / sizeof(corner[0]))];
	if (rnd(g, 2))
		return (uint64_t)(int64_t)rand_imm(g);
	return progen_rand(&g->rng);
}

static void emit_ld_imm64(struct gen *g, int dst, uint64_t v)
{
	emit(g, I(ISA_OPC_LD_IMM64, dst, 0, 0, (uint32_t)v));
	emit(g, I(0, 0, 0, 0, (uint32_t)(v >> 32)));
}

static void emit_set_reg(struct gen *g, int r)
{
	if (rnd(g, 3) == 0)
		emit_ld_imm64(g, r, rand_u64(g));
	else
		emit(g, I(rnd(g, 2) ? ISA_OPC_ALU64_MOV_K : ISA_OPC_ALU32_MOV_K, r, 0, 0, rand_imm(g)));
}

/* ---- items ---------------------------------------------------------------- */

static void gen_alu(struct gen *g)
{
	static const uint8_t ops[] = {ISA_ALU_ADD, ISA_ALU_SUB, ISA_ALU_MUL, ISA_ALU_DIV,
				      ISA_ALU_OR,  ISA_ALU_AND, ISA_ALU_LSH, ISA_ALU_RSH,
				      ISA_ALU_NEG, ISA_ALU_MOD, ISA_ALU_XOR, ISA_ALU_MOV,
				      ISA_ALU_ARSH, ISA_ALU_END};
	int is64 = (int)rnd(g, 2);
	uint8_t cls = is64 ? ISA_ALU64 : ISA_ALU;
	int dst = (int)rnd(g, GEN_WRITABLE);
	uint8_t op = ops[rnd(g, sizeof(ops))];

	if (op == ISA_ALU_NEG) {
		emit(g, I(cls | op, dst, 0, 0, 0));
		return;
	}
	if (op == ISA_ALU_END) {
		static const int widths[] = {16, 32, 64};
		static const uint8_t codes[] = {ISA_OPC_ALU32_TO_LE, ISA_OPC_ALU32_TO_BE,
						ISA_OPC_ALU64_BSWAP};
		emit(g, I(codes[rnd(g, 3)], dst, 0, 0, widths[rnd(g, 3)]));
		return;
	}
	int16_t off = 0;
	int is_x = (int)rnd(g, 2);
	if (op == ISA_ALU_DIV || op == ISA_ALU_MOD)
		off = (int16_t)rnd(g, 2);
	if (op == ISA_ALU_MOV && is_x && rnd(g, 3) == 0) {
		static const int16_t w[] = {8, 16, 32};
		off = w[rnd(g, is64 ? 3 : 2)];
	}
	if (is_x) {
		emit(g, I(cls | ISA_X | op, dst, rnd(g, GEN_READABLE), off, 0));
		return;
	}
	int32_t imm = rand_imm(g);
	/* What a verifier accepts: constant shifts in range, no constant / 0. */
	if (op == ISA_ALU_LSH || op == ISA_ALU_RSH || op == ISA_ALU_ARSH)
		imm = (int32_t)rnd(g, is64 ? 64 : 32);
	if ((op == ISA_ALU_DIV || op == ISA_ALU_MOD) && imm == 0)
		imm = 3;
	emit(g, I(cls | ISA_K | op, dst, 0, off, imm));
}

/*
 * A base register and an offset range for an access of size bytes: the
 * memory (through r9 or a copy of it), the stack, or the map value.  Writes
 * the set-up instructions and returns the base; *off is in bounds (aligned
 * when align is set).
 */
static int gen_base(struct gen *g, unsigned size, int align, int16_t *off)
{
	unsigned kind = rnd(g, g->cfg->map_value_size ? 5 : 4);
	unsigned span, slot;

	switch (kind) {
	case 0: case 1: /* memory through r9 */
		span = PROGEN_DATA_SIZE;
		slot = align ? rnd(g, span / size) * size : rnd(g, span - size + 1);
		*off = (int16_t)slot;
		return GEN_REG_MEM;
	case 2: { /* memory through a copy of r9, moved part-way */
		int r = (int)rnd(g, GEN_WRITABLE);
		unsigned skip = rnd(g, PROGEN_DATA_SIZE / 2 / 8) * 8;
		emit(g, I(ISA_OPC_ALU64_MOV_X, r, GEN_REG_MEM, 0, 0));
		emit(g, I(ISA_OPC_ALU64_ADD_K, r, 0, 0, skip));
		span = PROGEN_DATA_SIZE - skip;
		slot = align ? rnd(g, span / size) * size : rnd(g, span - size + 1);
		*off = (int16_t)slot;
		return r;
	}
	case 3: /* stack */
		slot = align ? rnd(g, PROGEN_STACK_USED / size) * size
			     : rnd(g, PROGEN_STACK_USED - size + 1);
		*off = (int16_t)(-(int)PROGEN_STACK_USED + (int)slot);
		return ISA_REG_FP;
	default: { /* map 0's value */
		int r = (int)rnd(g, GEN_WRITABLE);
		emit(g, I(ISA_OPC_LD_IMM64, r, ISA_PSEUDO_MAP_VALUE, 0, 0));
		emit(g, I(0, 0, 0, 0, 0));
		span = g->cfg->map_value_size;
		slot = align ? rnd(g, span / size) * size : rnd(g, span - size + 1);
		*off = (int16_t)slot;
		return r;
	}
	}
}

static void gen_load(struct gen *g)
{
	static const uint8_t plain[] = {ISA_OPC_LDX_W, ISA_OPC_LDX_H, ISA_OPC_LDX_B, ISA_OPC_LDX_DW};
	static const uint8_t sx[] = {ISA_OPC_LDXSX_W, ISA_OPC_LDXSX_H, ISA_OPC_LDXSX_B};
	uint8_t code = rnd(g, 4) ? plain[rnd(g, 4)] : sx[rnd(g, 3)];
	int16_t off;
	int base = gen_base(g, isa_size_bytes(code), 0, &off);
	emit(g, I(code, rnd(g, GEN_WRITABLE), base, off, 0));
}

static void gen_store(struct gen *g)
{
	static const uint8_t st[] = {ISA_OPC_ST_W, ISA_OPC_ST_H, ISA_OPC_ST_B, ISA_OPC_ST_DW};
	static const uint8_t stx[] = {ISA_OPC_STX_W, ISA_OPC_STX_H, ISA_OPC_STX_B, ISA_OPC_STX_DW};
	int is_x = (int)rnd(g, 2);
	uint8_t code = (is_x ? stx : st)[rnd(g, 4)];
	int16_t off;
	int base = gen_base(g, isa_size_bytes(code), 0, &off);
	if (is_x)
		emit(g, I(code, base, rnd(g, GEN_READABLE), off, 0));
	else
		emit(g, I(code, base, 0, off, rand_imm(g)));
}

static void gen_atomic(struct gen *g)
{
	static const int32_t ops[] = {
		ISA_ATOMIC_ADD, ISA_ATOMIC_OR, ISA_ATOMIC_AND, ISA_ATOMIC_XOR,
		ISA_ATOMIC_ADD | ISA_FETCH, ISA_ATOMIC_OR | ISA_FETCH,
		ISA_ATOMIC_AND | ISA_FETCH, ISA_ATOMIC_XOR | ISA_FETCH,
		ISA_ATOMIC_XCHG, ISA_ATOMIC_CMPXCHG};
	uint8_t code = rnd(g, 2) ? ISA_OPC_ATOMIC_DW : ISA_OPC_ATOMIC_W;
	int32_t op = ops[rnd(g, sizeof(ops) / sizeof(ops[0]))];
	int16_t off;
	int base = gen_base(g, isa_size_bytes(code), 1, &off);
	/* Fetching ops write src, so it must be one of the random registers. */
	int src = (int)rnd(g, (op & ISA_FETCH) && op != ISA_ATOMIC_CMPXCHG ? GEN_WRITABLE
								      : GEN_READABLE);
	emit(g, I(code, base, src, off, op));
}

static void gen_cond_jump(struct gen *g)
{
	static const uint8_t ops[] = {ISA_JMP_JEQ, ISA_JMP_JGT, ISA_JMP_JGE, ISA_JMP_JSET,
				      ISA_JMP_JNE, ISA_JMP_JSGT, ISA_JMP_JSGE, ISA_JMP_JLT,
				      ISA_JMP_JLE, ISA_JMP_JSLT, ISA_JMP_JSLE};
	uint8_t cls = rnd(g, 2) ? ISA_JMP : ISA_JMP32;
	uint8_t op = ops[rnd(g, sizeof(ops))];
	if (rnd(g, 2))
		emit(g, I(cls | ISA_X | op, rnd(g, GEN_READABLE), rnd(g, GEN_READABLE), 0, 0));
	else
		emit(g, I(cls | ISA_K | op, rnd(g, GEN_READABLE), 0, 0, rand_imm(g)));
}

/* Set r1..r5 after a call clobbered them. */
static void gen_reinit_args(struct gen *g)
{
	for (int r = 1; r <= 5; r++)
		emit(g, I(ISA_OPC_ALU64_MOV_K, r, 0, 0, rand_imm(g)));
}

static void gen_args(struct gen *g, int first)
{
	for (int r = first; r <= 5; r++) {
		if (rnd(g, 2))
			emit(g, I(ISA_OPC_ALU64_MOV_X, r, rnd(g, GEN_READABLE), 0, 0));
		else
			emit_set_reg(g, r);
	}
}

static void gen_helper_call(struct gen *g)
{
	if (rnd(g, 2)) {
		gen_args(g, 1);
		emit(g, I(ISA_OPC_JMP_CALL, 0, ISA_CALL_HELPER, 0, PROGEN_HELPER_MIX));
	} else {
		/* a pointer into the memory or into this function's stack */
		if (rnd(g, 2)) {
			emit(g, I(ISA_OPC_ALU64_MOV_X, 1, GEN_REG_MEM, 0, 0));
			emit(g, I(ISA_OPC_ALU64_ADD_K, 1, 0, 0, rnd(g, PROGEN_DATA_SIZE / 8) * 8));
		} else {
			emit(g, I(ISA_OPC_ALU64_MOV_X, 1, ISA_REG_FP, 0, 0));
			emit(g, I(ISA_OPC_ALU64_ADD_K, 1, 0, 0,
				  -8 * (int32_t)(1 + rnd(g, PROGEN_STACK_USED / 8))));
		}
		/* not r1: a stack address differs between backends, keep it out of data */
		emit(g, I(ISA_OPC_ALU64_MOV_X, 2, 2 + rnd(g, GEN_READABLE - 2), 0, 0));
		emit(g, I(ISA_OPC_JMP_CALL, 0, ISA_CALL_HELPER, 0, PROGEN_HELPER_MEMXOR));
	}
	gen_reinit_args(g);
}

static void gen_local_call(struct gen *g)
{
	int callee = g->cur_func + 1 + (int)rnd(g, (uint32_t)(g->nfuncs - g->cur_func - 1));

	emit(g, I(ISA_OPC_ALU64_MOV_X, 1, GEN_REG_MEM, 0, 0));
	gen_args(g, 2);
	if (g->ncalls == g->capcalls) {
		size_t cap = g->capcalls ? g->capcalls * 2 : 16;
		struct gen_fix *c = realloc(g->calls, cap * sizeof(*c));
		if (!c) {
			g->oom = 1;
			return;
		}
		g->calls = c;
		g->capcalls = cap;
	}
	g->calls[g->ncalls++] = (struct gen_fix){g->n, (size_t)callee};
	emit(g, I(ISA_OPC_JMP_CALL, 0, ISA_CALL_LOCAL, 0, 0));
	gen_reinit_args(g);
}

static void gen_block(struct gen *g, int in_loop, size_t budget);

static void gen_loop(struct gen *g, size_t budget)
{
	emit(g, I(ISA_OPC_ALU64_MOV_K, GEN_REG_COUNTER, 0, 0, 1 + rnd(g, PROGEN_MAX_TRIP)));
	size_t head = g->n;
	gen_block(g, 1, budget);
	emit(g, I(rnd(g, 2) ? ISA_OPC_ALU64_SUB_K : ISA_OPC_ALU32_SUB_K, GEN_REG_COUNTER, 0, 0, 1));
	size_t at = g->n;
	emit(g, I(rnd(g, 2) ? ISA_OPC_JMP_JNE_K : ISA_OPC_JMP32_JNE_K, GEN_REG_COUNTER, 0,
		  (int64_t)head - (int64_t)at - 1, 0));
}

/* Items until about budget instructions; jumps skip items of this block. */
static void gen_block(struct gen *g, int in_loop, size_t budget)
{
	size_t start = g->n, nb = 0, nfix = 0;
	size_t bound[512];
	struct gen_fix fix[512];

	while (g->n - start < budget && nb < 511 && !g->oom) {
		size_t cur = nb;
		bound[nb++] = g->n;
		unsigned pick = rnd(g, 100);
		if (pick < 38) {
			gen_alu(g);
		} else if (pick < 43) {
			emit_ld_imm64(g, (int)rnd(g, GEN_WRITABLE), rand_u64(g));
		} else if (pick < 53) {
			gen_load(g);
		} else if (pick < 62) {
			gen_store(g);
		} else if (pick < 69) {
			gen_atomic(g);
		} else if (pick < 83) {
			/* skip 0..3 items forward (clamped to the block's end) */
			fix[nfix++] = (struct gen_fix){g->n, cur + 1 + rnd(g, 4)};
			if (pick < 80)
				gen_cond_jump(g);
			else
				emit(g, rnd(g, 2) ? I(ISA_OPC_JMP_JA, 0, 0, 0, 0)
						  : I(ISA_OPC_JMP32_JA, 0, 0, 0, 0));
		} else if (pick < 88) {
			if (!in_loop && budget - (g->n - start) > 8)
				gen_loop(g, 4 + rnd(g, 24));
			else
				gen_alu(g);
		} else if (pick < 94) {
			gen_helper_call(g);
		} else {
			if (g->cur_func + 1 < g->nfuncs)
				gen_local_call(g);
			else
				gen_atomic(g);
		}
	}
	bound[nb++] = g->n;
	for (size_t k = 0; k < nfix && !g->oom; k++) {
		size_t t = fix[k].item < nb ? fix[k].item : nb - 1;
		int64_t rel = (int64_t)bound[t] - (int64_t)fix[k].at - 1;
		struct isa_insn *in = &g->p[fix[k].at];
		if (in->code == ISA_OPC_JMP32_JA)
			in->imm = (int32_t)rel;
		else
			in->off = (int16_t)rel;
	}
}

static void gen_function(struct gen *g, int f, size_t budget)
{
	g->cur_func = f;
	g->func_start[f] = g->n;
	emit(g, I(ISA_OPC_ALU64_MOV_X, GEN_REG_MEM, 1, 0, 0));
	/* The memory's address must not flow into results: overwrite r1. */
	for (int r = 0; r <= GEN_REG_COUNTER; r++)
		if (f == 0 || r < 2 || r > 5) /* a callee keeps its arguments r2..r5 */
			emit_set_reg(g, r);
	for (int s = 0; s < PROGEN_STACK_USED / 8; s++)
		emit(g, I(ISA_OPC_ST_DW, ISA_REG_FP, 0, -8 * (s + 1), rand_imm(g)));
	gen_block(g, 0, budget);
	if (f == 0) {
		for (int r = 0; r <= GEN_REG_COUNTER; r++)
			emit(g, I(ISA_OPC_STX_DW, GEN_REG_MEM, r, PROGEN_REG_DUMP + 8 * r, 0));
		for (int s = 0; s < PROGEN_STACK_USED / 8; s++) {
			emit(g, I(ISA_OPC_LDX_DW, 1, ISA_REG_FP, -8 * (s + 1), 0));
			emit(g, I(ISA_OPC_STX_DW, GEN_REG_MEM, 1, PROGEN_STACK_DUMP + 8 * s, 0));
		}
	}
	emit(g, I(ISA_OPC_JMP_EXIT, 0, 0, 0, 0));
}

size_t progen_generate(uint64_t seed, const struct progen_cfg *cfg, struct isa_insn **out)
{
	struct gen g = {.rng = seed, .cfg = cfg};
	int maxf = cfg->max_funcs < 1 ? 1 : cfg->max_funcs > GEN_MAX_FUNCS ? GEN_MAX_FUNCS
									     : cfg->max_funcs;

	g.nfuncs = 1 + (int)rnd(&g, (uint32_t)maxf);
	size_t per = cfg->target_insns / (size_t)g.nfuncs;
	for (int f = 0; f < g.nfuncs; f++)
		gen_function(&g, f, per > 30 ? per - 30 : 8);
	for (size_t k = 0; k < g.ncalls && !g.oom; k++)
		g.p[g.calls[k].at].imm =
			(int32_t)((int64_t)g.func_start[g.calls[k].item] - (int64_t)g.calls[k].at - 1);
	free(g.calls);
	if (g.oom) {
		free(g.p);
		return 0;
	}
	*out = g.p;
	return g.n;
}
