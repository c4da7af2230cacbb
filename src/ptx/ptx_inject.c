/* SPDX-License-Identifier: MIT */
/*
 * ptx_inject.c - a parsed module back into text, with probe calls in one
 * kernel (see ptx_inject.h for what goes where).
 *
 * Every addition is guarded by the instruction's own predicate (a call
 * may be predicated), so `@%p ret;` gets `@%p call EXIT;` and a predicated
 * load is probed only by the lanes that load.  A mem probe sits in a
 * scope of its own (its .param variables, or the pasted probe's registers
 * and labels, live there) and reads the address from a .b64 register
 * declared at the top of the kernel, computed just before the access: the
 * address expression means what it means to the instruction.  Called, the
 * probe comes before its access; pasted, after a run of them (below).
 *
 * Left as they are: .param/.local/.shared/.const accesses (not global
 * memory), the asynchronous and bulk copies (cp.async, cp.async.bulk,
 * st.async/red.async: they move data between shared and global memory
 * outside the thread's own loads and stores), and functions the kernel
 * calls (only the kernel's own statements are instrumented).
 */
#include "ptx_parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_agg.h"
#include "ptx_block.h"
#include "ptx_buf.h"
#include "ptx_params.h"
#include "ptx_unroll.h"

/* Accesses one region of inline mem probes takes at most (ptx_inject_mem_region). */
#define PTX_INJECT_MEM_RUN 8
/* Accesses the turns of an unrolled loop may have (their one region): a
 * warp's lanes, one access a lane; half that unless more than 4 turns are
 * asked (ptx_inject_unroll_find). */
#define PTX_INJECT_UNROLL_ACCESSES 32

/* Copies of the exit code a kernel gets at most where warps fall into a
 * ret (ptx_inject_falls_into_exit); the other rets branch to the exit
 * block. */
#define PTX_INJECT_EXIT_COPIES 2

/* A loop the injector unrolls (ptx_unroll.h), k turns a pass. */
struct ptx_inject_unrolled {
	struct ptx_unroll_loop l;
	unsigned k;
};

struct ptx_inject {
	const struct ptx_module *m;
	const struct ptx_inject_opts *o;
	const struct ptx_func *f;
	char pfx[64]; /* fresh name prefix, without '%' */
	struct ptx_buf b;
	struct err *e;
	size_t mem_probes, exit_probes;
	size_t exit_copies; /* of the exit code before a label (ptx_inject_falls_into_exit) */
	struct ptx_block blk; /* the kernel's block probes */
	int mem_inline; /* paste o->mem_code at each access, not a call */
	/* inline: one copy of mem_code a region, in a loop (else one an
	 * access); the run so far (its accesses' size | kind << 32) */
	int mem_run_loop;
	unsigned mem_run_len;
	unsigned long long mem_run_sk[PTX_INJECT_UNROLL_ACCESSES];
	/* the loops unrolled, in the kernel's order, and the next one's */
	struct ptx_inject_unrolled *unrolled;
	size_t nunrolled, next_unrolled;
	size_t unrolled_bytes; /* ptx_inject_opts.mem_unrolled_bytes */
	size_t agg_bytes;      /* ptx_inject_opts.mem_agg_bytes */
	/* per statement of the kernel (from its head): inside a loop (between
	 * a label and a later branch back to it), where a region elects by the
	 * lane mask (ptx_inject_opts.elect_sync); NULL: nowhere */
	unsigned char *in_loop;
	int mem_wait; /* a region's lanes wait for its runner (shfl.sync) */
	int mem_simt; /* a run's accesses probed by as many lanes at once (ptx_inject.h) */
	int mem_agg;  /* ... their reductions combined across the lanes (ptx_agg.h) */
	unsigned ver_major, ver_minor; /* the least .version to write */
};

/* A prefix that occurs nowhere in the module or in the extra code. */
static void ptx_inject_prefix(struct ptx_inject *in)
{
	size_t n = strlen("gxi");
	memcpy(in->pfx, "gxi", n + 1);
	while (n + 1 < sizeof(in->pfx) &&
	       (memmem(in->m->text, in->m->len, in->pfx, n) ||
		(in->o->extra && strstr(in->o->extra, in->pfx)) ||
		(in->o->entry_code && strstr(in->o->entry_code, in->pfx)) ||
		(in->o->mem_code && strstr(in->o->mem_code, in->pfx)) ||
		(in->o->mem_func && strstr(in->o->mem_func, in->pfx)) ||
		(in->o->exit_code && strstr(in->o->exit_code, in->pfx)) ||
		(in->o->block_entry_code && strstr(in->o->block_entry_code, in->pfx)) ||
		(in->o->block_exit_code && strstr(in->o->block_exit_code, in->pfx)))) {
		in->pfx[n++] = 'x';
		in->pfx[n] = 0;
	}
}

static int ptx_inject_tok_eq(const struct ptx_module *m, uint32_t t, const char *s, size_t n)
{
	return m->toks[t].len == n && !memcmp(m->text + m->toks[t].off, s, n);
}

/* Width in bits of a .b8/.u32/.f16x2/... type name (without the dot). */
/* State space of variable `name` declared at module level or in the
 * kernel: ".global", ".shared", ...; NULL when not declared there. */
static const char *ptx_inject_var_space(const struct ptx_inject *in, const char *name,
					size_t len)
{
	static const char *const spaces[] = {".global", ".shared", ".const", ".local", ".param",
					     ".tex"};
	const struct ptx_module *m = in->m;

	for (size_t i = 0; i < m->nstmt; i++) {
		const struct ptx_stmt *s = &m->stmts[i];
		if (s->kind == PTX_STMT_FUNC_HEAD && i != in->f->head) {
			for (size_t f = 0; f < m->nfunc; f++)
				if (m->funcs[f].head == i)
					i = m->funcs[f].end;
			continue;
		}
		if (s->kind != PTX_STMT_DIRECTIVE && s->kind != PTX_STMT_DECL)
			continue;
		const char *space = NULL;
		for (uint32_t t = s->tok; t < s->tok + s->ntok; t++) {
			const struct ptx_tok *k = &m->toks[t];
			for (size_t j = 0; !space && j < sizeof(spaces) / sizeof(spaces[0]); j++)
				if (ptx_inject_tok_eq(m, t, spaces[j], strlen(spaces[j])))
					space = spaces[j];
			if (k->kind == PTX_TOK_PUNCT)
				break;
			if (k->kind == PTX_TOK_NAME) {
				if (space && ptx_inject_tok_eq(m, t, name, len))
					return space;
				break;
			}
		}
	}
	return NULL;
}

static void ptx_inject_guard(struct ptx_inject *in, const struct ptx_stmt *s)
{
	const struct ptx_module *m = in->m;
	if (s->guard >= 0)
		ptx_buf_printf(&in->b, "@%s%.*s ", s->negate ? "!" : "", TOKF(m, (uint32_t)s->guard));
}

/*
 * Classify instruction s: 1 and size/kind when it is a global or generic
 * load, store, atomic or reduction; 0 when it is not one; <0 on an error.
 * *generic is set for accesses without a state space.
 */
static int ptx_inject_mem_op(struct ptx_inject *in, const struct ptx_stmt *s, unsigned *size,
			     enum ptx_mem_kind *kind, int *generic)
{
	const struct ptx_module *m = in->m;
	const struct ptx_tok *k = &m->toks[s->opcode];
	const char *op = m->text + k->off, *end = op + k->len, *p;
	size_t oplen = (size_t)((p = memchr(op, '.', k->len)) ? p - op : k->len);
	unsigned bits = 0, vec = 1;
	int global = 0;

	if (oplen == 2 && !memcmp(op, "ld", 2))
		*kind = PTX_MEM_LOAD;
	else if (oplen == 3 && !memcmp(op, "ldu", 3))
		*kind = PTX_MEM_LOAD;
	else if (oplen == 2 && !memcmp(op, "st", 2))
		*kind = PTX_MEM_STORE;
	else if ((oplen == 4 && !memcmp(op, "atom", 4)) || (oplen == 3 && !memcmp(op, "red", 3)))
		*kind = PTX_MEM_ATOMIC;
	else
		return 0;
	for (p = op + oplen; p < end;) {
		const char *part = ++p, *q = part;
		while (q < end && *q != '.')
			q++;
		size_t n = (size_t)(q - part);
		const char *colon = memchr(part, ':', n);
		size_t base = colon ? (size_t)(colon - part) : n;
#define IS(lit) (base == sizeof(lit) - 1 && !memcmp(part, lit, base))
		if (IS("shared") || IS("local") || IS("param") || IS("const") || IS("tex") ||
		    IS("async") || IS("bulk"))
			return 0;
		if (IS("global"))
			global = 1;
		else if (n == 2 && part[0] == 'v' && (part[1] == '2' || part[1] == '4' || part[1] == '8'))
			vec = (unsigned)(part[1] - '0');
		else if (ptx_type_bits(part, n))
			bits = ptx_type_bits(part, n);
#undef IS
		p = q;
	}
	if (!bits)
		return err_set(in->e, EINVAL, "line %u: memory instruction '%.*s' without a type "
			       "the injector knows", s->line, TOKF(m, s->opcode));
	*size = bits / 8 * vec;
	*generic = !global;
	return 1;
}

/* A global or generic access the injector probes: where its address is
 * ([base], [base+off], [base-off], [base+-off]) and what it moves. */
struct ptx_inject_site {
	uint32_t base, off; /* tokens; off 0: none */
	int neg;            /* base - off */
	int generic;        /* no state space: the probe tests isspacep.global */
	unsigned size;
	enum ptx_mem_kind kind;
};

/* 1 and *site when statement s is an access to probe; 0 when not; <0 on
 * an error (naming the line). */
static int ptx_inject_mem_site(struct ptx_inject *in, const struct ptx_stmt *s,
			       struct ptx_inject_site *site)
{
	const struct ptx_module *m = in->m;
	const struct ptx_opnd *addr = NULL;

	*site = (struct ptx_inject_site){.kind = PTX_MEM_LOAD};
	if (s->kind != PTX_STMT_INSN)
		return 0;
	int r = ptx_inject_mem_op(in, s, &site->size, &site->kind, &site->generic);
	if (r <= 0)
		return r;
	for (uint32_t i = 0; i < s->nopnd && !addr; i++)
		if (m->opnds[s->opnd + i].kind == PTX_OPND_ADDR)
			addr = &m->opnds[s->opnd + i];
	if (!addr)
		return err_set(in->e, EINVAL, "line %u: '%.*s' has no address operand", s->line,
			       TOKF(m, s->opcode));
	/* [base], [base+off], [base+-off], [base-off], [imm] */
	uint32_t t = addr->tok + 1, last = addr->tok + addr->ntok - 1;
	site->base = t;
	if (t < last && t + 1 < last && (ptx_parse_tok_is(m, t + 1, "+") ||
					 ptx_parse_tok_is(m, t + 1, "-"))) {
		site->neg = ptx_parse_tok_is(m, t + 1, "-");
		site->off = t + 2;
		if (ptx_parse_tok_is(m, site->off, "-")) {
			site->neg = !site->neg;
			site->off++;
		}
		if (site->off + 1 != last || m->toks[site->off].kind != PTX_TOK_NUMBER)
			site->off = 0, site->base = last; /* not understood: reported below */
	} else if (t + 1 != last) {
		site->base = last;
	}
	if (site->base == last || !ptx_parse_tok_is(m, last, "]"))
		return err_set(in->e, EINVAL, "line %u: address operand of '%.*s' not understood",
			       s->line, TOKF(m, s->opcode));
	const struct ptx_tok *bk = &m->toks[site->base];
	if (bk->kind == PTX_TOK_NAME) {
		const char *space = ptx_inject_var_space(in, m->text + bk->off, bk->len);
		if (site->generic && (!space || strcmp(space, ".global")))
			return 0; /* a generic access to a non-global variable */
	} else if (bk->kind != PTX_TOK_REG && bk->kind != PTX_TOK_NUMBER) {
		return err_set(in->e, EINVAL, "line %u: address operand of '%.*s' not understood",
			       s->line, TOKF(m, s->opcode));
	}
	return 1;
}

/* The access's address into register reg, each instruction with guard
 * s's (NULL: none). */
static void ptx_inject_mem_addr(struct ptx_inject *in, const struct ptx_inject_site *site,
				const struct ptx_stmt *s, const char *reg)
{
	const struct ptx_module *m = in->m;

	ptx_buf_printf(&in->b, "\t");
	if (s)
		ptx_inject_guard(in, s);
	ptx_buf_printf(&in->b, "mov.u64 %s, %.*s;\n", reg, TOKF(m, site->base));
	if (m->toks[site->base].kind == PTX_TOK_NAME && site->generic) {
		ptx_buf_printf(&in->b, "\t");
		if (s)
			ptx_inject_guard(in, s);
		ptx_buf_printf(&in->b, "cvta.global.u64 %s, %s;\n", reg, reg);
	}
	if (site->off) {
		ptx_buf_printf(&in->b, "\t");
		if (s)
			ptx_inject_guard(in, s);
		ptx_buf_printf(&in->b, "%s.s64 %s, %s, %.*s;\n", site->neg ? "sub" : "add", reg, reg,
			       TOKF(m, site->off));
	}
}

void ptx_inject_elect(struct ptx_buf *b, const char *mask, const char *tmp, const char *pred,
		      const char *label, int sync)
{
	if (sync) {
		ptx_buf_printf(b, "\tactivemask.b32 %s;\n\telect.sync _|%s, %s;\n\t@!%s bra %s;\n",
			       mask, pred, mask, pred, label);
		return;
	}
	/* the runner is the lane with no active lane below it */
	ptx_buf_printf(b, "\tactivemask.b32 %s;\n\tmov.u32 %s, %%lanemask_lt;\n"
			  "\tand.b32 %s, %s, %s;\n\tsetp.ne.u32 %s, %s, 0;\n\t@%s bra %s;\n",
		       mask, tmp, tmp, tmp, mask, pred, tmp, pred, label);
}

void ptx_inject_wait(struct ptx_buf *b, const char *mask, const char *tmp)
{
	ptx_buf_printf(b, "\tshfl.sync.idx.b32 %s, %s, 0, 31, %s;\n", tmp, mask, mask);
}

/*
 * Runs of accesses (the inline form).  The probe of an access is pasted
 * after it, from a copy of its address taken just before it (the access
 * may overwrite its own base register): the kernel's load is issued, not
 * waited for, and the probe runs while it is in flight.  Consecutive
 * unguarded .global accesses of one straight line of code -- no label,
 * branch, call, return, barrier, fence or warp-synchronous instruction
 * between them, so the same lanes make all of them -- share one region
 * after the last: one election and one wait (the convergence point, which
 * ptxas does not schedule across) for up to PTX_INJECT_MEM_RUN accesses,
 * its runner running mem_code once per access in their order (up to 8:
 * the loop form below shifts the addresses down each turn).  A guarded
 * access and a generic one are a run of their own, skipped by the lanes
 * that do not access global memory.
 */
enum ptx_inject_mem_class {
	MEM_OTHER, /* neither ends a run nor is probed */
	MEM_BREAK, /* a run's region must come before it */
	MEM_JOIN,  /* a probed access that may be in a run with others */
	MEM_ALONE, /* a probed access with a guard or a generic address */
};

/* Is the first dot-separated part of instruction s's opcode one of ops? */
static int ptx_inject_op_in(const struct ptx_module *m, const struct ptx_stmt *s,
			    const char *const *ops, size_t n_ops)
{
	const struct ptx_tok *k = &m->toks[s->opcode];
	const char *op = m->text + k->off, *dot = memchr(op, '.', k->len);
	size_t n = dot ? (size_t)(dot - op) : k->len;
	for (size_t i = 0; i < n_ops; i++)
		if (strlen(ops[i]) == n && !memcmp(op, ops[i], n))
			return 1;
	return 0;
}

/* What statement s is to runs of accesses (<0: an error, naming the line);
 * *site too for an access. */
static int ptx_inject_mem_class(struct ptx_inject *in, const struct ptx_stmt *s,
				struct ptx_inject_site *site)
{
	static const char *const breaks[] = {"bra", "brx", "call", "ret", "exit", "trap",
					     "brkpt", "bar", "barrier", "membar", "fence",
					     "mbarrier"};
	const struct ptx_module *m = in->m;

	if (s->kind == PTX_STMT_DECL)
		return MEM_OTHER;
	if (s->kind != PTX_STMT_INSN)
		return MEM_BREAK; /* a label, a scope's brace, the body's end */
	int r = ptx_inject_mem_site(in, s, site);
	if (r)
		return r < 0 ? r : s->guard >= 0 || site->generic ? MEM_ALONE : MEM_JOIN;
	if (ptx_inject_op_in(m, s, breaks, sizeof(breaks) / sizeof(breaks[0])))
		return MEM_BREAK;
	const struct ptx_tok *k = &m->toks[s->opcode];
	const char *op = m->text + k->off;
	return memmem(op, k->len, ".sync", 5) || memmem(op, k->len, ".aligned", 8) ? MEM_BREAK
										  : MEM_OTHER;
}

/* Does the run that access i (its j-th) is in end with it? */
static int ptx_inject_mem_run_ends(struct ptx_inject *in, size_t i, unsigned j, int alone)
{
	struct ptx_inject_site site;

	if (alone || j + 1 >= PTX_INJECT_MEM_RUN)
		return 1;
	for (size_t t = i + 1; t <= in->f->end; t++) {
		int c = ptx_inject_mem_class(in, &in->m->stmts[t], &site);
		if (c != MEM_OTHER)
			return c != MEM_JOIN; /* errors were reported by the first pass */
	}
	return 1;
}

int ptx_inject_forward_only(const char *code, struct err *e)
{
	struct ptx_tok *t;
	size_t n;
	int err = ptx_lex(code, strlen(code), &t, &n, e), forward = 1;

	if (err)
		return err;
	for (size_t i = 0; i < n && forward; i++) {
		const char *op = code + t[i].off, *dot = memchr(op, '.', t[i].len);
		size_t len = dot ? (size_t)(dot - op) : t[i].len;
		if (t[i].kind != PTX_TOK_NAME)
			continue;
		if ((len == 4 && !memcmp(op, "call", 4)) || (len == 3 && !memcmp(op, "brx", 3)) ||
		    (len == 3 && !memcmp(op, "ret", 3)) || (len == 4 && !memcmp(op, "exit", 4))) {
			forward = 0;
		} else if (len == 3 && !memcmp(op, "bra", 3) && i + 1 < n) {
			/* the label, later at this depth or at a shallower one */
			int depth = 0, floor = 0;
			forward = 0;
			for (size_t j = i + 2; j + 1 < n && !forward; j++) {
				char c = t[j].kind == PTX_TOK_PUNCT ? code[t[j].off] : 0;
				depth += (c == '{') - (c == '}');
				if (depth < floor)
					floor = depth;
				forward = depth == floor && t[j].len == t[i + 1].len &&
					  !memcmp(code + t[j].off, code + t[i + 1].off, t[j].len) &&
					  code[t[j + 1].off] == ':';
			}
		}
	}
	free(t);
	return forward;
}

/*
 * Which statements of function f are inside a loop: between a label and a
 * later `bra` to it (malloc'd, one byte a statement from f->head; NULL when
 * out of memory).  elect.sync is warp-synchronous: ptxas neither unrolls a
 * loop around it nor moves the loop's loads across it (reduce's 4 loads a
 * turn: 16 in flight unrolled, 4 with it; its empty probe 0.96x -> 1.38x
 * on the H200), so a region there elects by the lane mask.
 */
static unsigned char *ptx_inject_loops(const struct ptx_module *m, const struct ptx_func *f)
{
	size_t n = f->end - f->head + 1;
	int *depth = calloc(n + 1, sizeof(*depth));
	unsigned char *in = calloc(n, 1);
	if (!depth || !in) {
		free(depth);
		free(in);
		return NULL;
	}
	for (size_t j = f->head; j <= f->end; j++) {
		const struct ptx_stmt *s = &m->stmts[j];
		const struct ptx_tok *op = &m->toks[s->opcode];
		if (s->kind != PTX_STMT_INSN || op->len < 3 || memcmp(m->text + op->off, "bra", 3) ||
		    (op->len > 3 && m->text[op->off + 3] != '.') || s->nopnd < 1)
			continue;
		const struct ptx_tok *to = &m->toks[m->opnds[s->opnd].tok];
		for (size_t k = f->head; k < j; k++) { /* a label before it: a loop */
			const struct ptx_stmt *l = &m->stmts[k];
			const struct ptx_tok *name = &m->toks[l->tok];
			if (l->kind == PTX_STMT_LABEL && name->len == to->len &&
			    !memcmp(m->text + name->off, m->text + to->off, to->len)) {
				depth[k - f->head]++;
				depth[j - f->head]--;
				break;
			}
		}
	}
	for (size_t i = 0, d = 0; i < n; i++) {
		d += (size_t)depth[i];
		in[i] = d > 0;
	}
	free(depth);
	return in;
}

/*
 * The lanes' form of a region of k > 1 accesses (in->mem_simt): the lane
 * of rank j among the active ones runs mem_code once for access j, with
 * its own copy of that access's address (any lane's stands for the
 * warp's), all of them at once: one pass of the program's instructions
 * where the runner ran k one after the other.  Size and kind an immediate
 * where the run's accesses all have the same, else chosen by the rank like
 * the address.  A warp of fewer active lanes n than accesses goes round
 * again (access j + n).
 */
static void ptx_inject_mem_lanes(struct ptx_inject *in, unsigned k, int same)
{
	const char *P = in->pfx;
	const unsigned long long *sk = in->mem_run_sk;
	char pred[80];

	snprintf(pred, sizeof(pred), "%%%s_p", P);
	ptx_buf_printf(&in->b, "\t{ // mem probes of %u accesses, once per warp, by %u lanes at once\n"
			       "\t.reg .b32 %s, %%%s_t, %%%s_j, %%%s_n;\n\t.reg .pred %s;\n"
			       "\t.reg .b64 %s, %s;\n"
			       "\tactivemask.b32 %s;\n\tmov.u32 %%%s_t, %%lanemask_lt;\n"
			       "\tand.b32 %%%s_t, %%%s_t, %s;\n\tpopc.b32 %%%s_j, %%%s_t;\n"
			       "\tpopc.b32 %%%s_n, %s;\n",
		       k, k, PTX_MEM_MASK_REG, P, P, P, pred, PTX_MEM_ADDR_REG, PTX_MEM_SK_REG,
		       PTX_MEM_MASK_REG, P, P, P, PTX_MEM_MASK_REG, P, P, P, PTX_MEM_MASK_REG);
	ptx_buf_printf(&in->b, "%s_l:\n\tsetp.ge.u32 %s, %%%s_j, %u;\n\t@%s bra %s_d;\n"
			       "\tmov.b64 %s, %%%s_a0;\n\tmov.b64 %s, 0x%llx;\n",
		       P, pred, P, k, pred, P, PTX_MEM_ADDR_REG, P, PTX_MEM_SK_REG, sk[0]);
	for (unsigned j = 1; j < k; j++) {
		ptx_buf_printf(&in->b, "\tsetp.eq.u32 %s, %%%s_j, %u;\n\t@%s mov.b64 %s, %%%s_a%u;\n",
			       pred, P, j, pred, PTX_MEM_ADDR_REG, P, j);
		if (!same)
			ptx_buf_printf(&in->b, "\t@%s mov.b64 %s, 0x%llx;\n", pred, PTX_MEM_SK_REG,
				       sk[j]);
	}
	if (in->mem_agg && k >= in->o->mem_agg) {
		size_t at = in->b.len;
		ptx_agg_reductions(&in->b, in->o->mem_code, P, NULL);
		if (!in->b.failed) /* the combined form is never shorter */
			in->agg_bytes += in->b.len - at - strlen(in->o->mem_code);
	} else {
		ptx_buf_printf(&in->b, "%s", in->o->mem_code);
	}
	ptx_buf_printf(&in->b, "\tadd.u32 %%%s_j, %%%s_j, %%%s_n;\n\tbra %s_l;\n", P, P, P, P);
	ptx_buf_printf(&in->b, "%s_d:\n", P);
	if (in->mem_wait) {
		char tmp[80];
		snprintf(tmp, sizeof(tmp), "%%%s_t", P);
		ptx_inject_wait(&in->b, PTX_MEM_MASK_REG, tmp);
	}
	ptx_buf_printf(&in->b, "\t}\n");
}

/*
 * The region of the run that access s (the j-th of its run, j + 1 = k
 * accesses) ends: elected once, the runner runs o->mem_code for each
 * access in turn, in a scope holding it in the registers mem_code reads
 * (an immediate size and kind, for ptxas to fold), then the lanes wait
 * for it.  mem_code's labels and registers are the scope's own (PTX
 * scoping), so every region can have copies.  With mem_run_loop, a run
 * of several accesses has one copy in a loop over them (the addresses
 * shifted down each turn; size and kind an immediate where the run's
 * accesses all have the same), a fraction of the code for ptxas to
 * compile.
 */
static void ptx_inject_mem_region(struct ptx_inject *in, const struct ptx_stmt *s,
				  const struct ptx_inject_site *site, unsigned k)
{
	const struct ptx_module *m = in->m;
	const char *P = in->pfx;
	size_t n = in->mem_probes - 1;
	int skip = s->guard >= 0 || site->generic, loop = k > 1 && in->mem_run_loop;
	unsigned long long *sk = in->mem_run_sk;
	int same = 1;
	char mask_tmp[80], pred[80], done[80];

	for (unsigned j = 1; j < k; j++)
		same &= sk[j] == sk[0];
	if (s->guard >= 0)
		ptx_buf_printf(&in->b, "\t@%s%.*s bra %s_m%zu;\n", s->negate ? "" : "!",
			       TOKF(m, (uint32_t)s->guard), P, n);
	if (site->generic)
		ptx_buf_printf(&in->b, "\tisspacep.global %%%s_g, %%%s_a0;\n\t@!%%%s_g bra %s_m%zu;\n",
			       P, P, P, P, n);
	snprintf(mask_tmp, sizeof(mask_tmp), "%%%s_t", P);
	snprintf(pred, sizeof(pred), "%%%s_p", P);
	snprintf(done, sizeof(done), "%s_d", P);
	if (k > 1 && in->mem_simt) {
		ptx_inject_mem_lanes(in, k, same);
		if (skip)
			ptx_buf_printf(&in->b, "%s_m%zu:\n", P, n);
		return;
	}
	ptx_buf_printf(&in->b, "\t{ // mem probes of %u access%s, once per warp\n"
			       "\t.reg .b32 %s, %s;\n\t.reg .pred %s;\n\t.reg .b64 %s, %s;\n",
		       k, k > 1 ? "es" : "", PTX_MEM_MASK_REG, mask_tmp, pred, PTX_MEM_ADDR_REG,
		       PTX_MEM_SK_REG);
	size_t at = (size_t)(s - m->stmts) - in->f->head;
	ptx_inject_elect(&in->b, PTX_MEM_MASK_REG, mask_tmp, pred, done,
			 in->o->elect_sync && !(in->in_loop && in->in_loop[at]));
	if (loop) {
		if (!same) {
			ptx_buf_printf(&in->b, "\t.reg .b64 %%%s_s<%u>;\n", P, k);
			for (unsigned j = 0; j < k; j++)
				ptx_buf_printf(&in->b, "\tmov.b64 %%%s_s%u, 0x%llx;\n", P, j, sk[j]);
		}
		ptx_buf_printf(&in->b, "\t.reg .b32 %%%s_n;\n\tmov.u32 %%%s_n, %u;\n"
				       "%s_l:\n\t.pragma \"nounroll\";\n\tmov.b64 %s, %%%s_a0;\n",
			       P, P, k, P, PTX_MEM_ADDR_REG, P);
		if (same)
			ptx_buf_printf(&in->b, "\tmov.b64 %s, 0x%llx;\n", PTX_MEM_SK_REG, sk[0]);
		else
			ptx_buf_printf(&in->b, "\tmov.b64 %s, %%%s_s0;\n", PTX_MEM_SK_REG, P);
		ptx_buf_printf(&in->b, "%s", in->o->mem_code);
		for (unsigned j = 0; j + 1 < k; j++) {
			ptx_buf_printf(&in->b, "\tmov.b64 %%%s_a%u, %%%s_a%u;\n", P, j, P, j + 1);
			if (!same)
				ptx_buf_printf(&in->b, "\tmov.b64 %%%s_s%u, %%%s_s%u;\n", P, j, P,
					       j + 1);
		}
		ptx_buf_printf(&in->b, "\tsub.u32 %%%s_n, %%%s_n, 1;\n\tsetp.ne.u32 %s, %%%s_n, 0;\n"
				       "\t@%s bra %s_l;\n",
			       P, P, pred, P, pred, P);
	} else {
		for (unsigned j = 0; j < k; j++)
			ptx_buf_printf(&in->b, "\tmov.b64 %s, %%%s_a%u;\n\tmov.b64 %s, 0x%llx;\n%s",
				       PTX_MEM_ADDR_REG, P, j, PTX_MEM_SK_REG, sk[j],
				       in->o->mem_code);
	}
	ptx_buf_printf(&in->b, "%s:\n", done);
	if (in->mem_wait)
		ptx_inject_wait(&in->b, PTX_MEM_MASK_REG, mask_tmp);
	ptx_buf_printf(&in->b, "\t}\n");
	if (skip)
		ptx_buf_printf(&in->b, "%s_m%zu:\n", P, n);
}

/*
 * Before memory instruction s, if it is a global or generic access: its
 * address copied for its run's region (inline), or `call SYM, (addr,
 * size, kind);`.
 */
static int ptx_inject_mem(struct ptx_inject *in, const struct ptx_stmt *s)
{
	struct ptx_inject_site site;
	int r = ptx_inject_mem_site(in, s, &site);

	if (r <= 0)
		return r;
	in->mem_probes++;
	if (in->mem_inline) {
		unsigned j = in->mem_run_len++;
		in->mem_run_sk[j] = (unsigned long long)site.size |
				    (unsigned long long)site.kind << 32;
		char reg[80];
		snprintf(reg, sizeof(reg), "%%%s_a%u", in->pfx, j);
		ptx_inject_mem_addr(in, &site, NULL, reg);
		return 0;
	}
	const char *P = in->pfx;
	char reg[80];
	snprintf(reg, sizeof(reg), "%%%s_a", P);
	ptx_buf_printf(&in->b, "\t{\n\t.param .b64 %s_a;\n\t.param .b32 %s_s;\n"
			       "\t.param .b32 %s_k;\n", P, P, P);
	ptx_inject_mem_addr(in, &site, s, reg);
	ptx_buf_printf(&in->b, "\tst.param.b64 [%s_a], %%%s_a;\n\tst.param.b32 [%s_s], %u;\n"
			       "\tst.param.b32 [%s_k], %d;\n\t", P, P, P, site.size, P,
		       (int)site.kind);
	ptx_inject_guard(in, s);
	ptx_buf_printf(&in->b, "call %s, (%s_a, %s_s, %s_k);\n\t}\n", in->o->mem_sym, P, P, P);
	return 0;
}

/* After statement s (inline form): its run's region, where s is the run's
 * last access. */
static int ptx_inject_mem_after(struct ptx_inject *in, const struct ptx_stmt *s)
{
	struct ptx_inject_site site;
	size_t i = (size_t)(s - in->m->stmts);
	int c = ptx_inject_mem_class(in, s, &site);

	if (c < 0)
		return c;
	if (c != MEM_JOIN && c != MEM_ALONE)
		return 0;
	unsigned j = in->mem_run_len - 1;
	if (!ptx_inject_mem_run_ends(in, i, j, c == MEM_ALONE))
		return 0;
	ptx_inject_mem_region(in, s, &site, j + 1);
	in->mem_run_len = 0;
	return 0;
}

/*
 * Loop u's turns with their loads first (ptx_unroll_pipe_plan), the region
 * of their accesses between the loads' part and the rest, where the loop
 * allows it and o->mem_unroll_in_order does not say otherwise: 1 done, 0
 * not (the turns go in order), <0 an error.
 */
static int ptx_inject_unrolled_pipe(struct ptx_inject *in, const struct ptx_inject_unrolled *u)
{
	const struct ptx_module *m = in->m;
	struct ptx_unroll_site sites[PTX_INJECT_UNROLL_ACCESSES];
	struct ptx_inject_site site[PTX_INJECT_UNROLL_ACCESSES];
	const struct ptx_stmt *last = NULL;
	struct ptx_unroll_pipe *p;
	size_t n = 0;

	if (in->o->mem_unroll_in_order)
		return 0;
	for (size_t t = u->l.label + 1; t <= u->l.setp; t++) {
		const struct ptx_stmt *s = &m->stmts[t];
		int r = ptx_inject_mem_site(in, s, &site[n]);
		if (r < 0)
			return r;
		if (!r)
			continue;
		if (site[n].kind != PTX_MEM_LOAD)
			return 0;
		sites[n] = (struct ptx_unroll_site){t, site[n].base, site[n].off, site[n].neg};
		last = s;
		n++;
	}
	int r = ptx_unroll_pipe_plan(m, in->f, &u->l, u->k, sites, n, in->pfx, &p);
	if (r <= 0)
		return r < 0 ? err_set(in->e, ENOMEM, "out of memory") : 0;
	for (unsigned c = 0; c < u->k; c++)
		for (size_t i = 0; i < n; i++) {
			in->mem_run_sk[in->mem_run_len++] = (unsigned long long)site[i].size |
							   (unsigned long long)site[i].kind << 32;
			in->mem_probes++;
		}
	size_t start = in->b.len;
	ptx_unroll_pipe_loads(p, &in->b);
	in->unrolled_bytes += in->b.len - start;
	ptx_inject_mem_region(in, last, &site[n - 1], in->mem_run_len);
	in->mem_run_len = 0;
	start = in->b.len;
	ptx_unroll_pipe_rest(p, &in->b);
	in->unrolled_bytes += in->b.len - start;
	ptx_unroll_pipe_free(p);
	return 1;
}

/*
 * At the label of loop u (the n-th unrolled; ptx_unroll.h): the test that
 * sends a pass of fewer than u->k sure turns to the loop as written
 * (PFX_uN_o), then u->k turns of its body, counter and test -- their
 * loads first where ptx_inject_unrolled_pipe can, else in order with
 * their accesses one run and one region after the last -- and the back
 * edge to the label; the loop's end (PFX_uN_x) when done.  The turns
 * compute what the loop's next u->k trips do: the same trips.
 */
static int ptx_inject_unrolled_turns(struct ptx_inject *in, size_t n,
				     const struct ptx_inject_unrolled *u)
{
	const struct ptx_module *m = in->m;
	const struct ptx_stmt *last = NULL;
	struct ptx_inject_site site, last_site;
	char to[96];

	snprintf(to, sizeof(to), "%s_u%zu_o", in->pfx, n);
	ptx_unroll_head(m, &u->l, u->k, in->pfx, to, &in->b);
	int err = ptx_inject_unrolled_pipe(in, u);
	if (err < 0)
		return err;
	size_t start = in->b.len;
	for (unsigned c = 0; c < u->k && !err; c++) {
		for (size_t t = u->l.label + 1; t <= u->l.setp; t++) {
			const struct ptx_stmt *s = &m->stmts[t];
			int r = ptx_inject_mem_site(in, s, &site);
			if (r < 0)
				return r;
			if (r) { /* its address copied, into the run */
				if ((r = ptx_inject_mem(in, s)))
					return r;
				last = s;
				last_site = site;
			}
			ptx_parse_print_stmt(m, s, &in->b);
		}
	}
	if (!err) { /* in order: the region after the turns */
		in->unrolled_bytes += in->b.len - start;
		ptx_inject_mem_region(in, last, &last_site, in->mem_run_len);
		in->mem_run_len = 0;
	}
	snprintf(to, sizeof(to), "%.*s", TOKF(m, m->stmts[u->l.label].tok));
	ptx_unroll_branch(m, &u->l, to, &in->b);
	ptx_buf_printf(&in->b, "\tbra %s_u%zu_x;\n%s_u%zu_o:\n", in->pfx, n, in->pfx, n);
	return 0;
}

/* At the back edge of loop u (the n-th unrolled): the loop as written
 * turns back to itself, not to the unrolled turns' test, and ends. */
static void ptx_inject_unrolled_end(struct ptx_inject *in, size_t n,
				    const struct ptx_inject_unrolled *u)
{
	char to[96];

	snprintf(to, sizeof(to), "%s_u%zu_o", in->pfx, n);
	ptx_unroll_branch(in->m, &u->l, to, &in->b);
	ptx_buf_printf(&in->b, "%s_u%zu_x:\n", in->pfx, n);
}

/*
 * Does code store only to its own thread's memory (st.local, st.param),
 * its other writes atomics and reductions?  Then lanes that run it at once
 * cannot lose each other's updates (the lanes' form of a run).
 */
static int ptx_inject_stores_local(const char *code)
{
	for (const char *p = code; (p = strstr(p, "st.")); p += 3) {
		int word = p == code || !(p[-1] == '_' || p[-1] == '.' || (p[-1] >= 'a' && p[-1] <= 'z') ||
					  (p[-1] >= 'A' && p[-1] <= 'Z') || (p[-1] >= '0' && p[-1] <= '9') ||
					  p[-1] == '%');
		if (word && strncmp(p, "st.local", 8) && strncmp(p, "st.param", 8))
			return 0;
	}
	return 1;
}

/*
 * The loops to unroll (in->unrolled; ptx_unroll.h): counted loops of
 * o->mem_unroll turns a pass (halved until their probed accesses are at
 * most 16, or PTX_INJECT_UNROLL_ACCESSES where more than 4 turns are asked,
 * and K * C fits the counter; at least 2),
 * whose probed accesses are
 * all unguarded .global ones (one run, one region after the turns' last
 * access) and where no block probe is sunk.  0, or <0 out of memory.
 */
static int ptx_inject_unroll_find(struct ptx_inject *in)
{
	const struct ptx_module *m = in->m;
	struct ptx_inject_site site;
	struct ptx_unroll_loop l;
	size_t cap = 0;
	unsigned most = in->o->mem_unroll > 4 ? PTX_INJECT_UNROLL_ACCESSES
					       : PTX_INJECT_UNROLL_ACCESSES / 2;

	for (size_t i = in->f->head + 1; i < in->f->end; i++) {
		if (!ptx_unroll_loop_at(m, in->f, i, &l))
			continue;
		unsigned n = 0, k = in->o->mem_unroll;
		int ok = !(in->blk.sink_at >= l.label && in->blk.sink_at <= l.bra);
		for (size_t t = l.label + 1; t < l.bra && ok; t++) {
			int c = ptx_inject_mem_class(in, &m->stmts[t], &site);
			ok = c == MEM_OTHER || c == MEM_JOIN;
			n += c == MEM_JOIN;
		}
		while (k >= 2 && (k * n > most || !ptx_unroll_fits(&l, k)))
			k /= 2;
		if (ok && n && k >= 2) {
			if (in->nunrolled == cap) {
				cap = cap ? 2 * cap : 4;
				void *p = realloc(in->unrolled, cap * sizeof(*in->unrolled));
				if (!p)
					return err_set(in->e, ENOMEM, "out of memory");
				in->unrolled = p;
			}
			in->unrolled[in->nunrolled++] = (struct ptx_inject_unrolled){l, k};
		}
		i = l.bra;
	}
	return 0;
}

static unsigned ptx_inject_target_sm(const struct ptx_inject *in);

/*
 * Which form the kernel's mem probes take (in->mem_inline): inline when
 * o->mem_code is given and its copies, one per region (one per access
 * without mem_run_loop), come to at most o->mem_inline_max bytes.
 */
static int ptx_inject_mem_form(struct ptx_inject *in)
{
	const struct ptx_module *m = in->m;
	struct ptx_inject_site site;
	size_t sites = 0, regions = 0, copies;
	unsigned run = 0;

	for (size_t i = in->f->head + 1; i <= in->f->end; i++) {
		int c = ptx_inject_mem_class(in, &m->stmts[i], &site);
		if (c < 0)
			return c;
		if (c == MEM_BREAK || c == MEM_ALONE || (c == MEM_JOIN && run == PTX_INJECT_MEM_RUN))
			run = 0;
		if (c == MEM_JOIN || c == MEM_ALONE) {
			sites++;
			regions += !run;
			run = c == MEM_JOIN ? run + 1 : 0;
		}
	}
	if (in->o->mem_sites)
		*in->o->mem_sites = sites;
	if (in->o->mem_regions)
		*in->o->mem_regions = regions;
	if (!in->o->mem_code)
		return 0;
	int forward = ptx_inject_forward_only(in->o->mem_code, in->e);
	if (forward < 0)
		return forward;
	/* lanes only for a program with an effect (an atomic or reduction):
	 * ptxas deletes the runner's region of one without, not the lanes'
	 * (reduce's empty probe 1.45x by lanes, 1.00x by the runner) */
	in->mem_simt = in->o->mem_simt && forward && ptx_inject_stores_local(in->o->mem_code) &&
		       (strstr(in->o->mem_code, "red.") || strstr(in->o->mem_code, "atom."));
	in->mem_agg = in->mem_simt && in->o->mem_agg && ptx_inject_target_sm(in) >= 70;
	/* a copy an access where they fit, else a copy a region, else called;
	 * with the lanes' form, a copy a region */
	size_t len = strlen(in->o->mem_code), max = in->o->mem_sym ? in->o->mem_inline_max : SIZE_MAX;
	in->mem_run_loop = in->o->mem_run_loop || (sites && len > max / sites);
	copies = in->mem_run_loop || in->mem_simt ? regions : sites;
	in->mem_inline = !in->o->mem_sym || (max && (!copies || len <= max / copies));
	in->mem_wait = in->o->mem_wait ? in->o->mem_wait > 0 : !forward;
	/* unrolled loops where a region has one copy of mem_code, and their
	 * regions' copies fit too */
	if (in->o->mem_unroll && in->mem_inline && (in->mem_run_loop || in->mem_simt)) {
		int err = ptx_inject_unroll_find(in);
		if (err)
			return err;
		if (in->o->mem_sym && in->nunrolled && (!max || len > max / (copies + in->nunrolled)))
			in->nunrolled = 0;
		if (in->o->mem_regions)
			*in->o->mem_regions += in->nunrolled;
	}
	return 0;
}

static int ptx_inject_is_exit(const struct ptx_module *m, const struct ptx_stmt *s)
{
	static const char *const exits[] = {"ret", "exit"};
	return ptx_inject_op_in(m, s, exits, sizeof(exits) / sizeof(exits[0]));
}

/*
 * The kernel's header, with the launch id parameter appended when asked
 * (o->launch_param) and it fits, and PTX_LAUNCH_ID_REG declared from it.
 * Unused, the register costs nothing (ptxas drops it); used, it is a
 * constant-bank read.
 */
/* The module's target (sm_NN), raised to sm_90 for elect.sync. */
static unsigned ptx_inject_target_sm(const struct ptx_inject *in)
{
	unsigned sm = (unsigned)atoi(in->m->target + 3);
	return in->o->elect_sync && sm < PTX_ELECT_SYNC_SM ? PTX_ELECT_SYNC_SM : sm;
}

/* Tokens t..t+n of the kernel's header; in the flat twin its name has
 * PTX_FLAT_SUFFIX. */
static void ptx_inject_head_toks(struct ptx_inject *in, uint32_t t, uint32_t n)
{
	const struct ptx_module *m = in->m;
	uint32_t name = in->f->name;

	if (!in->blk.flat || name < t || name >= t + n) {
		ptx_parse_print_toks(m, t, n, &in->b);
		return;
	}
	ptx_parse_print_toks(m, t, name + 1 - t, &in->b);
	ptx_buf_printf(&in->b, "%s", PTX_FLAT_SUFFIX);
	if (name + 1 < t + n && m->toks[name + 1].space)
		ptx_buf_printf(&in->b, " ");
	ptx_parse_print_toks(m, name + 1, t + n - name - 1, &in->b);
}

static int ptx_inject_head(struct ptx_inject *in)
{
	const struct ptx_module *m = in->m;
	const struct ptx_stmt *h = &m->stmts[in->f->head];
	struct ptx_launch_param *lp = in->o->launch_param;
	struct ptx_param_layout l;
	struct err pe = {{0}};

	if (!lp) {
		ptx_inject_head_toks(in, h->tok, h->ntok);
		ptx_buf_printf(&in->b, "\n");
		return 0;
	}
	*lp = (struct ptx_launch_param){0};
	if (memmem(m->text, m->len, PTX_LAUNCH_ID_NAME, strlen(PTX_LAUNCH_ID_NAME)))
		return err_set(in->e, EEXIST, "the module uses the name '%s', which gpuext reserves",
			       PTX_LAUNCH_ID_NAME);
	unsigned maj = m->ver_major, min = m->ver_minor, sm = ptx_inject_target_sm(in);
	if (in->ver_major > maj || (in->ver_major == maj && in->ver_minor > min))
		maj = in->ver_major, min = in->ver_minor;
	size_t limit = (maj > 8 || (maj == 8 && min >= 1)) && sm >= 70 ? 32764 : 4096;
	if (ptx_param_layout(m, in->f, &l, &pe)) {
		lp->why = "its parameter list is not understood";
	} else {
		lp->params = l.count;
		lp->offset = (l.bytes + 7) / 8 * 8;
		lp->added = lp->offset + 8 <= limit;
		lp->why = lp->added ? NULL : "its parameter space is full";
	}
	if (!lp->added) {
		ptx_inject_head_toks(in, h->tok, h->ntok);
		ptx_buf_printf(&in->b, "\n\t.reg .b64 %s;\n\tmov.u64 %s, 0;\n", PTX_LAUNCH_ID_REG,
			       PTX_LAUNCH_ID_REG);
		return 0;
	}
	uint32_t at = l.open == UINT32_MAX ? l.close + 1 : l.close, end = h->tok + h->ntok;
	ptx_inject_head_toks(in, h->tok, at - h->tok);
	ptx_buf_printf(&in->b, "%s.param .u64 %s_lid%s", l.open == UINT32_MAX ? "(" : l.count ? ", " : "",
		       in->pfx, l.open == UINT32_MAX ? ") " : "");
	ptx_parse_print_toks(m, at, end - at, &in->b);
	ptx_buf_printf(&in->b, "\n\t.reg .b64 %s;\n\tld.param.u64 %s, [%s_lid];\n",
		       PTX_LAUNCH_ID_REG, PTX_LAUNCH_ID_REG, in->pfx);
	return 0;
}

/*
 * Out of line after the exit block, where the branches that skip the sunk
 * code land instead of their targets (ptx_block.h, skips_by_branch): that
 * code, then on to the target.  The exit block, which every warp passes on
 * its way out, then has no copy of it: a test and a reconvergence fewer on
 * every warp's tail (1% of vecadd's 1-us blocks, bench/cuda/ptx_module_cost.cu).
 */
static void ptx_inject_skip_stubs(struct ptx_inject *in)
{
	const struct ptx_module *m = in->m;

	for (size_t i = in->f->head + 1; i < in->blk.sink_at; i++) {
		if (!ptx_block_is_skip(&in->blk, i))
			continue;
		const struct ptx_stmt *s = &m->stmts[i];
		ptx_buf_printf(&in->b, "%s_skip%zu:\n", in->pfx, i);
		ptx_block_entry_sunk(&in->blk, &in->b);
		ptx_buf_printf(&in->b, "\tbra %.*s;\n", TOKF(m, m->opnds[s->opnd].tok));
	}
}

/* The exit block's code: the sunk code where it did not run yet, the
 * block_exit code, the warp exit probe, ret. */
static void ptx_inject_exit_code(struct ptx_inject *in)
{
	const struct ptx_inject_opts *o = in->o;

	if (!in->blk.skips_by_branch)
		ptx_block_entry_sunk(&in->blk, &in->b);
	ptx_block_exit(&in->blk, &in->b);
	if (o->exit_code)
		ptx_buf_printf(&in->b, "%s", o->exit_code);
	else if (o->exit_sym)
		ptx_buf_printf(&in->b, "\tcall %s;\n", o->exit_sym);
	ptx_buf_printf(&in->b, "\tret;\n");
}

/* Is s a label or a directive (.loc and the like): nothing a warp runs? */
static int ptx_inject_no_insn(const struct ptx_stmt *s)
{
	return s->kind == PTX_STMT_LABEL || s->kind == PTX_STMT_DECL;
}

/*
 * Is statement i of the kernel a label that the instruction before it
 * falls into, with an unguarded ret or exit after it (labels and
 * directives between)?  The warps that fall in then get a copy of the exit
 * code of their own, before the label, instead of a branch to the exit
 * block where the others join them: on vecadd's 1-us blocks the join
 * cost kernelretsnoop's flat twin 0.7% (H200).  Not with block_exit code
 * (one barrier or counter site), nor before the sunk code where its copy
 * is on the skipping branches only (ptx_block.h, skips_by_branch).
 */
static int ptx_inject_falls_into_exit(const struct ptx_inject *in, size_t i)
{
	const struct ptx_module *m = in->m;
	size_t j = i, k = i;

	if (in->o->block_exit_code || m->stmts[i].kind != PTX_STMT_LABEL ||
	    in->exit_copies >= PTX_INJECT_EXIT_COPIES ||
	    (in->blk.sink_at && i <= in->blk.sink_at && in->blk.skips_by_branch))
		return 0;
	while (--j > in->f->head && ptx_inject_no_insn(&m->stmts[j]))
		;
	static const char *const no_fall[] = {"bra", "brx", "ret", "exit", "trap"};
	const struct ptx_stmt *before = &m->stmts[j];
	if (before->kind != PTX_STMT_INSN ||
	    (before->guard < 0 &&
	     ptx_inject_op_in(m, before, no_fall, sizeof(no_fall) / sizeof(no_fall[0]))))
		return 0;
	while (++k < in->f->end && ptx_inject_no_insn(&m->stmts[k]))
		;
	const struct ptx_stmt *after = &m->stmts[k];
	return after->kind == PTX_STMT_INSN && after->guard < 0 && ptx_inject_is_exit(m, after);
}

/* The kernel, from its header to its closing brace, with the probes. */
static int ptx_inject_kernel(struct ptx_inject *in)
{
	const struct ptx_module *m = in->m;
	const struct ptx_inject_opts *o = in->o;
	int entry_done = !o->entry_sym && !o->entry_code && !in->blk.on;
	/* one exit block at the end, every ret/exit a branch to it */
	int exit_block = o->exit_code || o->block_exit_code || in->blk.sink_at;
	if (!in->blk.flat) /* the twin's record is the kernel's (module scope) */
		ptx_block_record_decl(&in->blk, &in->b);
	int err = ptx_inject_head(in);
	if (err)
		return err;
	if (in->mem_inline) /* the addresses of a run's accesses */
		ptx_buf_printf(&in->b, "\t.reg .b64 %%%s_a<%d>;\n", in->pfx,
			       in->nunrolled ? PTX_INJECT_UNROLL_ACCESSES : PTX_INJECT_MEM_RUN);
	else if (o->mem_sym || o->mem_code)
		ptx_buf_printf(&in->b, "\t.reg .b64 %%%s_a;\n", in->pfx);
	if (in->mem_inline)
		ptx_buf_printf(&in->b, "\t.reg .pred %%%s_g;\n", in->pfx);
	if (in->mem_inline && strstr(o->mem_code, PTX_SMID_REG)) {
		if (memmem(m->text, m->len, PTX_SMID_NAME, strlen(PTX_SMID_NAME)))
			return err_set(in->e, EEXIST, "the module uses the name '%s', which gpuext "
				       "reserves", PTX_SMID_NAME);
		ptx_buf_printf(&in->b, "\t.reg .b32 %s;\n\tmov.u32 %s, %%smid;\n", PTX_SMID_REG,
			       PTX_SMID_REG);
	}
	for (size_t i = in->f->head + 1; i <= in->f->end; i++) {
		const struct ptx_stmt *s = &m->stmts[i];
		if (!entry_done && s->kind != PTX_STMT_DECL) {
			ptx_block_entry(&in->blk, &in->b);
			if (o->entry_code)
				ptx_buf_printf(&in->b, "%s", o->entry_code);
			else if (o->entry_sym)
				ptx_buf_printf(&in->b, "\tcall %s;\n", o->entry_sym);
			entry_done = 1;
		}
		if (i == in->blk.sink_at)
			ptx_block_entry_sunk(&in->blk, &in->b);
		if (in->next_unrolled < in->nunrolled) {
			const struct ptx_inject_unrolled *u = &in->unrolled[in->next_unrolled];
			if (i == u->l.label) {
				ptx_parse_print_stmt(m, s, &in->b);
				if ((err = ptx_inject_unrolled_turns(in, in->next_unrolled, u)))
					return err;
				continue;
			}
			if (i == u->l.bra) {
				ptx_inject_unrolled_end(in, in->next_unrolled++, u);
				continue;
			}
		}
		if (exit_block && ptx_inject_falls_into_exit(in, i)) {
			ptx_buf_printf(&in->b, "\t// the exit code, for the warps that fall into it\n");
			ptx_inject_exit_code(in);
			in->exit_copies++;
		}
		if (i == in->f->end && exit_block) { /* the one exit, at the end */
			ptx_buf_printf(&in->b, "%s_exit:\n", in->pfx);
			ptx_inject_exit_code(in);
			ptx_inject_skip_stubs(in);
		}
		if (ptx_block_is_skip(&in->blk, i)) {
			ptx_buf_printf(&in->b, "\t");
			ptx_inject_guard(in, s);
			ptx_buf_printf(&in->b, "%.*s %s_skip%zu;\n", TOKF(m, s->opcode), in->pfx, i);
			continue;
		}
		if (s->kind == PTX_STMT_INSN && exit_block && ptx_inject_is_exit(m, s)) {
			ptx_buf_printf(&in->b, "\t");
			ptx_inject_guard(in, s);
			ptx_buf_printf(&in->b, "bra %s_exit;\n", in->pfx);
			in->exit_probes++;
			continue;
		}
		if (s->kind == PTX_STMT_INSN && o->exit_sym && ptx_inject_is_exit(m, s)) {
			ptx_buf_printf(&in->b, "\t");
			ptx_inject_guard(in, s);
			ptx_buf_printf(&in->b, "call %s;\n", o->exit_sym);
			in->exit_probes++;
		}
		if (s->kind == PTX_STMT_INSN && (o->mem_sym || o->mem_code)) {
			err = ptx_inject_mem(in, s);
			if (err)
				return err;
		}
		ptx_parse_print_stmt(m, s, &in->b);
		if (s->kind == PTX_STMT_INSN && in->mem_inline && (err = ptx_inject_mem_after(in, s)))
			return err;
	}
	return 0;
}

struct ptx_inject_name {
	const char *s;
	size_t len;
};

/* Names in order of their bytes, then their length. */
static int ptx_inject_cmp_name(const void *a, const void *b)
{
	const struct ptx_inject_name *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->s, y->s, n);
	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* The name token of module-scope statement s when it defines a variable
 * (.global or .const, not .extern); UINT32_MAX when it does not. */
static uint32_t ptx_inject_var_name(const struct ptx_module *m, const struct ptx_stmt *s)
{
	int var = 0, ext = 0;
	uint32_t name = UINT32_MAX;

	if (s->kind != PTX_STMT_DIRECTIVE)
		return UINT32_MAX;
	for (uint32_t t = s->tok; t < s->tok + s->ntok; t++) {
		if (ptx_parse_tok_is(m, t, ".global") || ptx_parse_tok_is(m, t, ".const"))
			var = 1;
		else if (ptx_parse_tok_is(m, t, ".extern"))
			ext = 1;
		else if (m->toks[t].kind == PTX_TOK_NAME && name == UINT32_MAX)
			name = t;
	}
	return var && !ext ? name : UINT32_MAX;
}

static int ptx_inject_var_refused(const struct ptx_module *m, const struct ptx_stmt *s,
				  uint32_t name, struct err *e)
{
	return err_set(e, ENOTSUP,
		       "line %u: the module defines the variable '%.*s' "
		       "(__device__/__constant__), which an instrumented copy "
		       "of the kernel would not share: not supported yet",
		       s->line, (int)m->toks[name].len, m->text + m->toks[name].off);
}

/* A sorted index of the names the module's statements use, leaving out
 * function headers, variables' own names and the functions drop marks. */
static size_t ptx_inject_names(const struct ptx_module *m, const unsigned char *drop,
			       struct ptx_inject_name *names)
{
	size_t n = 0, f = 0;

	for (size_t i = 0; i < m->nstmt; i++) {
		const struct ptx_stmt *s = &m->stmts[i];
		while (f < m->nfunc && m->funcs[f].end < i)
			f++;
		if (drop && f < m->nfunc && m->funcs[f].head == i && drop[f]) {
			i = m->funcs[f].end;
			continue;
		}
		if (s->kind == PTX_STMT_FUNC_HEAD)
			continue;
		uint32_t self = ptx_inject_var_name(m, s); /* a declaration names itself */
		for (uint32_t t = s->tok; t < s->tok + s->ntok; t++)
			if (m->toks[t].kind == PTX_TOK_NAME && t != self)
				names[n++] = (struct ptx_inject_name){m->text + m->toks[t].off,
								      m->toks[t].len};
	}
	qsort(names, n, sizeof(*names), ptx_inject_cmp_name);
	return n;
}

/*
 * For only_kernel: which definitions to leave out.  A kernel goes (drop, 1
 * per function) unless a statement outside its own header names it (a
 * device-side launch takes its address); then a module variable goes
 * (drop_var, 1 per statement) unless a statement of what is kept names it:
 * NVRTC modules define helper variables no kernel uses (CuPy's
 * __nv_atomic_triv_cp_helper), which would otherwise make the kernel look
 * as if it shared state with the module.  Sorted indexes of the names used
 * keep this O(n log n) for modules of thousands of kernels.
 */
static int ptx_inject_dropped(struct ptx_inject *in, unsigned char **drop,
			      unsigned char **drop_var)
{
	const struct ptx_module *m = in->m;
	struct ptx_inject_name *names;
	size_t n;

	*drop = calloc(m->nfunc ? m->nfunc : 1, 1);
	*drop_var = calloc(m->nstmt ? m->nstmt : 1, 1);
	names = malloc((m->ntok ? m->ntok : 1) * sizeof(*names));
	if (!*drop || !*drop_var || !names) {
		free(names);
		free(*drop);
		free(*drop_var);
		*drop = *drop_var = NULL;
		return err_set(in->e, ENOMEM, "out of memory instrumenting PTX");
	}
	n = ptx_inject_names(m, NULL, names);
	for (size_t f = 0; f < m->nfunc; f++) {
		const struct ptx_func *fn = &m->funcs[f];
		if (!fn->entry || fn == in->f)
			continue;
		struct ptx_inject_name key = {m->text + m->toks[fn->name].off, m->toks[fn->name].len};
		(*drop)[f] = !bsearch(&key, names, n, sizeof(*names), ptx_inject_cmp_name);
	}
	n = ptx_inject_names(m, *drop, names);
	for (size_t i = 0; i < m->nstmt; i++) {
		uint32_t t = ptx_inject_var_name(m, &m->stmts[i]);
		if (t == UINT32_MAX)
			continue;
		struct ptx_inject_name key = {m->text + m->toks[t].off, m->toks[t].len};
		(*drop_var)[i] = !bsearch(&key, names, n, sizeof(*names), ptx_inject_cmp_name);
	}
	free(names);
	return 0;
}

int ptx_module_check_no_variables(const struct ptx_module *m, struct err *e)
{
	for (size_t i = 0; i < m->nstmt; i++) {
		uint32_t name = ptx_inject_var_name(m, &m->stmts[i]);
		if (name != UINT32_MAX)
			return ptx_inject_var_refused(m, &m->stmts[i], name, e);
	}
	return 0;
}

/* `.target NAME ...` (the parser took NAME as the module's target). */
static int ptx_inject_is_target(const struct ptx_module *m, const struct ptx_stmt *s)
{
	return s->kind == PTX_STMT_DIRECTIVE && ptx_parse_tok_is(m, s->tok, ".target") &&
	       s->ntok >= 2 && m->toks[s->tok + 1].kind == PTX_TOK_NAME;
}

static int ptx_inject_is_header(const struct ptx_module *m, const struct ptx_stmt *s)
{
	return s->kind == PTX_STMT_DIRECTIVE && (ptx_parse_tok_is(m, s->tok, ".version") ||
						 ptx_parse_tok_is(m, s->tok, ".target") ||
						 ptx_parse_tok_is(m, s->tok, ".address_size"));
}

/* The extra code, and the called mem probe's functions when the kernel
 * calls it. */
static void ptx_inject_extra(struct ptx_inject *in)
{
	ptx_block_arrays_decl(in->o, &in->b);
	if (in->o->extra)
		ptx_buf_printf(&in->b, "\n%s\n", in->o->extra);
	if (in->o->mem_func && !in->mem_inline)
		ptx_buf_printf(&in->b, "\n%s\n", in->o->mem_func);
}

int ptx_inject(const struct ptx_module *m, const struct ptx_inject_opts *o, char **out,
	       size_t *out_len, struct err *e)
{
	struct ptx_inject in = {.m = m, .o = o, .e = e};
	int err = 0, extra_done = 0;

	*out = NULL;
	for (size_t i = 0; i < m->nfunc && !in.f; i++) {
		const struct ptx_tok *k = &m->toks[m->funcs[i].name];
		if (m->funcs[i].entry && o->kernel && strlen(o->kernel) == k->len &&
		    !memcmp(m->text + k->off, o->kernel, k->len))
			in.f = &m->funcs[i];
	}
	if (!in.f)
		return err_set(e, ENOENT, "kernel '%s' is not defined in the module",
			       o->kernel ? o->kernel : "(null)");
	in.ver_major = o->min_version_major;
	in.ver_minor = o->min_version_minor;
	if (o->elect_sync && in.ver_major * 100 + in.ver_minor <
				     PTX_ELECT_SYNC_VERSION_MAJOR * 100 + PTX_ELECT_SYNC_VERSION_MINOR) {
		in.ver_major = PTX_ELECT_SYNC_VERSION_MAJOR;
		in.ver_minor = PTX_ELECT_SYNC_VERSION_MINOR;
	}
	ptx_inject_prefix(&in);
	ptx_block_init(&in.blk, m, in.f, o, in.pfx); /* before the loops to unroll are chosen */
	if ((err = ptx_inject_mem_form(&in))) {
		free(in.unrolled);
		return err;
	}
	if (in.mem_inline && o->elect_sync == PTX_ELECT_SYNC_OUT_OF_LOOPS &&
	    !(in.in_loop = ptx_inject_loops(m, in.f))) {
		free(in.unrolled);
		return err_set(e, ENOMEM, "out of memory");
	}
	/* the twin only where block code reads the block's place (mem probes
	 * keep their one form: ptx_inject_kernel's mem state is one pass's),
	 * and where it is worth its compile (ptx_inject.h) */
	int flat = o->flat_twin && in.blk.on && !o->mem_sym && !o->mem_code &&
		   !(o->block_exit_code && strstr(o->block_exit_code, "\tcall")) &&
		   in.f->end - in.f->head <= PTX_FLAT_MAX_STMTS &&
		   !memmem(m->text, m->len, PTX_FLAT_SUFFIX, strlen(PTX_FLAT_SUFFIX));
	if (o->flat_made)
		*o->flat_made = flat;
	if (o->mem_inlined)
		*o->mem_inlined = in.mem_inline;
	if (o->mem_unrolled_bytes)
		*o->mem_unrolled_bytes = 0;
	if (o->mem_agg_bytes)
		*o->mem_agg_bytes = 0;
	unsigned char *drop = NULL, *drop_var = NULL;
	size_t next_func = 0;
	if (o->only_kernel && (err = ptx_inject_dropped(&in, &drop, &drop_var))) {
		free(in.unrolled);
		free(in.in_loop);
		return err;
	}
	for (size_t i = 0; i < m->nstmt && !err; i++) {
		const struct ptx_stmt *s = &m->stmts[i];
		while (next_func < m->nfunc && m->funcs[next_func].head < i)
			next_func++;
		if (drop && next_func < m->nfunc && m->funcs[next_func].head == i &&
		    drop[next_func]) {
			i = m->funcs[next_func].end;
			continue;
		}
		if (drop_var && drop_var[i])
			continue;
		uint32_t var = o->no_variables ? ptx_inject_var_name(m, s) : UINT32_MAX;
		if (var != UINT32_MAX) {
			err = ptx_inject_var_refused(m, s, var, e);
			break;
		}
		if (!extra_done && !ptx_inject_is_header(m, s)) {
			ptx_inject_extra(&in);
			extra_done = 1;
		}
		if ((int)i == m->version_stmt &&
		    (in.ver_major > m->ver_major ||
		     (in.ver_major == m->ver_major && in.ver_minor > m->ver_minor))) {
			ptx_buf_printf(&in.b, ".version %u.%u\n", in.ver_major, in.ver_minor);
			continue;
		}
		if (ptx_inject_is_target(m, s) &&
		    ptx_inject_target_sm(&in) != (unsigned)atoi(m->target + 3)) {
			/* `.target sm_75, debug`: the name replaced, the options kept */
			ptx_buf_printf(&in.b, ".target sm_%u", ptx_inject_target_sm(&in));
			ptx_parse_print_toks(m, s->tok + 2, s->ntok - 2, &in.b);
			ptx_buf_printf(&in.b, "\n");
			continue;
		}
		if (i == in.f->head) {
			err = ptx_inject_kernel(&in);
			if (!err && flat) { /* the kernel again, in the flat form */
				ptx_buf_printf(&in.b, "\n");
				in.blk.flat = 1;
				in.exit_copies = 0;
				err = ptx_inject_kernel(&in);
				in.blk.flat = 0;
			}
			i = in.f->end;
			continue;
		}
		ptx_parse_print_stmt(m, s, &in.b);
	}
	if (!extra_done)
		ptx_inject_extra(&in);
	free(drop);
	free(drop_var);
	free(in.in_loop);
	free(in.unrolled);
	if (err) {
		ptx_buf_free(&in.b);
		return err;
	}
	if (o->mem_unrolled_bytes)
		*o->mem_unrolled_bytes = in.unrolled_bytes;
	if (o->mem_agg_bytes)
		*o->mem_agg_bytes = in.agg_bytes;
	*out = ptx_buf_take(&in.b, out_len);
	if (!*out)
		return err_set(e, ENOMEM, "out of memory writing the instrumented PTX");
	return 0;
}
