/* SPDX-License-Identifier: MIT */
/*
 * ptx_unroll.c - counted loops the injector may unroll: the shape test
 * and the code at their head (ptx_unroll.h says which loops and why; the
 * injector, ptx_inject.c, writes the turns and their probes).
 */
#include "ptx_unroll.h"

#include <stdlib.h>
#include <string.h>

#include "ptx_parse.h"

#define TOKF(m, t) (int)(m)->toks[t].len, (m)->text + (m)->toks[t].off

static int ptx_unroll_tok_eq(const struct ptx_module *m, uint32_t a, uint32_t b)
{
	return m->toks[a].len == m->toks[b].len &&
	       !memcmp(m->text + m->toks[a].off, m->text + m->toks[b].off, m->toks[a].len);
}

/* Is instruction s's opcode one of names (NULL-ended), up to its first dot? */
static int ptx_unroll_op_in(const struct ptx_module *m, const struct ptx_stmt *s,
			    const char *const *names)
{
	const struct ptx_tok *k = &m->toks[s->opcode];
	const char *op = m->text + k->off, *dot = memchr(op, '.', k->len);
	size_t n = dot ? (size_t)(dot - op) : k->len;

	for (; *names; names++)
		if (strlen(*names) == n && !memcmp(op, *names, n))
			return 1;
	return 0;
}

/* The opcode is exactly `base.T` with T an integer type of 32 or 64 bits
 * (s, u or, with any_b, b): its width, else 0. */
static unsigned ptx_unroll_int_op(const struct ptx_module *m, const struct ptx_stmt *s,
				  const char *base, int any_b)
{
	const struct ptx_tok *k = &m->toks[s->opcode];
	const char *op = m->text + k->off;
	size_t n = strlen(base);

	if (k->len != n + 3 || memcmp(op, base, n))
		return 0;
	const char *t = op + n;
	if (!(t[0] == 's' || t[0] == 'u' || (any_b && t[0] == 'b')))
		return 0;
	return !memcmp(t + 1, "32", 2) ? 32 : !memcmp(t + 1, "64", 2) ? 64 : 0;
}

/* Operand i of s is one register token: that token, else UINT32_MAX. */
static uint32_t ptx_unroll_reg(const struct ptx_module *m, const struct ptx_stmt *s, uint32_t i)
{
	const struct ptx_opnd *o = &m->opnds[s->opnd + i];
	return o->ntok == 1 && m->toks[o->tok].kind == PTX_TOK_REG ? o->tok : UINT32_MAX;
}

/* Operand i of s as an integer constant ([-]decimal or hex, an optional
 * U), modulo 2^bits: 1 and *v, else 0. */
static int ptx_unroll_imm(const struct ptx_module *m, const struct ptx_stmt *s, uint32_t i,
			  unsigned bits, unsigned long long *v)
{
	const struct ptx_opnd *o = &m->opnds[s->opnd + i];
	uint32_t t = o->tok;
	int neg = o->ntok == 2 && ptx_parse_tok_is(m, t, "-");

	if (o->ntok != 1u + (unsigned)neg || m->toks[t + neg].kind != PTX_TOK_NUMBER)
		return 0;
	const struct ptx_tok *k = &m->toks[t + neg];
	char num[32], *end;
	size_t len = k->len;
	if (len >= sizeof(num))
		return 0;
	memcpy(num, m->text + k->off, len);
	num[len] = 0;
	if (len > 1 && num[len - 1] == 'U')
		num[--len] = 0;
	int hex = len > 2 && num[0] == '0' && (num[1] == 'x' || num[1] == 'X');
	if (!hex && len > 1 && num[0] == '0')
		return 0; /* octal or a float's 0f/0d: not a step NVVM writes */
	unsigned long long x = strtoull(num, &end, hex ? 16 : 10);
	if (*end)
		return 0;
	x = neg ? 0 - x : x;
	*v = bits == 64 ? x : x & ((1ull << bits) - 1);
	return 1;
}

/* Does instruction s write register r (name it in its first operand,
 * the destination; a store's address counts too, to be safe)? */
static int ptx_unroll_writes(const struct ptx_module *m, const struct ptx_stmt *s, uint32_t r)
{
	if (s->kind != PTX_STMT_INSN || !s->nopnd)
		return 0;
	const struct ptx_opnd *o = &m->opnds[s->opnd];
	for (uint32_t t = o->tok; t < o->tok + o->ntok; t++)
		if (m->toks[t].kind == PTX_TOK_REG && ptx_unroll_tok_eq(m, t, r))
			return 1;
	return 0;
}

/* The one statement of the loop body (from..to) that writes r: its
 * index; 0 when none or several do. */
static size_t ptx_unroll_writer(const struct ptx_module *m, size_t from, size_t to, uint32_t r)
{
	size_t w = 0;

	for (size_t t = from; t < to; t++)
		if (ptx_unroll_writes(m, &m->stmts[t], r)) {
			if (w)
				return 0;
			w = t;
		}
	return w;
}

/* `bra` or `bra.uni`: not an indirect or a predicated-call form. */
static int ptx_unroll_is_bra(const struct ptx_module *m, const struct ptx_stmt *s)
{
	return ptx_parse_tok_is(m, s->opcode, "bra") || ptx_parse_tok_is(m, s->opcode, "bra.uni");
}

/* The statement of f's body before i that is an instruction, skipping
 * .loc lines; 0 when another kind of statement comes first. */
static size_t ptx_unroll_prev_insn(const struct ptx_module *m, size_t i, size_t head)
{
	while (--i > head) {
		const struct ptx_stmt *s = &m->stmts[i];
		if (s->kind == PTX_STMT_INSN)
			return i;
		if (s->kind != PTX_STMT_DECL || !ptx_parse_tok_is(m, s->tok, ".loc"))
			return 0;
	}
	return 0;
}

/* An unguarded `add.T`/`sub.T` of 3 operands, T an integer of l->bits
 * (any width when l->bits is 0): 1 add, -1 sub, 0 neither. */
static int ptx_unroll_addsub(const struct ptx_module *m, const struct ptx_stmt *s,
			     const struct ptx_unroll_loop *l)
{
	unsigned bits = ptx_unroll_int_op(m, s, "add.", 0);
	int sign = bits ? 1 : (bits = ptx_unroll_int_op(m, s, "sub.", 0)) ? -1 : 0;

	if (!sign || s->guard >= 0 || s->nopnd != 3 || (l->bits && bits != l->bits))
		return 0;
	return sign;
}

/* The counter's update at statement a: `add CNT, CNT, STEP` or `sub`. */
static int ptx_unroll_step(const struct ptx_module *m, size_t a, struct ptx_unroll_loop *l)
{
	const struct ptx_stmt *s = &m->stmts[a];
	int sign = ptx_unroll_addsub(m, s, l);
	unsigned long long v;

	if (!sign)
		return 0;
	unsigned bits = ptx_unroll_int_op(m, s, sign > 0 ? "add." : "sub.", 0);
	uint32_t d = ptx_unroll_reg(m, s, 0), x = ptx_unroll_reg(m, s, 1);
	if (d == UINT32_MAX || x == UINT32_MAX || !ptx_unroll_tok_eq(m, d, x) ||
	    !ptx_unroll_imm(m, s, 2, bits, &v) || !v)
		return 0;
	unsigned long long mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
	if (sign < 0)
		v = (0 - v) & mask;
	l->add = a;
	l->cnt = d;
	l->bits = bits;
	l->down = (v >> (bits - 1)) & 1;
	l->step = l->down ? (0 - v) & mask : v;
	return 1;
}

/* Is operand i of s a constant, or a register the loop (from..to) does
 * not write? */
static int ptx_unroll_invariant(const struct ptx_module *m, const struct ptx_stmt *s, uint32_t i,
				size_t from, size_t to, unsigned bits)
{
	unsigned long long v;
	uint32_t r = ptx_unroll_reg(m, s, i);

	if (r == UINT32_MAX)
		return ptx_unroll_imm(m, s, i, bits, &v);
	for (size_t t = from; t < to; t++)
		if (ptx_unroll_writes(m, &m->stmts[t], r))
			return 0;
	return 1;
}

/*
 * What the test's X is, written once in the loop (from..to) at w: the
 * counter itself (`add X, X, STEP`), or `add X, CNT, INV` (either order)
 * with CNT updated once, earlier in the loop, and INV invariant.
 */
static int ptx_unroll_tested(const struct ptx_module *m, size_t from, size_t to, size_t w,
			     struct ptx_unroll_loop *l)
{
	const struct ptx_stmt *s = &m->stmts[w];

	if (ptx_unroll_step(m, w, l))
		return 1;
	if (ptx_unroll_addsub(m, s, l) != 1)
		return 0;
	for (uint32_t k = 1; k <= 2; k++) {
		uint32_t cnt = ptx_unroll_reg(m, s, k);
		size_t a = cnt == UINT32_MAX ? 0 : ptx_unroll_writer(m, from, to, cnt);
		if (!a || a >= w || !ptx_unroll_step(m, a, l) ||
		    ptx_unroll_int_op(m, s, "add.", 0) != l->bits ||
		    !ptx_unroll_invariant(m, s, 3 - k, from, to, l->bits))
			continue;
		l->inv = m->opnds[s->opnd + 3 - k].tok;
		l->ninv = m->opnds[s->opnd + 3 - k].ntok;
		return 1;
	}
	return 0;
}

/* The test at statement c: `setp.ne P, X, BOUND` (either order) with the
 * back edge taken on P, or setp.eq and the edge taken on !P; X as
 * ptx_unroll_tested says, BOUND invariant. */
static int ptx_unroll_test(const struct ptx_module *m, size_t from, size_t c,
			   const struct ptx_stmt *bra, struct ptx_unroll_loop *l)
{
	const struct ptx_stmt *s = &m->stmts[c];
	unsigned bits = ptx_unroll_int_op(m, s, "setp.ne.", 1);
	int eq = 0;

	if (!bits && (bits = ptx_unroll_int_op(m, s, "setp.eq.", 1)))
		eq = 1;
	if (!bits || s->guard >= 0 || s->nopnd != 3 || eq != bra->negate)
		return 0;
	uint32_t p = ptx_unroll_reg(m, s, 0);
	if (p == UINT32_MAX || !ptx_unroll_tok_eq(m, p, (uint32_t)bra->guard))
		return 0;
	for (uint32_t k = 1; k <= 2; k++) {
		uint32_t x = ptx_unroll_reg(m, s, k);
		size_t w = x == UINT32_MAX ? 0 : ptx_unroll_writer(m, from, c, x);
		*l = (struct ptx_unroll_loop){.label = l->label, .bra = l->bra};
		if (!w || ptx_unroll_writer(m, c, l->bra, x) || !ptx_unroll_tested(m, from, c, w, l) ||
		    bits != l->bits || !ptx_unroll_invariant(m, s, 3 - k, from, l->bra, bits))
			continue;
		l->setp = c;
		l->bound = m->opnds[s->opnd + 3 - k].tok;
		l->nbound = m->opnds[s->opnd + 3 - k].ntok;
		return 1;
	}
	return 0;
}

int ptx_unroll_loop_at(const struct ptx_module *m, const struct ptx_func *f, size_t i,
		       struct ptx_unroll_loop *l)
{
	static const char *const jumps[] = {"bra", "brx", "call", "ret", "exit", "trap", "brkpt",
					    NULL};
	const struct ptx_stmt *lab = &m->stmts[i];
	size_t j;

	*l = (struct ptx_unroll_loop){.label = i};
	if (lab->kind != PTX_STMT_LABEL || lab->depth != 1)
		return 0;
	/* a straight line up to the first jump, which must be the back edge */
	for (j = i + 1; j < f->end; j++) {
		const struct ptx_stmt *s = &m->stmts[j];
		if (s->kind == PTX_STMT_DECL && ptx_parse_tok_is(m, s->tok, ".loc"))
			continue;
		if (s->kind != PTX_STMT_INSN)
			return 0;
		if (ptx_unroll_op_in(m, s, jumps))
			break;
	}
	const struct ptx_stmt *bra = &m->stmts[j];
	if (j >= f->end || !ptx_unroll_is_bra(m, bra) || bra->guard < 0 || bra->nopnd != 1 ||
	    !ptx_unroll_tok_eq(m, m->opnds[bra->opnd].tok, lab->tok))
		return 0;
	l->bra = j;
	size_t c = ptx_unroll_prev_insn(m, j, i);
	return c && ptx_unroll_test(m, i + 1, c, bra, l);
}

int ptx_unroll_fits(const struct ptx_unroll_loop *l, unsigned k)
{
	unsigned long long max = l->bits == 64 ? ~0ull : (1ull << l->bits) - 1;
	return k && l->step <= max / k;
}

void ptx_unroll_head(const struct ptx_module *m, const struct ptx_unroll_loop *l, unsigned k,
		     const char *pfx, const char *rest, struct ptx_buf *b)
{
	unsigned w = l->bits;

	/* D = CNT + INV - BOUND counting down, its negation counting up */
	ptx_buf_printf(b, "\t{ // unrolled %u turns a pass: fewer to go for sure, the loop as written\n"
			  "\t.reg .b%u %%%s_ud;\n\t.reg .pred %%%s_uq;\n\tmov.b%u %%%s_ud, %.*s;\n",
		       k, w, pfx, pfx, w, pfx, TOKF(m, l->cnt));
	if (l->ninv) {
		ptx_buf_printf(b, "\tadd.s%u %%%s_ud, %%%s_ud, ", w, pfx, pfx);
		ptx_parse_print_toks(m, l->inv, l->ninv, b);
		ptx_buf_printf(b, ";\n");
	}
	ptx_buf_printf(b, "\tsub.s%u %%%s_ud, %%%s_ud, ", w, pfx, pfx);
	ptx_parse_print_toks(m, l->bound, l->nbound, b);
	ptx_buf_printf(b, ";\n");
	if (!l->down)
		ptx_buf_printf(b, "\tneg.s%u %%%s_ud, %%%s_ud;\n", w, pfx, pfx);
	ptx_buf_printf(b, "\tsetp.lt.u%u %%%s_uq, %%%s_ud, %llu;\n\t@%%%s_uq bra %s;\n\t}\n", w,
		       pfx, pfx, (unsigned long long)k * l->step, pfx, rest);
}

void ptx_unroll_branch(const struct ptx_module *m, const struct ptx_unroll_loop *l,
		       const char *to, struct ptx_buf *b)
{
	const struct ptx_stmt *s = &m->stmts[l->bra];

	ptx_buf_printf(b, "\t@%s%.*s %.*s %s;\n", s->negate ? "!" : "", TOKF(m, (uint32_t)s->guard),
		       TOKF(m, s->opcode), to);
}
