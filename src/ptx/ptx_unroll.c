/* SPDX-License-Identifier: MIT */
/*
 * ptx_unroll.c - counted loops the injector may unroll: the shape test
 * and the code at their head (ptx_unroll.h says which loops and why; the
 * injector, ptx_inject.c, writes the turns and their probes).
 */
#include "ptx_unroll.h"

#include <stdlib.h>
#include <string.h>

#include "ptx_params.h"
#include "ptx_parse.h"

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

/* ---- the turns with their loads first (ptx_unroll_pipe_*) ---- */

/* A register the loop writes: its name and declared type. */
struct ptx_unroll_def {
	uint32_t tok;      /* a token naming it */
	char type[16];     /* ".b64", ".pred", ... */
	int cur;           /* its current fresh name, -1: its own */
};

/* One turn's instruction: its text (renamed) in the plan's buffer. */
struct ptx_unroll_inst {
	size_t off, len;
	uint32_t src, nsrc; /* fresh names it reads, in the plan's srcs */
	int loads;          /* part of the loads' part */
};

struct ptx_unroll_pipe {
	struct ptx_buf text;  /* the instructions' text, one after the other */
	struct ptx_buf decls; /* the fresh names' declarations, the final moves */
	size_t moves;         /* where the moves start in decls */
	struct ptx_unroll_inst *inst;
	size_t ninst;
	int *srcs, *producer; /* fresh name -> the instruction writing it */
	size_t nsrcs, nfresh;
};

/* The declared type of register r at f's scope (a `.reg .T %r<N>;` or
 * `.reg .T %a, %r;`) into type; 0 when not found there. */
static int ptx_unroll_reg_type(const struct ptx_module *m, const struct ptx_func *f, uint32_t r,
			       char *type, size_t size)
{
	const struct ptx_tok *rk = &m->toks[r];
	const char *rn = m->text + rk->off;

	for (size_t i = f->head + 1; i < f->end; i++) {
		const struct ptx_stmt *s = &m->stmts[i];
		if (s->kind != PTX_STMT_DECL || s->depth != 1 || s->ntok < 4 ||
		    !ptx_parse_tok_is(m, s->tok, ".reg") ||
		    m->toks[s->tok + 1].kind != PTX_TOK_DIRECTIVE ||
		    m->toks[s->tok + 2].kind != PTX_TOK_REG)
			continue;
		const struct ptx_tok *tk = &m->toks[s->tok + 1];
		for (uint32_t t = s->tok + 2; t < s->tok + s->ntok; t++) {
			const struct ptx_tok *k = &m->toks[t];
			if (k->kind != PTX_TOK_REG || k->len > rk->len ||
			    memcmp(m->text + k->off, rn, k->len))
				continue;
			int hit = k->len == rk->len;
			if (!hit && t + 3 < s->tok + s->ntok && ptx_parse_tok_is(m, t + 1, "<")) {
				/* %rd<110>: %rd0 .. %rd109 */
				const char *d = rn + k->len;
				size_t nd = rk->len - k->len;
				char num[16];
				int digits = nd > 0 && nd < sizeof(num);
				for (size_t j = 0; digits && j < nd; j++)
					digits = d[j] >= '0' && d[j] <= '9';
				if (digits) {
					memcpy(num, d, nd);
					num[nd] = 0;
					hit = strtoul(num, NULL, 10) <
					      strtoul(m->text + m->toks[t + 2].off, NULL, 10);
				}
			}
			if (hit && tk->len < size) {
				memcpy(type, m->text + tk->off, tk->len);
				type[tk->len] = 0;
				return 1;
			}
		}
	}
	return 0;
}

/* May an instruction of the loop move across the others: it is not
 * guarded, writes no memory (no store, atomic, reduction), does not
 * synchronise (barriers, fences, warp-synchronous instructions) and is not
 * an ordered load (volatile, relaxed, acquire, mmio: a later turn's load
 * must not pass it)? */
static int ptx_unroll_movable(const struct ptx_module *m, const struct ptx_stmt *s)
{
	static const char *const fixed[] = {"atom", "red", "st", "bar", "barrier", "membar", "fence",
					    "mbarrier", "cp", "tex", "suld", "sust", "vote", "shfl",
					    "match", "activemask", "redux", "elect", "nanosleep",
					    "prefetch", "discard", "applypriority", "createpolicy",
					    "griddepcontrol", "setmaxnreg", "wgmma", "tcgen05", NULL};
	const struct ptx_tok *k = &m->toks[s->opcode];
	const char *op = m->text + k->off;

	static const char *const ordered[] = {".sync", ".aligned", ".volatile", ".relaxed",
					      ".acquire", ".release", ".acq_rel", ".mmio", NULL};

	if (s->guard >= 0 || ptx_unroll_op_in(m, s, fixed))
		return 0;
	for (const char *const *o = ordered; *o; o++)
		if (memmem(op, k->len, *o, strlen(*o)))
			return 0;
	return !s->nopnd || m->opnds[s->opnd].kind != PTX_OPND_ADDR;
}

/* The loop's register named by token t, or -1. */
static int ptx_unroll_def_of(const struct ptx_module *m, const struct ptx_unroll_def *defs,
			     size_t n, uint32_t t)
{
	for (size_t i = 0; i < n; i++)
		if (ptx_unroll_tok_eq(m, defs[i].tok, t))
			return (int)i;
	return -1;
}

void ptx_unroll_pipe_free(struct ptx_unroll_pipe *p)
{
	if (!p)
		return;
	ptx_buf_free(&p->text);
	ptx_buf_free(&p->decls);
	free(p->inst);
	free(p->srcs);
	free(p->producer);
	free(p);
}

int ptx_unroll_pipe_plan(const struct ptx_module *m, const struct ptx_func *f,
			 const struct ptx_unroll_loop *l, unsigned k,
			 const struct ptx_unroll_site *sites, size_t nsites, const char *pfx,
			 struct ptx_unroll_pipe **out)
{
	size_t nbody = 0, ndefs = 0;
	struct ptx_unroll_def *defs = NULL;
	struct ptx_unroll_pipe *p = NULL;
	int ret = 0;

	*out = NULL;
	/* the registers the loop writes: every register of a destination */
	for (size_t t = l->label + 1; t <= l->setp; t++) {
		const struct ptx_stmt *s = &m->stmts[t];
		if (s->kind != PTX_STMT_INSN)
			continue;
		if (!ptx_unroll_movable(m, s))
			goto refused;
		nbody++;
		const struct ptx_opnd *o = s->nopnd ? &m->opnds[s->opnd] : NULL;
		for (uint32_t j = 0; o && j < o->ntok; j++) {
			uint32_t tk = o->tok + j;
			if (m->toks[tk].kind != PTX_TOK_REG || ptx_unroll_def_of(m, defs, ndefs, tk) >= 0)
				continue;
			void *nd = realloc(defs, (ndefs + 1) * sizeof(*defs));
			if (!nd) {
				ret = -1;
				goto refused;
			}
			defs = nd;
			struct ptx_unroll_def *d = &defs[ndefs++];
			*d = (struct ptx_unroll_def){.tok = tk, .cur = -1};
			if (!ptx_unroll_reg_type(m, f, tk, d->type, sizeof(d->type)))
				goto refused;
			unsigned bits = ptx_type_bits(d->type + 1, strlen(d->type) - 1);
			if (strcmp(d->type, ".pred") && bits < 16)
				goto refused;
		}
	}
	p = calloc(1, sizeof(*p));
	if (!p || !(p->inst = calloc(nbody * k, sizeof(*p->inst))) ||
	    !(p->producer = calloc(nbody * k * 4 + ndefs * k + 1, sizeof(int))) ||
	    !(p->srcs = calloc(nbody * k * 8 + 1, sizeof(int)))) {
		ret = -1;
		goto refused;
	}
	size_t cap_src = nbody * k * 8 + 1, cap_fresh = nbody * k * 4 + ndefs * k + 1;
	unsigned access = 0;
	for (unsigned c = 0; c < k; c++) {
		size_t site = 0;
		for (size_t t = l->label + 1; t <= l->setp; t++) {
			const struct ptx_stmt *s = &m->stmts[t];
			if (s->kind != PTX_STMT_INSN)
				continue;
			struct ptx_unroll_inst *in = &p->inst[p->ninst];
			uint32_t dst0 = s->nopnd ? m->opnds[s->opnd].tok : 0;
			uint32_t dst1 = s->nopnd ? dst0 + m->opnds[s->opnd].ntok : 0;
			int fresh[64];
			uint32_t nt = 0;
			/* what it reads: the names current before it */
			in->src = (uint32_t)p->nsrcs;
			for (uint32_t tk = s->tok; tk < s->tok + s->ntok && nt < 64; tk++, nt++) {
				int d = m->toks[tk].kind == PTX_TOK_REG ? ptx_unroll_def_of(m, defs, ndefs, tk) : -1;
				int is_dst = tk >= dst0 && tk < dst1;
				fresh[nt] = d < 0 || is_dst ? -1 : defs[d].cur;
				if (fresh[nt] >= 0) {
					if (p->nsrcs == cap_src)
						goto refused;
					p->srcs[p->nsrcs++] = fresh[nt];
				}
			}
			if (nt == 64)
				goto refused;
			in->nsrc = (uint32_t)(p->nsrcs - in->src);
			/* what it writes: new names */
			for (uint32_t tk = dst0; tk < dst1; tk++) {
				int d = m->toks[tk].kind == PTX_TOK_REG ? ptx_unroll_def_of(m, defs, ndefs, tk) : -1;
				if (d < 0)
					continue;
				if (p->nfresh == cap_fresh)
					goto refused;
				defs[d].cur = (int)p->nfresh;
				p->producer[p->nfresh] = (int)p->ninst;
				fresh[tk - s->tok] = (int)p->nfresh++;
				ptx_buf_printf(&p->decls, "\t.reg %s %%%s_v%d;\n", defs[d].type, pfx,
					       defs[d].cur);
			}
			in->off = p->text.len;
			/* a probed access: its address copied for the region first */
			if (site < nsites && sites[site].stmt == t) {
				const struct ptx_unroll_site *a = &sites[site++];
				int fb = fresh[a->base - s->tok];
				in->loads = 1;
				ptx_buf_printf(&p->text, "\tmov.u64 %%%s_a%u, ", pfx, access);
				if (fb >= 0)
					ptx_buf_printf(&p->text, "%%%s_v%d;\n", pfx, fb);
				else
					ptx_buf_printf(&p->text, "%.*s;\n", TOKF(m, a->base));
				if (a->off)
					ptx_buf_printf(&p->text, "\t%s.s64 %%%s_a%u, %%%s_a%u, %.*s;\n",
						       a->neg ? "sub" : "add", pfx, access, pfx, access,
						       TOKF(m, a->off));
				access++;
			}
			ptx_buf_printf(&p->text, "\t");
			for (uint32_t j = 0; j < s->ntok; j++) {
				const struct ptx_tok *tk = &m->toks[s->tok + j];
				if (j && tk->space)
					ptx_buf_printf(&p->text, " ");
				if (fresh[j] >= 0)
					ptx_buf_printf(&p->text, "%%%s_v%d", pfx, fresh[j]);
				else
					ptx_buf_append(&p->text, m->text + tk->off, tk->len);
			}
			ptx_buf_printf(&p->text, "\n");
			in->len = p->text.len - in->off;
			p->ninst++;
		}
		if (site != nsites)
			goto refused; /* the sites are not the loop's, in order */
	}
	/* the loads' part: the loads and whatever they need, back to front */
	for (size_t i = p->ninst; i-- > 0;)
		for (uint32_t j = 0; p->inst[i].loads && j < p->inst[i].nsrc; j++)
			p->inst[p->producer[p->srcs[p->inst[i].src + j]]].loads = 1;
	p->moves = p->decls.len;
	for (size_t d = 0; d < ndefs; d++) {
		const char *type = defs[d].type;
		unsigned bits = ptx_type_bits(type + 1, strlen(type) - 1);
		if (!strcmp(type, ".pred"))
			ptx_buf_printf(&p->decls, "\tmov.pred %.*s, %%%s_v%d;\n", TOKF(m, defs[d].tok),
				       pfx, defs[d].cur);
		else
			ptx_buf_printf(&p->decls, "\tmov.b%u %.*s, %%%s_v%d;\n", bits,
				       TOKF(m, defs[d].tok), pfx, defs[d].cur);
	}
	if (p->text.failed || p->decls.failed) {
		ret = -1;
		goto refused;
	}
	free(defs);
	*out = p;
	return 1;
refused:
	free(defs);
	ptx_unroll_pipe_free(p);
	return ret;
}

void ptx_unroll_pipe_loads(const struct ptx_unroll_pipe *p, struct ptx_buf *b)
{
	ptx_buf_printf(b, "\t{ // the turns renamed, their loads first\n");
	ptx_buf_append(b, p->decls.text, p->moves);
	for (size_t i = 0; i < p->ninst; i++)
		if (p->inst[i].loads)
			ptx_buf_append(b, p->text.text + p->inst[i].off, p->inst[i].len);
}

void ptx_unroll_pipe_rest(const struct ptx_unroll_pipe *p, struct ptx_buf *b)
{
	for (size_t i = 0; i < p->ninst; i++)
		if (!p->inst[i].loads)
			ptx_buf_append(b, p->text.text + p->inst[i].off, p->inst[i].len);
	ptx_buf_append(b, p->decls.text + p->moves, p->decls.len - p->moves);
	ptx_buf_printf(b, "\t}\n");
}
