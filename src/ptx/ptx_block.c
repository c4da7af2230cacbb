/* SPDX-License-Identifier: MIT */
/*
 * ptx_block.c - block probes: the record, the block's entry and its last
 * exit (see ptx_block.h, and ptx_inject.h for what the options mean).
 */
#include "ptx_block.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_helpers.h"
#include "ptx_parse.h"

/*
 * Block probes.  The record (struct gpuext_block_ctx) is six 8-byte words
 * (ptx_inject.h, PTX_BLOCK_CTX_WORD) that thread (0,0,0), or the counted
 * exit's last lane, computes into registers %gxb_c0..5 where its program
 * reads them, and writes into a .shared variable PFX_blk of the module
 * only where the program reads the record in memory: static shared
 * memory, which ptxas places before the kernel's dynamic (.extern .shared)
 * array, whose users address it by name.  The thread that writes the
 * record runs the program, so its own program order makes what it wrote
 * visible to it; the only global traffic is what the programs do, once per
 * block.
 *
 * The block's last exit: where ptx_block_exit_by_barrier() proves that
 * every thread reaches the exit block and none waits for another, warps
 * 1.. arrive at barrier 0 (`barrier.arrive`, which does not wait) and warp
 * 0 waits there (`barrier.sync`) for all of them: no counter, so nothing
 * to zero at entry and no barrier there, and thread (0,0,0) runs both
 * programs (it keeps the start time in a register for the exit).
 * Otherwise each warp adds its lanes to a counter in the record with a
 * shared atomic, whose result tells the last; the counter is zeroed before
 * a `bar.sync 0` at entry (all threads of the block, each exactly once,
 * before any of the kernel's instructions: the kernel's own barriers, named
 * or not, come after it completes), and the start time goes through the
 * record.  Registers and labels live in scopes of their own (shadowing the
 * kernel's names).
 */
enum {
	BLK_START = 0, /* start_ns */
	/* the exit counter (the record's `reserved`): lanes in bits 0..15, warp
	 * exits in 16..31 (a block has at most 1024 threads).  32 bits, because
	 * a 64-bit shared atomic add is a compare-and-swap loop: with a block's
	 * warps leaving together it cost vecadd -n 16M 30% (H200). */
	BLK_COUNT = 36,
	BLK_SIZE = PTX_BLOCK_RECORD_BYTES,
};

/* Do tokens a and b of m spell the same name? */
static int ptx_block_tok_same(const struct ptx_module *m, uint32_t a, uint32_t b)
{
	return m->toks[a].len == m->toks[b].len &&
	       !memcmp(m->text + m->toks[a].off, m->text + m->toks[b].off, m->toks[a].len);
}

/* The NN of the module's `.target sm_NN[a]`; 0 for anything else. */
static unsigned ptx_block_target_sm(const struct ptx_module *m)
{
	const char *t = ptx_module_target(m);
	return !strncmp(t, "sm_", 3) ? (unsigned)strtoul(t + 3, NULL, 10) : 0;
}

/* Does s wait for other threads (a CTA or cluster barrier, a
 * warp-synchronous instruction: shfl.sync, vote.sync, bar.warp.sync, ...)? */
static int ptx_block_waits(const struct ptx_module *m, const struct ptx_stmt *s)
{
	const struct ptx_tok *k = &m->toks[s->opcode];
	const char *op = m->text + k->off;
	return (k->len >= 3 && !memcmp(op, "bar", 3)) || memmem(op, k->len, ".sync", 5) ||
	       memmem(op, k->len, ".aligned", 8);
}

/* Does call s go to a function the module does not define (or through a
 * register)?  vprintf, malloc and free (the driver's) return. */
static int ptx_block_calls_out(const struct ptx_module *m, const struct ptx_stmt *s)
{
	static const char *const known[] = {"vprintf", "malloc", "free"};
	if (!ptx_parse_tok_is(m, s->opcode, "call") && !ptx_parse_tok_is(m, s->opcode, "call.uni"))
		return 0;
	for (uint32_t i = 0; i < s->nopnd; i++) {
		const struct ptx_opnd *o = &m->opnds[s->opnd + i];
		if (o->kind == PTX_OPND_LIST)
			continue; /* the return values */
		const struct ptx_tok *t = &m->toks[o->tok];
		if (t->kind != PTX_TOK_NAME)
			return 1;
		for (size_t f = 0; f < m->nfunc; f++)
			if (ptx_block_tok_same(m, m->funcs[f].name, o->tok))
				return 0;
		for (size_t j = 0; j < sizeof(known) / sizeof(known[0]); j++)
			if (ptx_parse_tok_is(m, o->tok, known[j]))
				return 0;
		return 1;
	}
	return 1;
}

/* Does every thread of kernel f leave through its own ret/exit (which the
 * exit block gathers), and, with `waits`, no thread wait for another?  No
 * `exit` in a function (it would leave without the exit block), no call out
 * of the module (unprovable), and with `waits` no barrier or warp sync in
 * the kernel or any function of the module (an indirect call could reach
 * any of them). */
static int ptx_block_leaves_by_exit(const struct ptx_module *m, const struct ptx_func *kernel,
				    int waits)
{
	for (size_t f = 0; f < m->nfunc; f++) {
		const struct ptx_func *fn = &m->funcs[f];
		if (fn->entry && fn != kernel)
			continue;
		for (size_t i = fn->head + 1; i < fn->end; i++) {
			const struct ptx_stmt *s = &m->stmts[i];
			if (s->kind == PTX_STMT_INSN &&
			    ((waits && ptx_block_waits(m, s)) || ptx_block_calls_out(m, s) ||
			     (!fn->entry && ptx_parse_tok_is(m, s->opcode, "exit"))))
				return 0;
		}
	}
	return 1;
}

/*
 * Can the block's last exit be found with the barrier?  Only if every
 * thread leaves through the exit block (an `exit` in a function would leave
 * warp 0 waiting forever) and no thread waits for another: a kernel whose
 * threads meet at a barrier, or whose lanes sync as a warp, after some of
 * them returned early relies on the hardware counting those as arrived, and
 * with warp 0 held at the exit block they would not be.
 * barrier.sync/arrive without .aligned (lanes of a warp may reach the exit
 * block apart) need sm_70 and PTX 6.0.
 */
static int ptx_block_exit_by_barrier(const struct ptx_module *m, const struct ptx_func *kernel,
				     const struct ptx_inject_opts *o)
{
	unsigned major = m->ver_major, minor = m->ver_minor;
	if (o->min_version_major > major ||
	    (o->min_version_major == major && o->min_version_minor > minor))
		major = o->min_version_major, minor = o->min_version_minor;
	if (o->block_exit_counted || ptx_block_target_sm(m) < 70 || major < 6)
		return 0;
	return ptx_block_leaves_by_exit(m, kernel, 1);
}

/* The first dot-separated part of statement s's opcode. */
static int ptx_block_op_is(const struct ptx_module *m, const struct ptx_stmt *s, const char *op)
{
	const struct ptx_tok *k = &m->toks[s->opcode];
	size_t n = strlen(op);
	return k->len >= n && !memcmp(m->text + k->off, op, n) &&
	       (k->len == n || m->text[k->off + n] == '.');
}

/* Is s a load from global memory (ld.global..., ld.volatile.global...)? */
static int ptx_block_global_load(const struct ptx_module *m, const struct ptx_stmt *s)
{
	const struct ptx_tok *k = &m->toks[s->opcode];
	return s->kind == PTX_STMT_INSN && ptx_block_op_is(m, s, "ld") &&
	       memmem(m->text + k->off, k->len, ".global", 7);
}

/* Is s plain arithmetic: no memory, no control, no waiting? */
static int ptx_block_arith(const struct ptx_module *m, const struct ptx_stmt *s)
{
	static const char *const ops[] = {"add", "sub", "mul", "mad", "fma", "shl", "shr",
					  "and", "or", "xor", "not", "cvt", "cvta", "mov",
					  "setp", "selp", "min", "max", "neg", "abs", "bfe", "bfi"};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (ptx_block_op_is(m, s, ops[i]))
			return 1;
	return 0;
}

/* Does statement s name one of the n registers (tokens) in regs? */
static int ptx_block_names_any(const struct ptx_module *m, const struct ptx_stmt *s,
			       const uint32_t *regs, size_t n)
{
	for (uint32_t t = s->tok; t < s->tok + s->ntok; t++)
		for (size_t r = 0; m->toks[t].kind == PTX_TOK_REG && r < n; r++)
			if (ptx_block_tok_same(m, t, regs[r]))
				return 1;
	return 0;
}

/* Is statement `at` of kernel f in a loop: does a branch at or after it go
 * back to a label at or before it (an indirect branch counts as one)? */
static int ptx_block_in_loop(const struct ptx_module *m, const struct ptx_func *f, size_t at)
{
	for (size_t j = at; j < f->end; j++) {
		const struct ptx_stmt *s = &m->stmts[j];
		if (s->kind != PTX_STMT_INSN)
			continue;
		if (ptx_block_op_is(m, s, "brx"))
			return 1;
		if (!ptx_block_op_is(m, s, "bra") || !s->nopnd)
			continue;
		uint32_t target = m->opnds[s->opnd].tok;
		for (size_t l = f->head + 1; l <= at; l++)
			if (m->stmts[l].kind == PTX_STMT_LABEL &&
			    ptx_block_tok_same(m, m->stmts[l].tok, target))
				return 1;
	}
	return 0;
}

/*
 * Where the block_entry program may wait for the kernel's first global
 * loads: the statement after the first run of them in kernel f, the run
 * going on over further global loads and plain arithmetic until a
 * statement that uses a loaded value or does anything else (a label, a
 * branch, a store, a barrier...).  Thread (0,0,0)'s program then runs
 * while its loads are in flight, off the block's path (at entry its
 * %smid read, map address and update came before the loads); 0 where the
 * kernel has no global load, or where that point is in a loop (its guard
 * there cost reduce -n 16M 42% on the H200: the loop's code no longer
 * compiles the same).
 */
static size_t ptx_block_sink_point(const struct ptx_module *m, const struct ptx_func *f)
{
	uint32_t loaded[16];
	size_t n = 0, i = f->head + 1;

	while (i < f->end && !ptx_block_global_load(m, &m->stmts[i]))
		i++;
	if (i == f->end)
		return 0;
	for (; i < f->end; i++) {
		const struct ptx_stmt *s = &m->stmts[i];
		if (s->kind == PTX_STMT_DECL)
			continue; /* .reg, .loc */
		if (s->kind != PTX_STMT_INSN || ptx_block_names_any(m, s, loaded, n))
			break;
		if (ptx_block_global_load(m, s)) {
			const struct ptx_opnd *d = &m->opnds[s->opnd]; /* the destination(s) */
			for (uint32_t t = d->tok; s->nopnd && t < d->tok + d->ntok; t++)
				if (m->toks[t].kind == PTX_TOK_REG && n < 16)
					loaded[n++] = t;
			if (n == 16)
				break;
		} else if (!ptx_block_arith(m, s)) {
			break;
		}
	}
	return ptx_block_in_loop(m, f, i) ? 0 : i;
}

/* Is s a `bra` (any modifier), with a target operand? */
static int ptx_block_is_bra(const struct ptx_module *m, const struct ptx_stmt *s)
{
	return s->kind == PTX_STMT_INSN && ptx_block_op_is(m, s, "bra") && s->nopnd;
}

/*
 * Are the forward branches before statement at of kernel f the only ways
 * past it without running it?  They are when nothing before it is a label
 * (no jump lands there), a return, an exit, a call or an indirect branch,
 * and every branch before it goes to a label after it: a thread then runs
 * the statements up to `at` in order, leaving only by one of those
 * branches.  (at is not in a loop: ptx_block_sink_point.)
 */
static int ptx_block_skipped_by_branch(const struct ptx_module *m, const struct ptx_func *f,
				       size_t at)
{
	for (size_t i = f->head + 1; i < at; i++) {
		const struct ptx_stmt *s = &m->stmts[i];
		if (s->kind == PTX_STMT_LABEL)
			return 0;
		if (s->kind != PTX_STMT_INSN)
			continue;
		if (ptx_block_op_is(m, s, "ret") || ptx_block_op_is(m, s, "exit") ||
		    ptx_block_op_is(m, s, "call") || ptx_block_op_is(m, s, "brx") ||
		    (ptx_block_op_is(m, s, "bra") && !s->nopnd))
			return 0;
		if (!ptx_block_is_bra(m, s))
			continue;
		uint32_t target = m->opnds[s->opnd].tok;
		size_t l = at;
		while (l < f->end && !(m->stmts[l].kind == PTX_STMT_LABEL &&
				       ptx_block_tok_same(m, m->stmts[l].tok, target)))
			l++;
		if (l == f->end)
			return 0;
	}
	return 1;
}

int ptx_block_is_skip(const struct ptx_block *k, size_t i)
{
	return k->skips_by_branch && i < k->sink_at && ptx_block_is_bra(k->m, &k->m->stmts[i]);
}

/* Bit of the record's 8-byte word n in a word set. */
#define W(n) (1u << (n))
enum { W_START = W(0), W_END = W(1), W_INDEX = W(2), W_SM_THREADS = W(3), W_WARPS = W(4),
       W_EXITS = W(5), W_ALL = W(PTX_BLOCK_CTX_WORDS) - 1 };

/* Does probe code name the block index register? */
static int ptx_block_names_index(const char *code)
{
	return code && strstr(code, PTX_BLOCK_INDEX_REG) != NULL;
}

/* What a block program's code reads (ptx_inject.h, PTX_BLOCK_CTX_WORD). */
static struct ptx_block_use ptx_block_scan(const char *code)
{
	struct ptx_block_use u = {0};
	char reg[32];

	if (!code)
		return u;
	for (unsigned n = 0; n < PTX_BLOCK_CTX_WORDS; n++) {
		snprintf(reg, sizeof(reg), "%s%u", PTX_BLOCK_CTX_WORD, n);
		if (strstr(code, reg))
			u.words |= W(n);
	}
	u.mem = strstr(code, PTX_BLOCK_CTX_REG) != NULL;
	return u;
}

/* %gxb_b = the block's threads, blockDim.x * y * z (%gxb_t scratch). */
static void ptx_block_threads(const struct ptx_block *k, struct ptx_buf *b)
{
	ptx_buf_printf(b, "\tmov.u32 %%gxb_b, %%ntid.x;\n");
	if (!k->flat)
		ptx_buf_printf(b, "\tmov.u32 %%gxb_t, %%ntid.y;\n"
				  "\tmul.lo.u32 %%gxb_b, %%gxb_b, %%gxb_t;\n"
				  "\tmov.u32 %%gxb_t, %%ntid.z;\n"
				  "\tmul.lo.u32 %%gxb_b, %%gxb_b, %%gxb_t;\n");
}

/* dst (64 bits) = the block's linear index (%gxb_a, %gxb_b, %gxb_u
 * scratch): %ctaid.x alone in the flat form. */
static void ptx_block_index(const struct ptx_block *k, struct ptx_buf *b, const char *dst)
{
	if (k->flat)
		ptx_buf_printf(b, "\tmov.u32 %%gxb_a, %%ctaid.x;\n\tcvt.u64.u32 %s, %%gxb_a;\n", dst);
	else
		ptx_intrin_block_index(b, dst, "%gxb_a", "%gxb_b", "%gxb_u");
}

/* %gxb_ctx = the record's generic address, for the block programs. */
static void ptx_block_ctx(const struct ptx_block *k, struct ptx_buf *b)
{
	ptx_buf_printf(b, "\tmov.u64 %%gxb_ctx, %s_blk;\n"
			  "\tcvta.shared.u64 %%gxb_ctx, %%gxb_ctx;\n", k->pfx);
}

/* The registers of a block probe scope; the record's words in %gxb_c<6>. */
static void ptx_block_regs(struct ptx_buf *b)
{
	ptx_buf_printf(b, "\t.reg .pred %%gxb_p;\n"
			  "\t.reg .b32 %%gxb_m, %%gxb_a, %%gxb_b, %%gxb_t, %%gxb_o;\n"
			  "\t.reg .b64 %%gxb_ctx, %%gxb_u, %s<%d>;\n"
			  "\tactivemask.b32 %%gxb_m;\n", PTX_BLOCK_CTX_WORD, PTX_BLOCK_CTX_WORDS);
}

/* The words of `words` that any thread of the block can compute from
 * special registers (index, SM | threads, warps; reserved 0) into their
 * registers (%gxb_a, %gxb_b, %gxb_t, %gxb_u scratch). */
static void ptx_block_words(const struct ptx_block *k, struct ptx_buf *b, unsigned words)
{
	if (words & W_INDEX) /* x + nctaid.x * (y + nctaid.y * z), in 64 bits */
		ptx_block_index(k, b, "%gxb_c2");
	if (words & (W_SM_THREADS | W_WARPS))
		ptx_block_threads(k, b);
	if (words & W_SM_THREADS)
		ptx_buf_printf(b, "\tmov.u32 %%gxb_a, %%smid;\n"
				  "\tmov.b64 %%gxb_c3, {%%gxb_a, %%gxb_b};\n");
	if (words & W_WARPS)
		ptx_buf_printf(b, "\tadd.u32 %%gxb_t, %%gxb_b, 31;\n\tshr.u32 %%gxb_t, %%gxb_t, 5;\n"
				  "\tcvt.u64.u32 %%gxb_c4, %%gxb_t;\n");
}

/* The record's words of `words` from their registers into shared memory. */
static void ptx_block_store(const struct ptx_block *k, struct ptx_buf *b, unsigned words)
{
	for (unsigned n = 0; n < PTX_BLOCK_CTX_WORDS; n++)
		if (words & W(n))
			ptx_buf_printf(b, "\tst.shared.u64 [%s_blk+%u], %s%u;\n", k->pfx, 8 * n,
				       PTX_BLOCK_CTX_WORD, n);
}

/* A block program with its ctx: the record's address where it reads the
 * record in memory (its words are in their registers otherwise). */
static void ptx_block_program(const struct ptx_block *k, struct ptx_buf *b, const char *code,
			      struct ptx_block_use u)
{
	if (u.mem)
		ptx_block_ctx(k, b);
	ptx_buf_printf(b, "%s", code);
}

/* %gxb_p = this thread is not thread (0,0,0) (%gxb_a, %gxb_b scratch);
 * in the flat form %tid.x alone says it. */
static void ptx_block_not_first(const struct ptx_block *k, struct ptx_buf *b)
{
	ptx_buf_printf(b, "\tmov.u32 %%gxb_a, %%tid.x;\n");
	if (!k->flat)
		ptx_buf_printf(b, "\tmov.u32 %%gxb_b, %%tid.y;\n"
				  "\tor.b32 %%gxb_a, %%gxb_a, %%gxb_b;\n\tmov.u32 %%gxb_b, %%tid.z;\n"
				  "\tor.b32 %%gxb_a, %%gxb_a, %%gxb_b;\n");
	ptx_buf_printf(b, "\tsetp.ne.u32 %%gxb_p, %%gxb_a, 0;\n");
}

/* The record's words that only the exit gives: 0 before it. */
static void ptx_block_zero_exit_words(struct ptx_buf *b, unsigned words)
{
	if (words & W_END)
		ptx_buf_printf(b, "\tmov.b64 %%gxb_c1, 0;\n");
	if (words & W_EXITS)
		ptx_buf_printf(b, "\tmov.b64 %%gxb_c5, 0;\n");
}

/* The block index register at entry, by every thread (a scope of its own
 * for the scratch registers). */
static void ptx_block_index_reg(const struct ptx_block *k, struct ptx_buf *b)
{
	ptx_buf_printf(b, "\t{ // block probes: the block's linear index, at entry\n"
			  "\t.reg .b32 %%gxb_a, %%gxb_b;\n\t.reg .b64 %%gxb_u;\n");
	ptx_block_index(k, b, PTX_BLOCK_INDEX_REG);
	ptx_buf_printf(b, "\t}\n");
}

/* At entry: thread (0,0,0) reads the start time where anything reads it,
 * computes the words the block_entry program reads and, where anything
 * reads the record in memory, writes it; the counted exit's zeroed counter
 * and barrier; the block_entry program, unless it is sunk past the first
 * loads (then every thread only notes that it is still to run, with no
 * special-register read: anything before the loads delays them). */
static void ptx_block_entry_code(const struct ptx_block *k, struct ptx_buf *b)
{
	const char *code = k->o->block_entry_code;
	/* the barrier: for the counter, and for the block-local arrays, which
	 * every thread zeroed just before (ptx_block_arrays_zero) */
	int meet = k->counted || k->o->n_block_arrays;
	int record = k->record_at_entry, sunk = k->entry_sunk;
	unsigned words = sunk ? 0 : k->entry.words | (record ? W_ALL : 0);
	/* thread (0,0,0)'s start time in a register of the kernel's scope: for
	 * its block_exit program, or for its sunk block_entry program */
	int keep_start = k->start_reg || (sunk && (k->entry.words & W_START));

	if (k->sink_at) /* every thread: which one is thread (0,0,0) is asked there */
		ptx_buf_printf(b, "\t.reg .pred %%%s_bp; // block probes: the sunk code is still "
				  "to run\n\tmov.pred %%%s_bp, 1;\n", k->pfx, k->pfx);
	if (k->index_reg)
		ptx_buf_printf(b, "\t.reg .b64 %s; // block probes: the block's linear index\n",
			       PTX_BLOCK_INDEX_REG);
	if (k->index_reg && !k->index_sunk)
		ptx_block_index_reg(k, b);
	if (!(code && !sunk) && !meet && !k->start_shared && !keep_start)
		return; /* nothing (else) to do at entry */
	if (keep_start)
		ptx_buf_printf(b, "\t.reg .b64 %%%s_start; // block probes: thread (0,0,0)'s "
				  "start time, for its block programs\n", k->pfx);
	ptx_buf_printf(b, "\t{ // block probes: thread (0,0,0) starts the block\n");
	ptx_block_regs(b);
	ptx_block_not_first(k, b);
	ptx_buf_printf(b, "\t@%%gxb_p bra GXB_MEET;\n");
	if ((words & W_START) || k->start_shared || keep_start)
		ptx_buf_printf(b, "\tmov.u64 %%gxb_c0, %%globaltimer;\n");
	if (keep_start)
		ptx_buf_printf(b, "\tmov.u64 %%%s_start, %%gxb_c0;\n", k->pfx);
	ptx_block_words(k, b, words);
	ptx_block_zero_exit_words(b, words);
	/* the record (word 4's store zeroes the counter), or its start alone */
	ptx_block_store(k, b, record ? W_ALL : k->start_shared ? W_START : 0);
	if (k->counted && !record)
		ptx_buf_printf(b, "\tst.shared.u32 [%s_blk+%d], 0;\n", k->pfx, BLK_COUNT);
	if (code && !meet && !sunk)
		ptx_block_program(k, b, code, k->entry);
	ptx_buf_printf(b, "GXB_MEET:\n");
	if (meet) /* the program after the barrier: the others need not wait for it */
		ptx_buf_printf(b, "\tbar.sync 0;\n");
	if (code && meet) {
		ptx_buf_printf(b, "\t@%%gxb_p bra GXB_DONE;\n");
		ptx_block_program(k, b, code, k->entry);
	}
	ptx_buf_printf(b, "GXB_DONE:\n");
	/* warp 0's other lanes wait for thread (0,0,0) only where a warp probe
	 * follows, which must see the whole warp; otherwise they go on into the
	 * kernel */
	if (k->o->entry_code || k->o->entry_sym)
		ptx_buf_printf(b, "\tbar.warp.sync %%gxb_m;\n");
	ptx_buf_printf(b, "\t}\n");
}

void ptx_block_entry_sunk(const struct ptx_block *k, struct ptx_buf *b)
{
	unsigned words = k->entry.words;

	if (!k->sink_at)
		return;
	ptx_buf_printf(b, "\t{ // block probes: once per thread%s%s\n",
		       k->index_sunk ? ", the block index" : "",
		       k->entry_sunk ? ", the block_entry program in thread (0,0,0)" : "");
	ptx_block_regs(b);
	/* the first time a thread gets here: its block index, whose special
	 * register reads wait with the loads here, not on its way out */
	ptx_buf_printf(b, "\t@!%%%s_bp bra GXB_DONE;\n\tmov.pred %%%s_bp, 0;\n", k->pfx,
		       k->pfx);
	if (k->index_sunk)
		ptx_block_index(k, b, PTX_BLOCK_INDEX_REG);
	if (!k->entry_sunk) {
		ptx_buf_printf(b, "GXB_DONE:\n\t}\n");
		return;
	}
	/* then whether it is thread (0,0,0): %tid.x first (the kernel has it
	 * already, as a rule), %tid.y and %tid.z only where it is 0 */
	if (!k->flat)
		ptx_buf_printf(b, "\tmov.u32 %%gxb_a, %%tid.x;\n\tsetp.ne.u32 %%gxb_p, %%gxb_a, 0;\n"
				  "\t@%%gxb_p bra GXB_DONE;\n");
	ptx_block_not_first(k, b);
	ptx_buf_printf(b, "\t@%%gxb_p bra GXB_DONE;\n");
	if (words & W_START)
		ptx_buf_printf(b, "\tmov.u64 %%gxb_c0, %%%s_start;\n", k->pfx);
	ptx_block_words(k, b, words);
	ptx_block_zero_exit_words(b, words);
	ptx_block_program(k, b, k->o->block_entry_code, k->entry);
	ptx_buf_printf(b, "GXB_DONE:\n\t}\n");
}

/* In the exit block: the block's last exit, by the barrier (warp 0 waits
 * for the others' arrival) or by the counter (the warp whose add completes
 * the block's threads); thread (0,0,0), or the counter's last lane, reads
 * the end time and the words the block_exit program reads (into the
 * record, where it reads it in memory) and runs it. */
static void ptx_block_exit_code(const struct ptx_block *k, struct ptx_buf *b)
{
	struct ptx_block_use u = k->exit;
	/* in memory: what the entry did not write (it wrote all or the start) */
	unsigned words = u.mem ? (k->record_at_entry ? W_END | W_EXITS : W_ALL & ~W_START)
			       : u.words;

	ptx_buf_printf(b, "\t{ // block probes: the block's last exit runs the program\n");
	ptx_block_regs(b);
	if (k->exit_by_barrier) {
		/* %gxb_a: the linear thread index; %gxb_o: the block's warps x 32,
		 * the barrier's count (it counts a warp's arrival as 32) */
		if (k->flat)
			ptx_buf_printf(b, "\tmov.u32 %%gxb_a, %%tid.x;\n");
		else
			ptx_buf_printf(b, "\tmov.u32 %%gxb_a, %%tid.z;\n\tmov.u32 %%gxb_t, %%ntid.y;\n"
					  "\tmul.lo.u32 %%gxb_a, %%gxb_a, %%gxb_t;\n"
					  "\tmov.u32 %%gxb_t, %%tid.y;\n\tadd.u32 %%gxb_a, %%gxb_a, %%gxb_t;\n"
					  "\tmov.u32 %%gxb_t, %%ntid.x;\n"
					  "\tmul.lo.u32 %%gxb_a, %%gxb_a, %%gxb_t;\n"
					  "\tmov.u32 %%gxb_t, %%tid.x;\n\tadd.u32 %%gxb_a, %%gxb_a, %%gxb_t;\n");
		ptx_block_threads(k, b);
		ptx_buf_printf(b, "\tadd.u32 %%gxb_o, %%gxb_b, 31;\n"
				  "\tand.b32 %%gxb_o, %%gxb_o, 0xffffffe0;\n"
				  "\tsetp.lt.u32 %%gxb_p, %%gxb_a, 32;\n\t@%%gxb_p bra GXB_WAIT;\n"
				  "\tbarrier.arrive 0, %%gxb_o;\n\tbra GXB_DONE;\n"
				  "GXB_WAIT:\n"
				  /* thread (0,0,0) computes what does not depend on
				   * the others before it waits: hidden unless warp 0
				   * arrives last; only the end time and the program
				   * remain after the barrier */
				  "\tsetp.ne.u32 %%gxb_p, %%gxb_a, 0;\n\t@%%gxb_p bra GXB_WAIT0;\n");
		if (words & W_EXITS) /* exit_threads = threads, exit_warps = warps */
			ptx_buf_printf(b, "\tshr.u32 %%gxb_t, %%gxb_o, 5;\n"
					  "\tmov.b64 %%gxb_c5, {%%gxb_b, %%gxb_t};\n");
		ptx_block_words(k, b, words);
		ptx_block_store(k, b, u.mem ? words & ~W_END : 0);
		ptx_buf_printf(b, "GXB_WAIT0:\n\tbarrier.sync 0, %%gxb_o;\n"
				  "\t@%%gxb_p bra GXB_DONE;\n");
		if (words & W_START) /* kept since the entry by this thread */
			ptx_buf_printf(b, "\tmov.u64 %%gxb_c0, %%%s_start;\n", k->pfx);
	} else {
		ptx_buf_printf(b, "\tmov.u32 %%gxb_a, %%lanemask_lt;\n"
				  "\tand.b32 %%gxb_a, %%gxb_a, %%gxb_m;\n"
				  "\tsetp.ne.u32 %%gxb_p, %%gxb_a, 0;\n\t@%%gxb_p bra GXB_DONE;\n"
				  /* lanes in the low half, one warp exit in the high one */
				  "\tpopc.b32 %%gxb_a, %%gxb_m;\n\tor.b32 %%gxb_a, %%gxb_a, 0x10000;\n"
				  "\tatom.shared.add.u32 %%gxb_o, [%s_blk+%d], %%gxb_a;\n"
				  /* %gxb_a: the block's threads that have left, this
				   * warp included */
				  "\tadd.u32 %%gxb_a, %%gxb_a, %%gxb_o;\n"
				  "\tand.b32 %%gxb_o, %%gxb_a, 0xffff;\n", k->pfx, BLK_COUNT);
		ptx_block_threads(k, b);
		ptx_buf_printf(b, "\tsetp.ne.u32 %%gxb_p, %%gxb_o, %%gxb_b;\n"
				  "\t@%%gxb_p bra GXB_DONE;\n");
		if (words & W_EXITS) /* the lanes and warp exits counted */
			ptx_buf_printf(b, "\tshr.u32 %%gxb_a, %%gxb_a, 16;\n"
					  "\tmov.b64 %%gxb_c5, {%%gxb_o, %%gxb_a};\n");
		if (words & W_START) /* written at entry by thread (0,0,0) */
			ptx_buf_printf(b, "\tld.shared.u64 %%gxb_c0, [%s_blk+%d];\n", k->pfx,
				       BLK_START);
		ptx_block_words(k, b, words);
		ptx_block_store(k, b, u.mem ? words & W_EXITS : 0);
	}
	if (words & W_END)
		ptx_buf_printf(b, "\tmov.u64 %%gxb_c1, %%globaltimer;\n");
	ptx_block_store(k, b, u.mem ? W_END : 0);
	if (k->o->n_block_arrays && !k->exit_by_barrier)
		/* the other warps' updates (their release fences); barrier.sync
		 * acquires by itself */
		ptx_buf_printf(b, "\tfence.acq_rel.cta;\n");
	ptx_block_program(k, b, k->o->block_exit_code, u);
	ptx_buf_printf(b, "GXB_DONE:\n");
	/* the lanes wait for the runner where a warp exit probe follows, which
	 * must see the whole warp */
	if (k->o->exit_code || k->o->exit_sym)
		ptx_buf_printf(b, "\tbar.warp.sync %%gxb_m;\n");
	ptx_buf_printf(b, "\t}\n");
}

/* A block-local array's bytes as declared: whole 16-byte units, which
 * ptx_block_arrays_zero stores. */
static uint32_t ptx_block_array_bytes(const struct ptx_block_array *a)
{
	return (a->bytes + 15) & ~15u;
}

/*
 * Block-local arrays: zeroed before the entry barrier, which then makes the
 * zeroes visible to the whole block (shared memory starts undefined in
 * every block), by the threads of the block's first row (y = z = 0:
 * thread x zeroes the 16-byte units x, x + ntid.x, ... of each array, one
 * vector store each).  What every block pays at its start, on the path of
 * the kernel: a memory-bound kernel of short blocks (vecadd, 21 SASS
 * instructions a thread) ran every thread through the 8-byte words'
 * loop before; now the other rows leave after a test of their y and z,
 * and a row's threads past the largest array's units after one compare
 * (a few hundred bytes: one warp's stores).  Own scope and labels.
 */
static void ptx_block_arrays_zero(const struct ptx_block *k, struct ptx_buf *b)
{
	uint32_t most = 0;

	if (!k->o->n_block_arrays)
		return;
	for (size_t n = 0; n < k->o->n_block_arrays; n++)
		if (ptx_block_array_bytes(&k->o->block_arrays[n]) > most)
			most = ptx_block_array_bytes(&k->o->block_arrays[n]);
	ptx_buf_printf(b, "\t{ // block-local arrays: zeroed by the threads of row 0\n"
			  "\t.reg .pred %%gxz_p;\n\t.reg .b32 %%gxz_i, %%gxz_n, %%gxz_t, %%gxz_a;\n"
			  "\t.reg .b64 %%gxz_z;\n"
			  "\tmov.u32 %%gxz_i, %%tid.y;\n\tmov.u32 %%gxz_t, %%tid.z;\n"
			  "\tor.b32 %%gxz_i, %%gxz_i, %%gxz_t;\n\tsetp.ne.u32 %%gxz_p, %%gxz_i, 0;\n"
			  "\t@%%gxz_p bra GXZ_done;\n"
			  /* i = x x 16, n = ntid.x x 16: bytes */
			  "\tmov.u32 %%gxz_i, %%tid.x;\n\tshl.b32 %%gxz_i, %%gxz_i, 4;\n"
			  "\tsetp.ge.u32 %%gxz_p, %%gxz_i, %u;\n\t@%%gxz_p bra GXZ_done;\n"
			  "\tmov.u32 %%gxz_n, %%ntid.x;\n\tshl.b32 %%gxz_n, %%gxz_n, 4;\n"
			  "\tmov.b64 %%gxz_z, 0;\n", most);
	for (size_t n = 0; n < k->o->n_block_arrays; n++) {
		const struct ptx_block_array *a = &k->o->block_arrays[n];
		ptx_buf_printf(b, "\tmov.u32 %%gxz_t, %%gxz_i;\n"
				  "GXZ_%zu:\n\tsetp.ge.u32 %%gxz_p, %%gxz_t, %u;\n"
				  "\t@%%gxz_p bra GXZ_%zu_done;\n"
				  "\tmov.u32 %%gxz_a, %s;\n\tadd.u32 %%gxz_a, %%gxz_a, %%gxz_t;\n"
				  "\tst.shared.v2.u64 [%%gxz_a], {%%gxz_z, %%gxz_z};\n"
				  "\tadd.u32 %%gxz_t, %%gxz_t, %%gxz_n;\n\tbra GXZ_%zu;\n"
				  "GXZ_%zu_done:\n",
			       n, ptx_block_array_bytes(a), n, a->sym, n, n);
	}
	ptx_buf_printf(b, "GXZ_done:\n\t}\n");
}

/* The block-local arrays' declarations: before the extra code, whose
 * programs name them. */
void ptx_block_arrays_decl(const struct ptx_inject_opts *o, struct ptx_buf *b)
{
	for (size_t k = 0; k < o->n_block_arrays; k++)
		ptx_buf_printf(b, "// a block-local array (MAP_TYPE_GPU_BLOCK_ARRAY)\n"
				  ".shared .align 16 .b8 %s[%u];\n",
			       o->block_arrays[k].sym, ptx_block_array_bytes(&o->block_arrays[k]));
}

/* Block-local arrays with a block_exit program and the counted exit: each
 * thread's updates of them come before its warp's exit count, which the
 * last exit's reader then sees (with its own fence, ptx_block_block_exit).
 * The barrier exit needs none: barrier.arrive releases, barrier.sync
 * acquires. */
static void ptx_block_arrays_release(const struct ptx_block *k, struct ptx_buf *b)
{
	if (k->o->n_block_arrays && k->o->block_exit_code && !k->exit_by_barrier)
		ptx_buf_printf(b, "\tfence.acq_rel.cta; // block-local arrays: updates "
				       "before the exit count\n");
}

void ptx_block_init(struct ptx_block *k, const struct ptx_module *m, const struct ptx_func *f,
		    const struct ptx_inject_opts *o, const char *pfx)
{
	*k = (struct ptx_block){.m = m, .o = o, .pfx = pfx};
	k->index_reg = ptx_block_names_index(o->entry_code) ||
		       ptx_block_names_index(o->block_entry_code) ||
		       ptx_block_names_index(o->exit_code) ||
		       ptx_block_names_index(o->block_exit_code);
	k->on = o->block_entry_code || o->block_exit_code || o->n_block_arrays || k->index_reg;
	k->exit_by_barrier = o->block_exit_code && ptx_block_exit_by_barrier(m, f, o);
	k->counted = o->block_exit_code && !k->exit_by_barrier;
	k->entry = ptx_block_scan(o->block_entry_code);
	k->exit = ptx_block_scan(o->block_exit_code);
	/* the whole record at entry: for the block_entry program, or for the
	 * counted exit's (run by whichever warp leaves last) */
	k->record_at_entry = k->entry.mem || (k->counted && k->exit.mem);
	/* the start time for the exit: in thread (0,0,0)'s register where it
	 * runs the exit program, in the record where another thread does or
	 * where the program reads the record in memory */
	k->start_reg = !k->counted && !k->exit.mem && (k->exit.words & W_START);
	k->start_shared = k->exit.mem || (k->counted && (k->exit.words & W_START));
	k->record_used = k->entry.mem || k->exit.mem || k->start_shared || k->counted;
	/* the block_entry program past the first loads, where nothing at entry
	 * waits for it (no barrier there, no warp entry probe), it reads its
	 * words from registers and thread (0,0,0) gets to the exit block if not
	 * to the loads; GPUEXT_PTX_BLOCK_ENTRY_FIRST keeps it at entry, to
	 * compare */
	int entry_sinks = o->block_entry_code && !k->counted && !o->n_block_arrays &&
			  !o->entry_code && !o->entry_sym && !k->entry.mem &&
			  !getenv("GPUEXT_PTX_BLOCK_ENTRY_FIRST");
	/* the block index likewise where only code past the loads reads it
	 * (exit probes, block_exit, a sunk block_entry program): every thread
	 * passes the sink point or the exit block before those
	 * (GPUEXT_PTX_BLOCK_INDEX_FIRST: at entry, to compare) */
	int index_sinks = k->index_reg && !getenv("GPUEXT_PTX_BLOCK_INDEX_FIRST") &&
			  !ptx_block_names_index(o->entry_code) &&
			  !(ptx_block_names_index(o->block_entry_code) && !entry_sinks);
	if ((entry_sinks || index_sinks) && ptx_block_leaves_by_exit(m, f, 0))
		k->sink_at = ptx_block_sink_point(m, f);
	k->entry_sunk = entry_sinks && k->sink_at;
	k->index_sunk = index_sinks && k->sink_at;
	k->skips_by_branch = k->sink_at && !getenv("GPUEXT_PTX_BLOCK_SKIP_IN_EXIT") &&
			     ptx_block_skipped_by_branch(m, f, k->sink_at);
}

void ptx_block_record_decl(const struct ptx_block *k, struct ptx_buf *b)
{
	if (k->record_used)
		ptx_buf_printf(b, "// the record of block probes (struct gpuext_block_ctx)\n"
				  ".shared .align 8 .b8 %s_blk[%d];\n", k->pfx, BLK_SIZE);
}

void ptx_block_entry(const struct ptx_block *k, struct ptx_buf *b)
{
	if (!k->on)
		return;
	ptx_block_arrays_zero(k, b);
	ptx_block_entry_code(k, b);
}

void ptx_block_exit(const struct ptx_block *k, struct ptx_buf *b)
{
	if (!k->o->block_exit_code)
		return;
	ptx_block_arrays_release(k, b);
	ptx_block_exit_code(k, b);
}
