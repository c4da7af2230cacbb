/* SPDX-License-Identifier: MIT */
/*
 * ptx_emit.c - translate one eBPF program into PTX functions.
 *
 * Register use inside every emitted function:
 *   %r0..%r10  the eBPF registers (.b64)
 *   %t0..%t3   64-bit scratch, %h0..%h3 32-bit scratch, %p0/%p1 predicates
 * Immediates are first moved into scratch registers, so every operation has
 * one register-register form; ptxas folds the moves.
 *
 * eBPF semantics PTX does not give, and how they are kept:
 *   - division by zero gives 0, modulo by zero leaves dst; signed INT_MIN/-1
 *     gives INT_MIN (div) and 0 (mod): the PTX div/rem is predicated off in
 *     those cases, whose results are written separately;
 *   - shift amounts are masked to 5 or 6 bits;
 *   - 32-bit results are computed in 32-bit registers and zero-extended;
 *   - atomics on the stack: atom on a generic address in the local window
 *     is undefined in PTX, and the stack is thread-private anyway, so the
 *     address is tested with isspacep.local and a plain load-modify-store
 *     is done there (not needed, so not done, when no frame of the program
 *     is in local memory: ptx_stack.h);
 *   - misaligned loads and stores, which eBPF allows and a GPU faults on,
 *     go byte by byte (ptx_emit_mem).
 */
#include "ptx_emit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/disasm.h"
#include "bpf/map.h"
#include "ptx_helpers.h"
#include "ptx_stack.h"

/* One eBPF function (the entry or a bpf-to-bpf callee): its instructions. */
struct ptx_fn {
	size_t start, end; /* [start, end) */
};

struct ptx_ctx {
	struct ptx_buf *b;
	const struct prog *p;
	const struct ptx_emit_opts *o;
	const char *sym;
	struct ptx_fn *fns;
	size_t fn_cnt;
	size_t line; /* next candidate in p->lines */
	int inlined; /* emitting function 0 as an inline block (o->inline_out) */
	/* per instruction: at a helper call, the index of the map whose
	 * constant reference r1 holds; -1 elsewhere and when r1 may hold
	 * anything else (ptx_find_const_maps) */
	int *call_map;
	/* per instruction: a jump target or a function's start (another path
	 * may reach it); set by ptx_find_const_maps */
	unsigned char *target;
	/* per function: which frame slots are registers (ptx_stack.h) */
	struct ptx_stack *stk;
	struct ptx_stack_use *use; /* per instruction, shared by c->stk */
	struct ptx_stack_call *calls;
	/* no frame of the program is in local memory, nor its ctx: atomics
	 * need no test for a local address */
	int no_local;
	/* the function being written has inline per-SM array accesses, all
	 * with this many copies: %sm holds the SM's copy, computed once at
	 * the function's start (0: computed at each access) */
	uint32_t sm_copies;
};

void ptx_block_array_sym(size_t k, char *out, size_t len)
{
	snprintf(out, len, "gx_block_map%zu", k);
}

void ptx_emit_symbol(const char *name, char *out, size_t len)
{
	size_t n = 0;

	if (len == 0)
		return;
	for (const char *c = "gx_"; *c && n + 1 < len; c++)
		out[n++] = *c;
	for (const char *c = name ? name : "prog"; *c && n + 1 < len; c++) {
		int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			 (*c >= '0' && *c <= '9') || *c == '_';
		out[n++] = ok ? *c : '_';
	}
	out[n] = '\0';
}

static int ptx_symbol_valid(const char *s)
{
	if (!s || !*s || (*s >= '0' && *s <= '9'))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

/* Index of the function containing instruction i. */
static size_t ptx_fn_of(const struct ptx_ctx *c, size_t i)
{
	for (size_t f = 0; f < c->fn_cnt; f++)
		if (i >= c->fns[f].start && i < c->fns[f].end)
			return f;
	return c->fn_cnt;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * Functions: instruction 0 and every local call target start one; each runs
 * to the next start (clang lays subprograms out contiguously, and the
 * verifier checks that control flow stays inside).
 */
static int ptx_split_functions(struct ptx_ctx *c, struct err *e)
{
	const struct prog *p = c->p;
	size_t *starts = malloc((p->insn_cnt + 1) * sizeof(*starts));
	size_t n = 0;

	if (!starts)
		return err_set(e, ENOMEM, "out of memory");
	starts[n++] = 0;
	for (size_t i = 0; i < p->insn_cnt; i++) {
		const struct isa_insn *in = &p->insns[i];
		if (in->code == ISA_OPC_LD_IMM64) {
			i++;
			continue;
		}
		if (in->code != ISA_OPC_JMP_CALL || in->src != ISA_CALL_LOCAL)
			continue;
		int64_t t = (int64_t)i + in->imm + 1;
		if (t < 0 || t >= (int64_t)p->insn_cnt) {
			free(starts);
			return err_set(e, EINVAL, "insn %zu: call target %lld outside the program",
				       i, (long long)t);
		}
		starts[n++] = (size_t)t;
	}
	qsort(starts, n, sizeof(*starts), cmp_size);
	c->fns = calloc(n, sizeof(*c->fns));
	if (!c->fns) {
		free(starts);
		return err_set(e, ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && starts[i] == starts[i - 1])
			continue;
		c->fns[c->fn_cnt].start = starts[i];
		if (c->fn_cnt > 0)
			c->fns[c->fn_cnt - 1].end = starts[i];
		c->fn_cnt++;
	}
	c->fns[c->fn_cnt - 1].end = p->insn_cnt;
	free(starts);
	return 0;
}

/* Does instruction in write register r (so that r no longer holds what
 * it held before)? */
static int ptx_insn_writes(const struct isa_insn *in, unsigned r)
{
	switch (in->code) {
	case ISA_OPC_JMP_CALL:
	case ISA_OPC_JMP_CALLX:
		return r <= 5; /* r0 the result, r1..r5 clobbered */
	case ISA_OPC_ATOMIC_W:
	case ISA_OPC_ATOMIC_DW:
		if (!(in->imm & ISA_FETCH))
			return 0;
		return r == (in->imm == ISA_ATOMIC_CMPXCHG ? 0u : in->src);
	default:
		break;
	}
	switch (ISA_CLASS(in->code)) {
	case ISA_ALU:
	case ISA_ALU64:
	case ISA_LDX:
	case ISA_LD:
		return r == in->dst;
	default: /* stores, jumps, exit */
		return 0;
	}
}

/*
 * c->call_map: for each helper call, the map that r1 names when it can only
 * be one constant map reference -- set by LD_IMM64 (ISA_PSEUDO_MAP_FD) or
 * copied by a MOV from a register that holds one, in the same straight-line
 * stretch of code (what is known is forgotten at every jump target and
 * function start, since another path may reach it).  What clang emits for
 * `bpf_map_lookup_elem(&m, &k)` is always of that form.
 */
static int ptx_find_const_maps(struct ptx_ctx *c, struct err *e)
{
	const struct prog *p = c->p;
	unsigned char *target = c->target = calloc(p->insn_cnt + 1, 1);
	int known[ISA_NR_REGS];

	c->call_map = malloc(p->insn_cnt * sizeof(*c->call_map));
	if (!target || !c->call_map)
		return err_set(e, ENOMEM, "out of memory");
	for (size_t f = 0; f < c->fn_cnt; f++)
		target[c->fns[f].start] = 1;
	for (size_t i = 0; i < p->insn_cnt; i++) {
		const struct isa_insn *in = &p->insns[i];
		int64_t t = -1;
		if (in->code == ISA_OPC_LD_IMM64)
			i++;
		else if (in->code == ISA_OPC_JMP32_JA)
			t = (int64_t)i + in->imm + 1;
		else if ((ISA_CLASS(in->code) == ISA_JMP || ISA_CLASS(in->code) == ISA_JMP32) &&
			 in->code != ISA_OPC_JMP_CALL && in->code != ISA_OPC_JMP_CALLX &&
			 in->code != ISA_OPC_JMP_EXIT)
			t = (int64_t)i + in->off + 1;
		if (t >= 0 && t < (int64_t)p->insn_cnt)
			target[t] = 1;
	}
	for (size_t i = 0; i < p->insn_cnt; i++) {
		const struct isa_insn *in = &p->insns[i];
		c->call_map[i] = -1;
		if (target[i])
			for (unsigned r = 0; r < ISA_NR_REGS; r++)
				known[r] = -1;
		if (in->code == ISA_OPC_JMP_CALL && in->src == ISA_CALL_HELPER)
			c->call_map[i] = known[1];
		if (in->code == ISA_OPC_LD_IMM64 && in->dst < ISA_NR_REGS) {
			known[in->dst] = in->src == ISA_PSEUDO_MAP_FD ? in->imm : -1;
			if (i + 1 < p->insn_cnt)
				c->call_map[++i] = -1;
			continue;
		}
		int copied = in->code == ISA_OPC_ALU64_MOV_X && in->off == 0 &&
			     in->src < ISA_NR_REGS ? known[in->src] : -1;
		for (unsigned r = 0; r < ISA_NR_REGS; r++)
			if (ptx_insn_writes(in, r))
				known[r] = -1;
		if (in->code == ISA_OPC_ALU64_MOV_X && in->dst < ISA_NR_REGS)
			known[in->dst] = copied;
	}
	return 0;
}

static void ptx_emit_fn_decl(struct ptx_ctx *c, size_t f)
{
	ptx_buf_printf(c->b,
		       ".func (.param .b64 rv) %s_f%zu(.param .b64 a1, .param .b64 a2, "
		       ".param .b64 a3, .param .b64 a4, .param .b64 a5, .param .b64 aw)",
		       c->sym, f);
}

static void ptx_emit_comment(struct ptx_ctx *c, size_t i)
{
	const struct prog *p = c->p;

	while (c->line < p->line_cnt && p->lines[c->line].insn <= i) {
		const struct prog_line *l = &p->lines[c->line++];
		if (l->insn != i)
			continue;
		ptx_buf_printf(c->b, "\t// %s:%u: %s\n", l->file ? l->file : "?", l->line,
			       l->text ? l->text : "");
	}
	char text[DISASM_BUF_SIZE];
	disasm_insn(p->insns, p->insn_cnt, i, DISASM_LABELS, text, sizeof(text));
	ptx_buf_printf(c->b, "\t// %zu: %s\n", i, text);
}

enum { PTX_SRC64_LEN = 24 };

/*
 * Second operand of an ALU/JMP instruction, 64-bit, into buf (of
 * PTX_SRC64_LEN): a register, or the immediate sign-extended to 64 bits as
 * eBPF does -- written as the operand itself where the instruction takes
 * one (literal), else moved into %t0 first.  A literal operand keeps the
 * text short: a program is pasted at every access of a kernel, and its
 * length decides whether it is pasted at all (docs/ptx-inject.md).
 */
static const char *ptx_src64(struct ptx_ctx *c, const struct isa_insn *in, char *buf,
			     int literal)
{
	if (ISA_SRC(in->code) == ISA_X) {
		sprintf(buf, "%%r%u", in->src);
		return buf;
	}
	if (!literal) {
		ptx_buf_printf(c->b, "\tmov.b64 %%t0, %lld;\n", (long long)in->imm);
		return "%t0";
	}
	if (in->imm >= 0)
		sprintf(buf, "%d", in->imm);
	else /* the 64-bit pattern: a negative literal of an unsigned type is
	      * not PTX */
		sprintf(buf, "0x%016llx", (unsigned long long)(int64_t)in->imm);
	return buf;
}

/* The same, 32-bit, in %h1; dst's low half goes to %h0. */
static void ptx_load32(struct ptx_ctx *c, const struct isa_insn *in)
{
	ptx_buf_printf(c->b, "\tcvt.u32.u64 %%h0, %%r%u;\n", in->dst);
	if (ISA_SRC(in->code) == ISA_X)
		ptx_buf_printf(c->b, "\tcvt.u32.u64 %%h1, %%r%u;\n", in->src);
	else
		ptx_buf_printf(c->b, "\tmov.b32 %%h1, %d;\n", in->imm);
}

/* dst = bswap of its low `bits` bits (16, 32, 64). */
static void ptx_emit_bswap(struct ptx_ctx *c, unsigned d, int bits)
{
	struct ptx_buf *b = c->b;

	ptx_buf_printf(b, "\tmov.b32 %%h3, 0;\n");
	if (bits == 64) {
		ptx_buf_printf(b, "\tmov.b64 {%%h0, %%h1}, %%r%u;\n", d);
		ptx_buf_printf(b, "\tprmt.b32 %%h2, %%h1, %%h3, 0x0123;\n");
		ptx_buf_printf(b, "\tprmt.b32 %%h1, %%h0, %%h3, 0x0123;\n");
		ptx_buf_printf(b, "\tmov.b64 %%r%u, {%%h2, %%h1};\n", d);
		return;
	}
	ptx_buf_printf(b, "\tcvt.u32.u64 %%h0, %%r%u;\n", d);
	ptx_buf_printf(b, "\tprmt.b32 %%h2, %%h0, %%h3, %s;\n", bits == 16 ? "0x4401" : "0x0123");
	ptx_buf_printf(b, "\tcvt.u64.u32 %%r%u, %%h2;\n", d);
}

/*
 * A block-local array's pointer in eBPF register r is kept twice: the
 * generic address in %rN (what NULL tests, spills and anything the
 * analysis does not follow use) and its shared-window address in %saN (32
 * bits: shared memory is smaller), which ptx_stack proves current wherever
 * it says the register is such a pointer, and which its loads, stores and
 * atomics address (`ld.shared [%saN+off]`): a generic address turned back
 * into a shared one costs a cvta (a subtraction ptxas does not fold) at
 * every access.  ptxas drops whichever of the two is never read.  Before
 * ALU64 instruction i (operand s), %saN follows %rN (ptx_stack's
 * shared_def).
 */
static void ptx_emit_shared_def(struct ptx_ctx *c, size_t i, const struct isa_insn *in,
				const char *s)
{
	unsigned d = in->dst;

	switch (c->use[i].shared_def) {
	case PTX_SHARED_COPY:
		ptx_buf_printf(c->b, "\tmov.b32 %%sa%u, %%sa%u;\n", d, in->src);
		break;
	case PTX_SHARED_ADD:
		if (ISA_SRC(in->code) == ISA_X)
			ptx_buf_printf(c->b, "\tcvt.u32.u64 %%h3, %s;\n\t%s.u32 %%sa%u, %%sa%u, %%h3;\n",
				       s, ISA_OP(in->code) == ISA_ALU_SUB ? "sub" : "add", d, d);
		else
			ptx_buf_printf(c->b, "\t%s.u32 %%sa%u, %%sa%u, %u;\n",
				       ISA_OP(in->code) == ISA_ALU_SUB ? "sub" : "add", d, d,
				       (uint32_t)in->imm);
		break;
	case PTX_SHARED_ADD_SRC:
		ptx_buf_printf(c->b, "\tcvt.u32.u64 %%h3, %%r%u;\n\tadd.u32 %%sa%u, %%sa%u, %%h3;\n", d,
			       d, in->src);
		break;
	default:
		break;
	}
}

static int ptx_emit_alu64(struct ptx_ctx *c, size_t i, const struct isa_insn *in,
			  struct err *e)
{
	struct ptx_buf *b = c->b;
	char sbuf[PTX_SRC64_LEN];
	unsigned d = in->dst;
	const char *s;
	int op = ISA_OP(in->code);

	switch (ISA_OP(in->code)) {
	case ISA_ALU_NEG:
		ptx_buf_printf(b, "\tneg.s64 %%r%u, %%r%u;\n", d, d);
		return 0;
	case ISA_ALU_END: /* ALU64 | END: unconditional byte swap */
		if (in->imm != 16 && in->imm != 32 && in->imm != 64)
			return err_set(e, EINVAL, "insn %zu: bswap width %d", i, in->imm);
		ptx_emit_bswap(c, d, in->imm);
		return 0;
	default:
		break;
	}
	/* a literal where the PTX instruction takes one (a shift by a constant
	 * is written below; div/rem test theirs first) */
	s = ptx_src64(c, in, sbuf,
		      op == ISA_ALU_ADD || op == ISA_ALU_SUB || op == ISA_ALU_MUL || op == ISA_ALU_OR ||
			      op == ISA_ALU_AND || op == ISA_ALU_XOR ||
			      (op == ISA_ALU_MOV && in->off == 0) || op == ISA_ALU_LSH ||
			      op == ISA_ALU_RSH || op == ISA_ALU_ARSH);
	ptx_emit_shared_def(c, i, in, s);
	switch (ISA_OP(in->code)) {
	case ISA_ALU_ADD:
		ptx_buf_printf(b, "\tadd.s64 %%r%u, %%r%u, %s;\n", d, d, s);
		break;
	case ISA_ALU_SUB:
		ptx_buf_printf(b, "\tsub.s64 %%r%u, %%r%u, %s;\n", d, d, s);
		break;
	case ISA_ALU_MUL:
		ptx_buf_printf(b, "\tmul.lo.s64 %%r%u, %%r%u, %s;\n", d, d, s);
		break;
	case ISA_ALU_OR:
		ptx_buf_printf(b, "\tor.b64 %%r%u, %%r%u, %s;\n", d, d, s);
		break;
	case ISA_ALU_AND:
		ptx_buf_printf(b, "\tand.b64 %%r%u, %%r%u, %s;\n", d, d, s);
		break;
	case ISA_ALU_XOR:
		ptx_buf_printf(b, "\txor.b64 %%r%u, %%r%u, %s;\n", d, d, s);
		break;
	case ISA_ALU_MOV:
		if (in->off == 0)
			ptx_buf_printf(b, "\tmov.b64 %%r%u, %s;\n", d, s);
		else /* movsx: sign-extend the low off bits */
			ptx_buf_printf(b, "\tbfe.s64 %%r%u, %s, 0, %d;\n", d, s, in->off);
		break;
	case ISA_ALU_LSH:
	case ISA_ALU_RSH:
	case ISA_ALU_ARSH: {
		const char *op = ISA_OP(in->code) == ISA_ALU_LSH   ? "shl.b64"
				 : ISA_OP(in->code) == ISA_ALU_RSH ? "shr.u64"
								   : "shr.s64";
		if (ISA_SRC(in->code) != ISA_X) { /* by a constant */
			ptx_buf_printf(b, "\t%s %%r%u, %%r%u, %d;\n", op, d, d, in->imm & 63);
			break;
		}
		ptx_buf_printf(b, "\tcvt.u32.u64 %%h1, %s;\n\tand.b32 %%h1, %%h1, 63;\n", s);
		ptx_buf_printf(b, "\t%s %%r%u, %%r%u, %%h1;\n", op, d, d);
		break;
	}
	case ISA_ALU_DIV:
	case ISA_ALU_MOD: {
		int div = ISA_OP(in->code) == ISA_ALU_DIV;
		ptx_buf_printf(b, "\tsetp.eq.u64 %%p0, %s, 0;\n", s);
		if (in->off == 0) {
			if (div)
				ptx_buf_printf(b, "\t@%%p0 mov.b64 %%r%u, 0;\n"
						  "\t@!%%p0 div.u64 %%r%u, %%r%u, %s;\n", d, d, d, s);
			else
				ptx_buf_printf(b, "\t@!%%p0 rem.u64 %%r%u, %%r%u, %s;\n", d, d, s);
			break;
		}
		/* Signed: x / -1 = -x (INT_MIN stays INT_MIN), x % -1 = 0. */
		ptx_buf_printf(b, "\tsetp.eq.s64 %%p1, %s, -1;\n", s);
		if (div)
			ptx_buf_printf(b, "\t@%%p0 mov.b64 %%r%u, 0;\n"
					  "\t@%%p1 neg.s64 %%r%u, %%r%u;\n", d, d, d);
		else
			ptx_buf_printf(b, "\t@%%p1 mov.b64 %%r%u, 0;\n", d);
		ptx_buf_printf(b, "\tor.pred %%p0, %%p0, %%p1;\n"
				  "\t@!%%p0 %s.s64 %%r%u, %%r%u, %s;\n", div ? "div" : "rem", d, d, s);
		break;
	}
	default:
		return err_set(e, EINVAL, "insn %zu: unknown ALU64 opcode 0x%02x", i, in->code);
	}
	return 0;
}

static int ptx_emit_alu32(struct ptx_ctx *c, size_t i, const struct isa_insn *in,
			  struct err *e)
{
	struct ptx_buf *b = c->b;
	unsigned d = in->dst;

	if (ISA_OP(in->code) == ISA_ALU_END) {
		if (in->imm != 16 && in->imm != 32 && in->imm != 64)
			return err_set(e, EINVAL, "insn %zu: byte order width %d", i, in->imm);
		if (ISA_SRC(in->code) == ISA_X) { /* to big endian: swap */
			ptx_emit_bswap(c, d, in->imm);
		} else if (in->imm < 64) { /* to little endian: truncate */
			ptx_buf_printf(b, "\tand.b64 %%r%u, %%r%u, %s;\n", d, d,
				       in->imm == 16 ? "0xffff" : "0xffffffff");
		}
		return 0;
	}
	ptx_load32(c, in);
	switch (ISA_OP(in->code)) {
	case ISA_ALU_ADD:
		ptx_buf_printf(b, "\tadd.s32 %%h2, %%h0, %%h1;\n");
		break;
	case ISA_ALU_SUB:
		ptx_buf_printf(b, "\tsub.s32 %%h2, %%h0, %%h1;\n");
		break;
	case ISA_ALU_MUL:
		ptx_buf_printf(b, "\tmul.lo.s32 %%h2, %%h0, %%h1;\n");
		break;
	case ISA_ALU_OR:
		ptx_buf_printf(b, "\tor.b32 %%h2, %%h0, %%h1;\n");
		break;
	case ISA_ALU_AND:
		ptx_buf_printf(b, "\tand.b32 %%h2, %%h0, %%h1;\n");
		break;
	case ISA_ALU_XOR:
		ptx_buf_printf(b, "\txor.b32 %%h2, %%h0, %%h1;\n");
		break;
	case ISA_ALU_NEG:
		ptx_buf_printf(b, "\tneg.s32 %%h2, %%h0;\n");
		break;
	case ISA_ALU_MOV:
		if (in->off == 0)
			ptx_buf_printf(b, "\tmov.b32 %%h2, %%h1;\n");
		else
			ptx_buf_printf(b, "\tbfe.s32 %%h2, %%h1, 0, %d;\n", in->off);
		break;
	case ISA_ALU_LSH:
	case ISA_ALU_RSH:
	case ISA_ALU_ARSH: {
		const char *op = ISA_OP(in->code) == ISA_ALU_LSH   ? "shl.b32"
				 : ISA_OP(in->code) == ISA_ALU_RSH ? "shr.u32"
								   : "shr.s32";
		ptx_buf_printf(b, "\tand.b32 %%h1, %%h1, 31;\n\t%s %%h2, %%h0, %%h1;\n", op);
		break;
	}
	case ISA_ALU_DIV:
	case ISA_ALU_MOD: {
		int div = ISA_OP(in->code) == ISA_ALU_DIV;
		ptx_buf_printf(b, "\tmov.b32 %%h2, %s;\n", div ? "0" : "%h0");
		ptx_buf_printf(b, "\tsetp.eq.u32 %%p0, %%h1, 0;\n");
		if (in->off == 0) {
			ptx_buf_printf(b, "\t@!%%p0 %s.u32 %%h2, %%h0, %%h1;\n", div ? "div" : "rem");
			break;
		}
		ptx_buf_printf(b, "\tsetp.eq.s32 %%p1, %%h1, -1;\n");
		if (div)
			ptx_buf_printf(b, "\t@%%p1 neg.s32 %%h2, %%h0;\n");
		else
			ptx_buf_printf(b, "\t@%%p1 mov.b32 %%h2, 0;\n");
		ptx_buf_printf(b, "\tor.pred %%p0, %%p0, %%p1;\n"
				  "\t@!%%p0 %s.s32 %%h2, %%h0, %%h1;\n", div ? "div" : "rem");
		break;
	}
	default:
		return err_set(e, EINVAL, "insn %zu: unknown ALU opcode 0x%02x", i, in->code);
	}
	ptx_buf_printf(b, "\tcvt.u64.u32 %%r%u, %%h2;\n", d);
	return 0;
}

static int ptx_check_target(struct ptx_ctx *c, size_t i, int64_t t, struct err *e)
{
	size_t f = ptx_fn_of(c, i);

	if (t < 0 || t >= (int64_t)c->p->insn_cnt)
		return err_set(e, EINVAL, "insn %zu: jump target %lld outside the program", i,
			       (long long)t);
	if ((size_t)t < c->fns[f].start || (size_t)t >= c->fns[f].end)
		return err_set(e, EINVAL, "insn %zu: jump to %lld leaves the function at %zu",
			       i, (long long)t, c->fns[f].start);
	return 0;
}

static const struct ptx_map_ref *ptx_inline_array(const struct ptx_ctx *c, size_t i,
						  const struct isa_insn *in);

/*
 * Is jump i the NULL test of an inline array lookup (`if (!v)` or `if (v)`
 * on r0 or on a copy of it: clang often moves the element to a callee-saved
 * register first)?  It is when only register moves lie between the lookup
 * and the jump, none a jump target, and the tested register holds r0's
 * value through them.  The lookup set r0 to the element's address when
 * its bounds test %p0 held and to 0 when not (a copy does not touch %p0),
 * and an element's address is never 0 (a device allocation; a block-local
 * array's generic address), so the jump can test %p0 instead of the
 * register: a 64-bit compare less, none where the key was proven in range.
 * Not where the maps' addresses are unknown (checking with no map table: a
 * value address may be given as 0).  Returns the lookup's index + 1, or 0.
 */
static size_t ptx_lookup_null_test(const struct ptx_ctx *c, size_t i, const struct isa_insn *in)
{
	const struct ptx_map_ref *r;
	unsigned reg = in->dst;
	size_t k = i;

	if ((in->code != ISA_OPC_JMP_JEQ_K && in->code != ISA_OPC_JMP_JNE_K) || in->imm != 0)
		return 0;
	while (k > 0 && !c->target[k]) {
		const struct isa_insn *prev = &c->p->insns[--k];
		if (prev->code == ISA_OPC_ALU64_MOV_X && prev->off == 0) {
			if (prev->dst == reg)
				reg = prev->src;
			continue;
		}
		if (prev->code == ISA_OPC_ALU64_MOV_K && prev->dst != reg)
			continue; /* a constant set aside (clang hoists them) */
		if (reg != 0 || prev->code != ISA_OPC_JMP_CALL || prev->src != ISA_CALL_HELPER ||
		    prev->imm != HELPER_MAP_LOOKUP_ELEM || !(r = ptx_inline_array(c, k, prev)))
			return 0;
		if (r->type == MAP_TYPE_GPU_BLOCK_ARRAY || c->o->map_table || r->value)
			return k + 1;
		return 0;
	}
	return 0;
}

static int ptx_emit_jmp_cond(struct ptx_ctx *c, size_t i, const struct isa_insn *in,
			     struct err *e)
{
	struct ptx_buf *b = c->b;
	int wide = ISA_CLASS(in->code) == ISA_JMP;
	int64_t t = (int64_t)i + in->off + 1;
	const char *cmp;
	int sign = 0;
	char sbuf[PTX_SRC64_LEN], abuf[8];
	const char *a, *s;

	int err = ptx_check_target(c, i, t, e);
	if (err)
		return err;
	size_t lookup = ptx_lookup_null_test(c, i, in);
	if (lookup) {
		/* the register is NULL exactly when the lookup's bounds test %p0
		 * failed; never, where the key was proven in range */
		if (!c->use[lookup - 1].key_in_range)
			ptx_buf_printf(b, "\t@%s%%p0 bra L%lld;\n",
				       in->code == ISA_OPC_JMP_JEQ_K ? "!" : "", (long long)t);
		else if (in->code == ISA_OPC_JMP_JNE_K)
			ptx_buf_printf(b, "\tbra L%lld;\n", (long long)t);
		return 0;
	}
	switch (ISA_OP(in->code)) {
	case ISA_JMP_JEQ: cmp = "eq"; break;
	case ISA_JMP_JNE: cmp = "ne"; break;
	case ISA_JMP_JGT: cmp = "gt"; break;
	case ISA_JMP_JGE: cmp = "ge"; break;
	case ISA_JMP_JLT: cmp = "lt"; break;
	case ISA_JMP_JLE: cmp = "le"; break;
	case ISA_JMP_JSGT: cmp = "gt"; sign = 1; break;
	case ISA_JMP_JSGE: cmp = "ge"; sign = 1; break;
	case ISA_JMP_JSLT: cmp = "lt"; sign = 1; break;
	case ISA_JMP_JSLE: cmp = "le"; sign = 1; break;
	case ISA_JMP_JSET: cmp = NULL; break;
	default:
		return err_set(e, EINVAL, "insn %zu: unknown jump opcode 0x%02x", i, in->code);
	}
	if (wide) {
		s = ptx_src64(c, in, sbuf, 1);
		sprintf(abuf, "%%r%u", in->dst);
		a = abuf;
	} else {
		ptx_load32(c, in);
		a = "%h0";
		s = "%h1";
	}
	if (!cmp) {
		ptx_buf_printf(b, "\tand.b%d %s, %s, %s;\n", wide ? 64 : 32, wide ? "%t1" : "%h2",
			       a, s);
		ptx_buf_printf(b, "\tsetp.ne.u%d %%p0, %s, 0;\n", wide ? 64 : 32,
			       wide ? "%t1" : "%h2");
	} else {
		ptx_buf_printf(b, "\tsetp.%s.%c%d %%p0, %s, %s;\n", cmp, sign ? 's' : 'u',
			       wide ? 64 : 32, a, s);
	}
	ptx_buf_printf(b, "\t@%%p0 bra L%lld;\n", (long long)t);
	return 0;
}

/* Values an inline update copies at most; larger ones call the runtime
 * (the copy is unrolled). */
enum { PTX_INLINE_UPDATE_MAX = 128 };

/*
 * The array map a lookup or update at call instruction i works on, when it
 * can be written inline: r1 is a constant reference to it and its geometry
 * is known (an update also needs the value's size).
 */
static const struct ptx_map_ref *ptx_inline_array(const struct ptx_ctx *c, size_t i,
						  const struct isa_insn *in)
{
	int m = c->call_map[i];

	if ((in->imm != HELPER_MAP_LOOKUP_ELEM && in->imm != HELPER_MAP_UPDATE_ELEM) ||
	    !c->o->maps || m < 0 || (size_t)m >= c->p->map_cnt)
		return NULL;
	const struct ptx_map_ref *r = &c->o->maps[m];
	if (!r->value_stride ||
	    (r->type != MAP_TYPE_ARRAY && r->type != MAP_TYPE_PERCPU_ARRAY &&
	     r->type != MAP_TYPE_GPU_BLOCK_ARRAY) ||
	    (r->type == MAP_TYPE_PERCPU_ARRAY && !r->nr_sms))
		return NULL;
	if (in->imm == HELPER_MAP_UPDATE_ELEM &&
	    (!r->value_size || r->value_size > PTX_INLINE_UPDATE_MAX))
		return NULL;
	return r;
}

/* Into reg, the address of map k's header (value 0) or of its value 0 plus
 * off (value 1): an immediate, or read from the options' map_table. */
static void ptx_emit_map_addr(struct ptx_ctx *c, const char *reg, size_t k, int value,
			      uint64_t off)
{
	const struct ptx_map_ref *r = c->o->maps ? &c->o->maps[k] : NULL;
	if (!c->o->map_table || !r) {
		uint64_t v = r ? (value ? r->value : r->map) + off : 0;
		ptx_buf_printf(c->b, "\tmov.b64 %s, 0x%016llx;\n", reg, (unsigned long long)v);
		return;
	}
	ptx_buf_printf(c->b, "\tld.const.u64 %s, [%s+%zu];\n", reg, c->o->map_table,
		       16 * k + 8 * (size_t)value);
	if (off)
		ptx_buf_printf(c->b, "\tadd.s64 %s, %s, %llu;\n", reg, reg, (unsigned long long)off);
}

static void ptx_emit_mem(struct ptx_ctx *c, size_t i, const struct isa_insn *in,
			 const struct ptx_stack_use *u);

/* The 32-bit key r2 points to into r0 (which the call sets anyway), as an
 * eBPF load does it: from its frame slot, or from memory (a key eBPF placed
 * misaligned is read byte by byte). */
static void ptx_emit_key(struct ptx_ctx *c, size_t i)
{
	const struct isa_insn key = {ISA_OPC_LDX_W, 0, 2, 0, 0};

	ptx_emit_mem(c, i, &key, &c->use[i]);
	ptx_buf_printf(c->b, "\tcvt.u32.u64 %%h0, %%r0;\n");
}

/* Where inline code reads the SM's id: once at the kernel's entry
 * (ptx_emit_opts.inline_smid), else %smid. */
static const char *ptx_emit_smid(const struct ptx_ctx *c)
{
	return c->inlined && c->o->inline_smid ? c->o->inline_smid : "%smid";
}

/* %t0 += the offset of this SM's copy of per-SM array r: a 32 x 32 -> 64-bit
 * product where the stride fits 32 bits (a wide multiply-add, not a 64-bit
 * one). */
static void ptx_emit_sm_copy(struct ptx_ctx *c, const struct ptx_map_ref *r)
{
	const char *sm = "%sm";
	if (c->sm_copies != r->nr_sms) {
		ptx_buf_printf(c->b, "\tmov.u32 %%h1, %s;\n\tmin.u32 %%h1, %%h1, %u;\n",
			       ptx_emit_smid(c), r->nr_sms - 1);
		sm = "%h1";
	}
	if (r->sm_stride <= UINT32_MAX)
		ptx_buf_printf(c->b, "\tmul.wide.u32 %%t1, %s, %llu;\n", sm,
			       (unsigned long long)r->sm_stride);
	else
		ptx_buf_printf(c->b, "\tcvt.u64.u32 %%t1, %s;\n\tmul.lo.u64 %%t1, %%t1, %llu;\n", sm,
			       (unsigned long long)r->sm_stride);
	ptx_buf_printf(c->b, "\tadd.s64 %%t0, %%t0, %%t1;\n");
}

/*
 * %t0 = the address of element %h0 of array r (this SM's copy of a per-SM
 * array), as the runtime's rt_array_elem computes it, with the header's
 * fields as immediates: the value's address depends on nothing in memory
 * but the key, so an atomic on it is issued at once rather than after a
 * load of the header (an update of a per-SM counter cost ~1100 cycles a warp
 * more than an empty probe on an H200 with the runtime's lookup:
 * bench/results/2026-11-22-h200-device-tools.md).  The key is not checked.
 */
static void ptx_emit_array_elem(struct ptx_ctx *c, const struct ptx_map_ref *r)
{
	uint64_t lo = r->value & UINT32_MAX;

	if (c->o->elem_low_word && !c->o->map_table && r->type != MAP_TYPE_GPU_BLOCK_ARRAY &&
	    lo + (uint64_t)r->max_entries * r->value_stride <= (uint64_t)UINT32_MAX + 1) {
		/* ptx_emit_opts.elem_low_word: the element's offset added to
		 * the low word alone, the high word a constant.  A key past
		 * max_entries may wrap; the lookup's bounds test discards it,
		 * the update's came before. */
		ptx_buf_printf(c->b, "\tmad.lo.u32 %%h1, %%h0, %u, 0x%llx;\n"
				     "\tmov.b64 %%t0, {%%h1, 0x%llx};\n",
			       r->value_stride, (unsigned long long)lo,
			       (unsigned long long)(r->value >> 32));
		if (r->type == MAP_TYPE_PERCPU_ARRAY)
			ptx_emit_sm_copy(c, r);
		return;
	}
	ptx_buf_printf(c->b, "\tmul.wide.u32 %%t0, %%h0, %u;\n", r->value_stride);
	if (r->type == MAP_TYPE_GPU_BLOCK_ARRAY) {
		/* the block's own copy: the injector's .shared array, as a generic
		 * address (so the program's loads, stores and atomics on it need no
		 * space of their own; atomics on it resolve to shared ones) */
		char sym[PTX_BLOCK_ARRAY_SYM_LEN];
		ptx_block_array_sym((size_t)(r - c->o->maps), sym, sizeof(sym));
		ptx_buf_printf(c->b, "\tmov.u64 %%t2, %s;\n\tcvta.shared.u64 %%t2, %%t2;\n"
				     "\tadd.s64 %%t0, %%t0, %%t2;\n", sym);
		return;
	}
	if (c->o->map_table) { /* %t2 is free here, in a lookup and an update */
		ptx_emit_map_addr(c, "%t2", (size_t)(r - c->o->maps), 1, 0);
		ptx_buf_printf(c->b, "\tadd.s64 %%t0, %%t0, %%t2;\n");
	} else {
		ptx_buf_printf(c->b, "\tadd.s64 %%t0, %%t0, 0x%llx;\n", (unsigned long long)r->value);
	}
	if (r->type == MAP_TYPE_PERCPU_ARRAY)
		ptx_emit_sm_copy(c, r);
}


/*
 * The number of copies every inline per-SM array access of function fn
 * has, when they agree: 0 when there are none or they differ.  The copy,
 * min(%smid, copies - 1) as the runtime's rt_sm_copy, is then read once at
 * the function's start: a warp that moved to another SM meanwhile
 * (preemption) counts in the copy it started on, which the host adds like
 * any other.
 */
static uint32_t ptx_fn_sm_copies(const struct ptx_ctx *c, const struct ptx_fn *fn)
{
	uint32_t n = 0;

	for (size_t i = fn->start; i < fn->end; i++) {
		const struct isa_insn *in = &c->p->insns[i];
		const struct ptx_map_ref *r;
		if (in->code != ISA_OPC_JMP_CALL || in->src != ISA_CALL_HELPER ||
		    !(r = ptx_inline_array(c, i, in)) || r->type != MAP_TYPE_PERCPU_ARRAY)
			continue;
		if (n && n != r->nr_sms)
			return 0;
		n = r->nr_sms;
	}
	return n;
}

/* Does function fn look up a block-local array inline (ptx_emit_shared_def)? */
static int ptx_fn_block_arrays(const struct ptx_ctx *c, const struct ptx_fn *fn)
{
	for (size_t i = fn->start; i < fn->end; i++)
		if (c->p->insns[i].code == ISA_OPC_JMP_CALL && c->calls[i].block_array)
			return 1;
	return 0;
}

/* bpf_map_lookup_elem on an array: the element, NULL past max_entries (no
 * test where ptx_stack proved the key below it). */
static void ptx_emit_array_lookup(struct ptx_ctx *c, size_t i, const struct ptx_map_ref *r)
{
	int in_range = c->use[i].key_in_range;

	ptx_buf_printf(c->b, "\t// map_lookup_elem, inline: array of %u x %u bytes%s\n",
		       r->max_entries, r->value_stride, in_range ? ", key in range" : "");
	ptx_emit_key(c, i);
	if (!in_range)
		ptx_buf_printf(c->b, "\tsetp.lt.u32 %%p0, %%h0, %u;\n", r->max_entries);
	ptx_emit_array_elem(c, r);
	if (in_range)
		ptx_buf_printf(c->b, "\tmov.b64 %%r0, %%t0;\n");
	else
		ptx_buf_printf(c->b, "\tselp.b64 %%r0, %%t0, 0, %%p0;\n");
	if (c->calls[i].block_array) { /* the shared-window address beside it */
		char sym[PTX_BLOCK_ARRAY_SYM_LEN];
		ptx_block_array_sym((size_t)(r - c->o->maps), sym, sizeof(sym));
		ptx_buf_printf(c->b, "\tmov.u32 %%sa0, %s;\n\tmad.lo.u32 %%sa0, %%h0, %u, %%sa0;\n",
			       sym, r->value_stride);
	}
}

/* n (< 8) bytes at byte `at` of the value into the element at %t0 + at,
 * from 64-bit register src holding the value's bytes at..at+7 (little
 * endian); at is 8-aligned, so each piece is aligned. */
static void ptx_emit_copy_tail(struct ptx_buf *b, const char *src, unsigned at, unsigned n)
{
	unsigned k = 0;

	for (unsigned piece = 4; piece; piece /= 2) {
		if (!(n & piece))
			continue;
		ptx_buf_printf(b, "\tshr.b64 %%t2, %s, %u;\n\tst.u%u [%%t0+%u], %%t2;\n", src, 8 * k,
			       8 * piece, at + k);
		k += piece;
	}
}

/*
 * bpf_map_update_elem on an array, with the runtime's gx_rt_map_update's
 * results: flags above BPF_EXIST -EINVAL, a key past max_entries -E2BIG,
 * BPF_NOEXIST -EEXIST (array elements always exist), else the value copied
 * in and 0.  The value comes from its frame slots when r3 points into a
 * promoted frame, else from memory (word by word when 8-aligned, byte by
 * byte when not).  The flags are r4's value at run time.
 */
static void ptx_emit_array_update(struct ptx_ctx *c, size_t i, const struct ptx_map_ref *r)
{
	struct ptx_buf *b = c->b;
	const struct ptx_stack_use *u = &c->use[i];
	unsigned words = r->value_size / 8, tail = r->value_size % 8;

	ptx_buf_printf(b, "\t// map_update_elem, inline: array of %u x %u bytes\n",
		       r->max_entries, r->value_stride);
	ptx_emit_key(c, i);
	ptx_buf_printf(b, "\tmov.b64 %%r0, %d;\n\tsetp.gt.u64 %%p1, %%r4, %d;\n\t@%%p1 bra Lm%zu;\n"
			  "\tmov.b64 %%r0, %d;\n\tsetp.ge.u32 %%p1, %%h0, %u;\n\t@%%p1 bra Lm%zu;\n"
			  "\tmov.b64 %%r0, %d;\n\tsetp.eq.u64 %%p1, %%r4, %d;\n\t@%%p1 bra Lm%zu;\n",
		       -EINVAL, MAP_EXIST, i, -E2BIG, c->use[i].key_in_range ? UINT32_MAX : r->max_entries,
		       i, -EEXIST, MAP_NOEXIST, i);
	ptx_emit_array_elem(c, r);
	if (u->value_space == PTX_SPACE_STACK) {
		unsigned s = ptx_stack_slot(u->value_off);
		char src[16];
		for (unsigned w = 0; w < words; w++)
			ptx_buf_printf(b, "\tst.u64 [%%t0+%u], %%fp%u;\n", 8 * w, s + w);
		snprintf(src, sizeof(src), "%%fp%u", s + words);
		if (tail)
			ptx_emit_copy_tail(b, src, 8 * words, tail);
	} else {
		ptx_buf_printf(b, "\tand.b64 %%t1, %%r3, 7;\n\tsetp.ne.u64 %%p1, %%t1, 0;\n"
				  "\t@%%p1 bra Lmb%zu;\n", i);
		for (unsigned w = 0; w < words; w++)
			ptx_buf_printf(b, "\tld.u64 %%t3, [%%r3+%u];\n\tst.u64 [%%t0+%u], %%t3;\n",
				       8 * w, 8 * w);
		if (tail) {
			/* the tail's bytes as one word, read piece by piece */
			unsigned k = 0;
			ptx_buf_printf(b, "\tmov.b64 %%t3, 0;\n");
			for (unsigned piece = 4; piece; piece /= 2) {
				if (!(tail & piece))
					continue;
				ptx_buf_printf(b, "\tld.u%u %%t1, [%%r3+%u];\n\tshl.b64 %%t1, %%t1, %u;\n"
						  "\tor.b64 %%t3, %%t3, %%t1;\n",
					       8 * piece, 8 * words + k, 8 * k);
				k += piece;
			}
			ptx_emit_copy_tail(b, "%t3", 8 * words, tail);
		}
		ptx_buf_printf(b, "\tbra Lmc%zu;\nLmb%zu: // misaligned value: byte by byte\n", i, i);
		for (unsigned k = 0; k < r->value_size; k++)
			ptx_buf_printf(b, "\tld.u8 %%t3, [%%r3+%u];\n\tst.u8 [%%t0+%u], %%t3;\n", k, k);
		ptx_buf_printf(b, "Lmc%zu:\n", i);
	}
	ptx_buf_printf(b, "\tmov.b64 %%r0, 0;\nLm%zu:\n", i);
}

/* The operand bpf_gpu_launch_id() reads in the code being written (only
 * function 0 of an inline block runs in the kernel's scope), "0" where
 * there is no launch, NULL where the id exists but is out of reach. */
static const char *ptx_launch_id(const struct ptx_ctx *c)
{
	const char *id = c->o->launch_id;
	if (!id)
		return "0";
	return c->inlined && *id ? id : NULL;
}

/*
 * Is r0 dead after the call at instruction i: written before anything
 * reads it on the straight-line code that follows?  A branch or exit ends
 * the look (exit returns r0) and counts as a read.
 */
static int ptx_r0_dead_after(const struct ptx_ctx *c, size_t i)
{
	size_t end = c->fns[ptx_fn_of(c, i)].end;

	for (size_t k = i + 1; k < end; k++) {
		const struct isa_insn *in = &c->p->insns[k];
		unsigned cls = ISA_CLASS(in->code);
		if (in->code == ISA_OPC_JMP_CALL)
			return 1; /* reads r1..r5, sets r0 */
		if (cls == ISA_JMP || cls == ISA_JMP32)
			return 0;
		if (cls == ISA_ALU || cls == ISA_ALU64) {
			if (ISA_SRC(in->code) == ISA_X && in->src == 0)
				return 0;
			if (in->dst == 0)
				return ISA_OP(in->code) == ISA_ALU_MOV;
		} else if (cls == ISA_LDX) {
			if (in->src == 0)
				return 0;
			if (in->dst == 0)
				return 1;
		} else if (cls == ISA_LD) {
			if (in->dst == 0)
				return 1;
			k++; /* LD_IMM64's second slot */
		} else if (in->dst == 0 || (cls == ISA_STX && in->src == 0)) {
			return 0; /* a store through r0 or of it */
		}
	}
	return 0;
}

/*
 * bpf_gpu_atomic_max(dst, val): r0 = the old *dst, *dst = max(*dst, val),
 * unsigned 64-bit.  A `red` where r0 is dead after the call (nothing waits
 * for the update: a warp retires without its round trip), else `atom`;
 * .global where ptx_stack proved dst a device map's value, .shared for a
 * block-local array's, else a generic address, where only an unverified
 * program (the verifier wants a map value) can point into the stack: that
 * is thread-private, so a plain load, max and store there.
 */
static void ptx_emit_atomic_max(struct ptx_ctx *c, size_t i)
{
	struct ptx_buf *b = c->b;
	const struct ptx_stack_use *u = &c->use[i];
	int dead = ptx_r0_dead_after(c, i);
	int shared = u->space == PTX_SPACE_SHARED, global = u->space == PTX_SPACE_GLOBAL;
	const char *sp = shared ? ".shared" : global ? ".global" : "";
	const char *addr = shared ? "%sa1" : "%r1";
	int local = !c->no_local && !shared && !global;

	if (local)
		ptx_buf_printf(b, "\tisspacep.local %%p0, %%r1;\n\t@%%p0 bra La%zu;\n", i);
	if (dead)
		ptx_buf_printf(b, "\tred%s.max.u64 [%s], %%r2;\n", sp, addr);
	else
		ptx_buf_printf(b, "\tatom%s.max.u64 %%r0, [%s], %%r2;\n", sp, addr);
	if (local)
		ptx_buf_printf(b, "\tbra Lb%zu;\nLa%zu: // the stack: thread-private\n"
				  "\tld.u64 %%t2, [%%r1];\n\tmax.u64 %%t3, %%t2, %%r2;\n"
				  "\tst.u64 [%%r1], %%t3;\n\tmov.b64 %%r0, %%t2;\nLb%zu:\n", i, i, i);
}

static int ptx_emit_helper_call(struct ptx_ctx *c, size_t i, const struct isa_insn *in,
				struct err *e)
{
	struct ptx_buf *b = c->b;
	const struct ptx_helper *h;
	const struct ptx_map_ref *arr;
	unsigned n = 0;

	if (c->o->conformance_helpers && in->imm == HELPER_KTIME_GET_NS) {
		ptx_buf_printf(b, "\tmov.b64 %%r0, %%r1; // conformance: helper 5 returns r1\n");
		return 0;
	}
	if (in->imm == HELPER_GPU_ATOMIC_MAX) {
		ptx_emit_atomic_max(c, i);
		return 0;
	}
	int intrin = in->imm >= 0 ? ptx_intrin_emit(b, (uint32_t)in->imm, ptx_launch_id(c),
						    c->inlined ? c->o->block_index : NULL)
				  : 0;
	if (intrin < 0)
		return err_set(e, ENOTSUP, "insn %zu: bpf_gpu_launch_id() is only available in "
			       "the main function of gpu/entry, gpu/exit and gpu/block_* programs "
			       "(bpf-to-bpf callees and gpu/mem programs cannot reach it)", i);
	if (intrin)
		return 0;
	if ((arr = ptx_inline_array(c, i, in))) {
		if (in->imm == HELPER_MAP_LOOKUP_ELEM)
			ptx_emit_array_lookup(c, i, arr);
		else
			ptx_emit_array_update(c, i, arr);
		return 0;
	}
	int m = c->call_map[i];
	if ((in->imm == HELPER_MAP_LOOKUP_ELEM || in->imm == HELPER_MAP_UPDATE_ELEM ||
	     in->imm == HELPER_MAP_DELETE_ELEM) &&
	    m >= 0 && c->o->maps && (size_t)m < c->p->map_cnt &&
	    c->o->maps[m].type == MAP_TYPE_GPU_BLOCK_ARRAY)
		/* the runtime cannot reach a block's shared memory */
		return err_set(e, ENOTSUP,
			       "insn %zu: helper %d on block-local array map %d: only lookups and "
			       "updates of values up to %d bytes work on the GPU", i, in->imm, m,
			       PTX_INLINE_UPDATE_MAX);
	h = in->imm < 0 ? NULL : ptx_helper_find((uint32_t)in->imm);
	if (!h)
		return err_set(e, ENOTSUP, "insn %zu: helper %d is not available on the GPU", i,
			       in->imm);
	ptx_buf_printf(b, "\t{ // %s\n", h->proto.name);
	for (unsigned a = 0; a < h->nargs; a++, n++)
		ptx_buf_printf(b, "\t.param .b64 q%u;\n\tst.param.b64 [q%u], %%r%u;\n", n, n,
			       a + 1);
	if (h->hidden & PTX_HX_WARP) {
		ptx_buf_printf(b, "\t.param .b64 q%u;\n\tst.param.b64 [q%u], %%warp;\n", n, n);
		n++;
	}
	if (h->hidden & PTX_HX_TRACE_RING) {
		ptx_buf_printf(b, "\t.param .b64 q%u;\n\tst.param.b64 [q%u], %llu;\n", n, n,
			       (unsigned long long)c->o->trace_ring);
		n++;
	}
	ptx_buf_printf(b, "\t.param .b64 rq;\n\tcall.uni (rq), %s", h->rt_func);
	if (n) {
		ptx_buf_printf(b, ", (");
		for (unsigned a = 0; a < n; a++)
			ptx_buf_printf(b, "%sq%u", a ? ", " : "", a);
		ptx_buf_printf(b, ")");
	}
	ptx_buf_printf(b, ";\n\tld.param.b64 %%r0, [rq];\n\t}\n");
	return 0;
}

/*
 * callx (uBPF's, not RFC 9669): the helper whose id is in dst.  A compare
 * chain over the device runtime's helpers; an id it lacks gives r0 =
 * -ENOENT, since a GPU program cannot be stopped half-way (the verifier
 * refuses callx, so only unverified runs such as conformance cases get here).
 */
static int ptx_emit_callx(struct ptx_ctx *c, size_t i, const struct isa_insn *in,
			  struct err *e)
{
	struct ptx_buf *b = c->b;
	uint32_t ids[HELPER_GPU_LAST + 1];
	size_t n = 0;

	for (uint32_t id = 1; id <= HELPER_GPU_LAST; id++)
		if (ptx_helper_find(id) && (id != HELPER_GPU_LAUNCH_ID || ptx_launch_id(c)))
			ids[n++] = id;
	for (size_t k = 0; k < n; k++)
		ptx_buf_printf(b, "\tsetp.eq.u64 %%p0, %%r%u, %u;\n\t@%%p0 bra Lx%zu_%u;\n", in->dst,
			       ids[k], i, ids[k]);
	ptx_buf_printf(b, "\tmov.b64 %%r0, %d;\n\tbra Lxe%zu;\n", -ENOENT, i);
	for (size_t k = 0; k < n; k++) {
		struct isa_insn call = {ISA_OPC_JMP_CALL, 0, ISA_CALL_HELPER, 0, (int32_t)ids[k]};
		ptx_buf_printf(b, "Lx%zu_%u:\n", i, ids[k]);
		int err = ptx_emit_helper_call(c, i, &call, e);
		if (err)
			return err;
		ptx_buf_printf(b, "\tbra Lxe%zu;\n", i);
	}
	ptx_buf_printf(b, "Lxe%zu:\n", i);
	return 0;
}

static int ptx_emit_call(struct ptx_ctx *c, size_t i, const struct isa_insn *in,
			 struct err *e)
{
	struct ptx_buf *b = c->b;

	if (in->src == ISA_CALL_HELPER)
		return ptx_emit_helper_call(c, i, in, e);
	if (in->src != ISA_CALL_LOCAL)
		return err_set(e, ENOTSUP, "insn %zu: kfunc calls are not supported on the GPU",
			       i);
	size_t f = ptx_fn_of(c, (size_t)((int64_t)i + in->imm + 1));
	ptx_buf_printf(b, "\t{\n");
	for (unsigned a = 1; a <= 5; a++)
		ptx_buf_printf(b, "\t.param .b64 q%u;\n\tst.param.b64 [q%u], %%r%u;\n", a, a, a);
	ptx_buf_printf(b, "\t.param .b64 qw;\n\tst.param.b64 [qw], %%warp;\n"
			  "\t.param .b64 rq;\n"
			  "\tcall.uni (rq), %s_f%zu, (q1, q2, q3, q4, q5, qw);\n"
			  "\tld.param.b64 %%r0, [rq];\n\t}\n", c->sym, f);
	return 0;
}

static int ptx_emit_ld_imm64(struct ptx_ctx *c, size_t i, const struct isa_insn *in,
			     struct err *e)
{
	const struct isa_insn *next = &c->p->insns[i + 1];
	uint64_t v;

	switch (in->src) {
	case ISA_PSEUDO_NONE:
		v = (uint64_t)(uint32_t)in->imm | (uint64_t)(uint32_t)next->imm << 32;
		break;
	case ISA_PSEUDO_MAP_FD:
	case ISA_PSEUDO_MAP_VALUE:
		if (in->imm < 0 || (size_t)in->imm >= c->p->map_cnt)
			return err_set(e, EINVAL, "insn %zu: map index %d, the program has %zu maps",
				       i, in->imm, c->p->map_cnt);
		char reg[16];
		snprintf(reg, sizeof(reg), "%%r%u", in->dst);
		ptx_emit_map_addr(c, reg, (size_t)in->imm, in->src == ISA_PSEUDO_MAP_VALUE,
				  in->src == ISA_PSEUDO_MAP_VALUE ? (uint32_t)next->imm : 0);
		return 0;
	default:
		return err_set(e, ENOTSUP, "insn %zu: LD_IMM64 source %u is not supported on the GPU",
			       i, in->src);
	}
	ptx_buf_printf(c->b, "\tmov.b64 %%r%u, 0x%016llx;\n", in->dst, (unsigned long long)v);
	return 0;
}

static const char *ptx_mem_type(uint8_t code, int sign)
{
	switch (ISA_SIZE(code)) {
	case ISA_B: return sign ? "s8" : "u8";
	case ISA_H: return sign ? "s16" : "u16";
	case ISA_W: return sign ? "s32" : "u32";
	default: return "u64";
	}
}

/*
 * Loads and stores.  eBPF allows any alignment (x86 does), a GPU faults on a
 * misaligned access and loses its context.  Stack accesses at offsets that
 * are multiples of the size are aligned by construction (the frame is
 * 8-aligned), and so are accesses into a device map's value where ptx_stack
 * knows the address mod 8; every other multi-byte access tests the address
 * and takes a byte-by-byte path when it is misaligned.
 */
/*
 * An access that ptx_stack proved is to a frame slot kept in a register
 * (%fpN) or to a field of the probe's ctx (o->inline_ctx): a move, or a
 * bit-field extract or insert at the access' byte in the 8-byte word.
 */
static void ptx_emit_mem_reg(struct ptx_ctx *c, const struct isa_insn *in,
			     const struct ptx_stack_use *u, const char *val)
{
	int load = ISA_CLASS(in->code) == ISA_LDX;
	unsigned size = isa_size_bytes(in->code), pos;
	char reg[64];

	if (u->space == PTX_SPACE_STACK) {
		pos = 8 * ptx_stack_byte(u->off);
		snprintf(reg, sizeof(reg), "%%fp%u", ptx_stack_slot(u->off));
	} else {
		pos = 8 * (unsigned)(u->off % 8);
		snprintf(reg, sizeof(reg), "%s%d", c->o->inline_ctx, u->off / 8);
	}
	if (load && size == 8)
		ptx_buf_printf(c->b, "\tmov.b64 %%r%u, %s;\n", in->dst, reg);
	else if (load && size == 4) { /* conversions, which ptxas folds where
				       * the word is a constant (a mem probe's
				       * size and kind); a bfe (or a shift by
				       * 0) it does not */
		char sx = ISA_MODE(in->code) == ISA_MEMSX ? 's' : 'u';
		if (pos)
			ptx_buf_printf(c->b, "\tshr.b64 %%t0, %s, %u;\n\tcvt.u32.u64 %%h0, %%t0;\n",
				       reg, pos);
		else
			ptx_buf_printf(c->b, "\tcvt.u32.u64 %%h0, %s;\n", reg);
		ptx_buf_printf(c->b, "\tcvt.%c64.%c32 %%r%u, %%h0;\n", sx, sx, in->dst);
	} else if (load)
		ptx_buf_printf(c->b, "\tbfe.%c64 %%r%u, %s, %u, %u;\n",
			       ISA_MODE(in->code) == ISA_MEMSX ? 's' : 'u', in->dst, reg, pos, 8 * size);
	else if (size == 8)
		ptx_buf_printf(c->b, "\tmov.b64 %s, %s;\n", reg, val);
	else
		ptx_buf_printf(c->b, "\tbfi.b64 %s, %s, %s, %u, %u;\n", reg, val, reg, pos, 8 * size);
}

static void ptx_emit_mem(struct ptx_ctx *c, size_t i, const struct isa_insn *in,
			 const struct ptx_stack_use *u)
{
	struct ptx_buf *b = c->b;
	int load = ISA_CLASS(in->code) == ISA_LDX;
	int sign = load && ISA_MODE(in->code) == ISA_MEMSX;
	unsigned size = isa_size_bytes(in->code), base = load ? in->src : in->dst;
	const char *type = ptx_mem_type(in->code, sign);
	/* a block-local array: .shared instructions on the address in the
	 * shared window (%saN, ptx_emit_shared_def); a device map's value:
	 * .global ones on the generic address (global memory's window is the
	 * identity); the same code otherwise */
	int shared = u->space == PTX_SPACE_SHARED, global = u->space == PTX_SPACE_GLOBAL;
	const char *sp = shared ? ".shared" : global ? ".global" : "";
	int aligned = size == 1 || (base == ISA_REG_FP && in->off % (int)size == 0) ||
		      ((global || shared) && u->off >= 0 &&
		       u->off % (int)size == 0); /* off: the address mod 8 */
	char val[8], breg[8];

	if (ISA_CLASS(in->code) == ISA_ST) {
		ptx_buf_printf(b, "\tmov.b64 %%t0, %lld;\n", (long long)in->imm);
		strcpy(val, "%t0");
	} else {
		sprintf(val, "%%r%u", in->src);
	}
	if (u->space == PTX_SPACE_STACK || u->space == PTX_SPACE_CTX) {
		ptx_emit_mem_reg(c, in, u, val);
		return;
	}
	snprintf(breg, sizeof(breg), shared ? "%%sa%u" : "%%r%u", base);
	if (shared && !aligned) { /* the test's 64-bit arithmetic */
		ptx_buf_printf(b, "\tcvt.u64.u32 %%t4, %%sa%u;\n", base);
		strcpy(breg, "%t4");
	}
	if (aligned) {
		if (load)
			ptx_buf_printf(b, "\tld%s.%s %%r%u, [%s+%d];\n", sp, type, in->dst, breg,
				       in->off);
		else
			ptx_buf_printf(b, "\tst%s.%s [%s+%d], %s;\n", sp, type, breg, in->off, val);
		return;
	}
	ptx_buf_printf(b, "\tadd.s64 %%t1, %s, %d;\n\tand.b64 %%t2, %%t1, %u;\n"
			  "\tsetp.ne.u64 %%p1, %%t2, 0;\n\t@%%p1 bra Lu%zu;\n", breg, in->off,
		       size - 1, i);
	if (load)
		ptx_buf_printf(b, "\tld%s.%s %%r%u, [%%t1];\n", sp, type, in->dst);
	else
		ptx_buf_printf(b, "\tst%s.%s [%%t1], %s;\n", sp, type, val);
	ptx_buf_printf(b, "\tbra Ld%zu;\nLu%zu: // misaligned: byte by byte\n", i, i);
	if (load) {
		ptx_buf_printf(b, "\tld%s.u8 %%t2, [%%t1];\n", sp);
		for (unsigned k = 1; k < size; k++)
			ptx_buf_printf(b, "\tld%s.u8 %%t3, [%%t1+%u];\n\tshl.b64 %%t3, %%t3, %u;\n"
					  "\tor.b64 %%t2, %%t2, %%t3;\n", sp, k, 8 * k);
		if (sign)
			ptx_buf_printf(b, "\tbfe.s64 %%t2, %%t2, 0, %u;\n", 8 * size);
		ptx_buf_printf(b, "\tmov.b64 %%r%u, %%t2;\n", in->dst);
	} else {
		for (unsigned k = 0; k < size; k++)
			ptx_buf_printf(b, "\tshr.u64 %%t3, %s, %u;\n\tst%s.u8 [%%t1+%u], %%t3;\n",
				       val, 8 * k, sp, k);
	}
	ptx_buf_printf(b, "Ld%zu:\n", i);
}

static int ptx_emit_atomic(struct ptx_ctx *c, size_t i, const struct isa_insn *in,
			   struct err *e)
{
	struct ptx_buf *b = c->b;
	int w = ISA_SIZE(in->code) == ISA_DW ? 64 : 32;
	const char *op, *lop;
	/* 32-bit: value %h1, old %h2, new %h3; 64-bit: %t0, %t2, %t3. */
	const char *val = w == 64 ? "%t0" : "%h1", *old = w == 64 ? "%t2" : "%h2",
		   *nw = w == 64 ? "%t3" : "%h3";

	switch (in->imm & ~ISA_FETCH) {
	case ISA_ATOMIC_ADD: op = "add"; lop = "add"; break;
	case ISA_ATOMIC_OR: op = "or"; lop = "or"; break;
	case ISA_ATOMIC_AND: op = "and"; lop = "and"; break;
	case ISA_ATOMIC_XOR: op = "xor"; lop = "xor"; break;
	case ISA_ATOMIC_XCHG & ~ISA_FETCH: op = "exch"; lop = NULL; break;
	case ISA_ATOMIC_CMPXCHG & ~ISA_FETCH: op = "cas"; lop = NULL; break;
	default:
		return err_set(e, EINVAL, "insn %zu: unknown atomic operation 0x%x", i, in->imm);
	}
	if (!lop && !(in->imm & ISA_FETCH))
		return err_set(e, EINVAL, "insn %zu: atomic %s needs the fetch flag", i, op);
	/* a block-local array (ptx_stack): a shared atomic; a device map's
	 * value: a global one; never the stack */
	int shared = c->use[i].space == PTX_SPACE_SHARED;
	int global = c->use[i].space == PTX_SPACE_GLOBAL;
	const char *sp = shared ? ".shared" : global ? ".global" : "";
	char addr[32]; /* shared: the shared-window address (ptx_emit_shared_def) */
	if (shared) {
		snprintf(addr, sizeof(addr), "%%sa%u+%d", in->dst, in->off);
	} else {
		ptx_buf_printf(b, "\tadd.s64 %%t1, %%r%u, %d;\n", in->dst, in->off);
		strcpy(addr, "%t1");
	}
	if (w == 64)
		ptx_buf_printf(b, "\tmov.b64 %%t0, %%r%u;\n", in->src);
	else
		ptx_buf_printf(b, "\tcvt.u32.u64 %%h1, %%r%u;\n", in->src);
	if (in->imm == ISA_ATOMIC_CMPXCHG) {
		if (w == 64)
			ptx_buf_printf(b, "\tmov.b64 %%t3, %%r0;\n");
		else
			ptx_buf_printf(b, "\tcvt.u32.u64 %%h0, %%r0;\n");
	}
	const char *cmpv = w == 64 ? "%t3" : "%h0";
	int local = !c->no_local && !shared && !global;
	if (local)
		ptx_buf_printf(b, "\tisspacep.local %%p0, %%t1;\n\t@%%p0 bra La%zu;\n", i);
	/* global or shared: a real atomic on the generic address; without
	 * the fetch flag a reduction, which no later instruction waits for */
	if (in->imm == ISA_ATOMIC_CMPXCHG)
		ptx_buf_printf(b, "\tatom%s.cas.b%d %s, [%s], %s, %s;\n", sp, w, old, addr, cmpv, val);
	else if (!(in->imm & ISA_FETCH))
		ptx_buf_printf(b, "\tred%s.%s.%s%d [%s], %s;\n", sp, op,
			       !strcmp(op, "add") ? "u" : "b", w, addr, val);
	else
		ptx_buf_printf(b, "\tatom%s.%s.%s%d %s, [%s], %s;\n", sp, op,
			       !strcmp(op, "add") ? "u" : "b", w, old, addr, val);
	if (local) {
		ptx_buf_printf(b, "\tbra Lb%zu;\nLa%zu: // the stack: thread-private\n", i, i);
		ptx_buf_printf(b, "\tld.u%d %s, [%%t1];\n", w, old);
		if (lop)
			ptx_buf_printf(b, "\t%s.%s%d %s, %s, %s;\n", lop,
				       !strcmp(lop, "add") ? "s" : "b", w, nw, old, val);
		else if (in->imm == ISA_ATOMIC_XCHG)
			ptx_buf_printf(b, "\tmov.b%d %s, %s;\n", w, nw, val);
		else
			ptx_buf_printf(b, "\tsetp.eq.b%d %%p1, %s, %s;\n\tselp.b%d %s, %s, %s, %%p1;\n",
				       w, old, cmpv, w, nw, val, old);
		ptx_buf_printf(b, "\tst.u%d [%%t1], %s;\nLb%zu:\n", w, nw, i);
	}
	if (in->imm & ISA_FETCH) {
		unsigned r = in->imm == ISA_ATOMIC_CMPXCHG ? 0 : in->src;
		if (w == 64)
			ptx_buf_printf(b, "\tmov.b64 %%r%u, %s;\n", r, old);
		else
			ptx_buf_printf(b, "\tcvt.u64.u32 %%r%u, %s;\n", r, old);
	}
	return 0;
}

static int ptx_emit_insn(struct ptx_ctx *c, size_t i, struct err *e)
{
	const struct isa_insn *in = &c->p->insns[i];
	struct ptx_buf *b = c->b;

	switch (in->code) {
	case ISA_OPC_LD_IMM64:
		if (i + 1 >= c->p->insn_cnt)
			return err_set(e, EINVAL, "insn %zu: LD_IMM64 without its second slot", i);
		return ptx_emit_ld_imm64(c, i, in, e);
	case ISA_OPC_JMP_JA:
	case ISA_OPC_JMP32_JA: {
		int64_t t = (int64_t)i + (in->code == ISA_OPC_JMP_JA ? in->off : in->imm) + 1;
		int err = ptx_check_target(c, i, t, e);
		if (!err)
			ptx_buf_printf(b, "\tbra L%lld;\n", (long long)t);
		return err;
	}
	case ISA_OPC_JMP_CALL:
		return ptx_emit_call(c, i, in, e);
	case ISA_OPC_JMP_CALLX:
		return ptx_emit_callx(c, i, in, e);
	case ISA_OPC_JMP_EXIT:
		if (c->inlined)
			ptx_buf_printf(b, "\tbra LRET;\n");
		else
			ptx_buf_printf(b, "\tst.param.b64 [rv], %%r0;\n\tret;\n");
		return 0;
	case ISA_OPC_ATOMIC_W:
	case ISA_OPC_ATOMIC_DW:
		return ptx_emit_atomic(c, i, in, e);
	default:
		break;
	}
	switch (ISA_CLASS(in->code)) {
	case ISA_ALU64:
		return ptx_emit_alu64(c, i, in, e);
	case ISA_ALU:
		return ptx_emit_alu32(c, i, in, e);
	case ISA_JMP:
	case ISA_JMP32:
		return ptx_emit_jmp_cond(c, i, in, e);
	case ISA_LDX:
	case ISA_ST:
	case ISA_STX:
		ptx_emit_mem(c, i, in, &c->use[i]);
		return 0;
	default:
		return err_set(e, EINVAL, "insn %zu: unknown opcode 0x%02x", i, in->code);
	}
}

/* Bytes of one eBPF frame: what the verifier says the program uses. */
static unsigned ptx_frame_bytes(const struct prog *p)
{
	if (!p->verified || p->stack_depth > ISA_STACK_SIZE)
		return ISA_STACK_SIZE;
	return (p->stack_depth + 7) & ~7u;
}

/*
 * Which frame slots of each function, and which ctx fields of an inline
 * mem probe, live in registers (ptx_stack.h): the calls' arguments as the
 * emitter will pass them, then the analysis of each function.
 */
static int ptx_plan_stack(struct ptx_ctx *c, struct err *e)
{
	const struct prog *p = c->p;
	const struct ptx_emit_opts *o = c->o;

	c->stk = calloc(c->fn_cnt, sizeof(*c->stk));
	c->use = calloc(p->insn_cnt, sizeof(*c->use));
	c->calls = calloc(p->insn_cnt, sizeof(*c->calls));
	if (!c->stk || !c->use || !c->calls)
		return err_set(e, ENOMEM, "out of memory");
	for (size_t i = 0; i < p->insn_cnt; i++) {
		const struct isa_insn *in = &p->insns[i];
		struct ptx_stack_call *k = &c->calls[i];
		const struct ptx_map_ref *arr;
		const struct ptx_helper *h;
		if (in->code != ISA_OPC_JMP_CALL)
			continue;
		k->nargs = 5;
		if (in->src != ISA_CALL_HELPER)
			continue;
		if (o->conformance_helpers && in->imm == HELPER_KTIME_GET_NS)
			k->nargs = 1; /* returns r1 */
		else if ((arr = ptx_inline_array(c, i, in))) {
			k->nargs = in->imm == HELPER_MAP_LOOKUP_ELEM ? 2 : 4;
			k->inline_map = 1;
			k->value_bytes = in->imm == HELPER_MAP_LOOKUP_ELEM ? 0 : arr->value_size;
			k->max_entries = arr->max_entries;
			/* GPUEXT_PTX_BLOCK_GENERIC=1: accesses to block-local arrays by
			 * generic address, to compare with .shared ones in one build */
			k->block_array = arr->type == MAP_TYPE_GPU_BLOCK_ARRAY &&
					 in->imm == HELPER_MAP_LOOKUP_ELEM &&
					 !getenv("GPUEXT_PTX_BLOCK_GENERIC");
			/* GPUEXT_PTX_MAP_GENERIC=1: accesses to values of arrays in
			 * device memory by generic address with the alignment test,
			 * as before they were followed, to compare in one build */
			k->global_value = arr->type != MAP_TYPE_GPU_BLOCK_ARRAY &&
					  in->imm == HELPER_MAP_LOOKUP_ELEM &&
					  !getenv("GPUEXT_PTX_MAP_GENERIC");
		} else if (in->imm >= 0 && (h = ptx_helper_find((uint32_t)in->imm))) {
			k->nargs = (uint8_t)h->nargs;
			k->atomic_r1 = in->imm == HELPER_GPU_ATOMIC_MAX;
		}
	}
	c->no_local = 1;
	for (size_t f = 0; f < c->fn_cnt; f++) {
		int ctx = f == 0 && o->inline_out && o->inline_ctx && o->inline_ctx_bytes;
		c->stk[f].use = c->use;
		int err = ptx_stack_analyze(p, c->fns[f].start, c->fns[f].end, c->calls,
					    ctx ? o->inline_ctx_bytes : 0, &c->stk[f], e);
		if (err)
			return err;
		/* GPUEXT_PTX_STACK_FRAME=1: every frame in local memory, as
		 * before slots were promoted, to compare the two in one build */
		if (getenv("GPUEXT_PTX_STACK_FRAME")) {
			c->stk[f].promoted = c->stk[f].ctx_in_regs = 0;
			c->stk[f].slots = 0;
			for (size_t i = c->fns[f].start; i < c->fns[f].end; i++)
				c->use[i].space = c->use[i].value_space = PTX_SPACE_OTHER;
		}
		if (ctx && o->inline_ctx_mem)
			*o->inline_ctx_mem = !c->stk[f].ctx_in_regs;
		if (f == 0 && o->inline_out && o->inline_frame)
			*o->inline_frame = !c->stk[f].promoted && ptx_frame_bytes(p);
		if ((!c->stk[f].promoted && ptx_frame_bytes(p)) || (ctx && !c->stk[f].ctx_in_regs))
			c->no_local = 0;
	}
	return 0;
}

/* Function f as a .func, or function 0 as an inline block (c->inlined). */
static int ptx_emit_function(struct ptx_ctx *c, size_t f, struct err *e)
{
	struct ptx_buf *b = c->b;
	const struct ptx_fn *fn = &c->fns[f];
	const struct ptx_stack *st = &c->stk[f];
	unsigned frame = st->promoted ? 0 : ptx_frame_bytes(c->p);

	if (c->inlined) {
		ptx_buf_printf(b, "\t{ // eBPF program '%s', inline\n",
			       c->p->name ? c->p->name : "?");
	} else {
		ptx_emit_fn_decl(c, f);
		ptx_buf_printf(b, "\n{\n");
	}
	ptx_buf_printf(b, "\t.reg .b64 %%r<11>;\n\t.reg .b64 %%t<5>;\n\t.reg .b32 %%h<4>;\n"
			  "\t.reg .pred %%p<2>;\n\t.reg .b64 %%warp;\n");
	if (frame)
		ptx_buf_printf(b, "\t.local .align 8 .b8 stack[%u];\n", frame);
	if (ptx_fn_block_arrays(c, fn)) /* ptx_emit_shared_def */
		ptx_buf_printf(b, "\t.reg .b32 %%sa<11>;\n");
	if ((c->sm_copies = ptx_fn_sm_copies(c, fn)))
		ptx_buf_printf(b, "\t.reg .b32 %%sm;\n\tmov.u32 %%sm, %s;\n"
				  "\tmin.u32 %%sm, %%sm, %u;\n", ptx_emit_smid(c), c->sm_copies - 1);
	if (st->slots) { /* the frame's slots in registers, zeroed as memory would not be:
			  * a narrow store inserts into the slot's old bits */
		ptx_buf_printf(b, "\t.reg .b64 %%fp<%u>;\n", PTX_STACK_SLOTS);
		for (unsigned k = 0; k < PTX_STACK_SLOTS; k++)
			if (st->slots >> k & 1)
				ptx_buf_printf(b, "\tmov.b64 %%fp%u, 0;\n", k);
	}
	if (c->inlined) {
		ptx_buf_printf(b, "\tmov.b64 %%r1, %s;\n", c->o->inline_r1);
		for (unsigned r = 2; r <= 5; r++)
			ptx_buf_printf(b, "\tmov.b64 %%r%u, 0;\n", r);
		ptx_buf_printf(b, "\tmov.b64 %%warp, %s;\n", c->o->inline_warp);
	} else {
		for (unsigned r = 1; r <= 5; r++)
			ptx_buf_printf(b, "\tld.param.b64 %%r%u, [a%u];\n", r, r);
		ptx_buf_printf(b, "\tld.param.b64 %%warp, [aw];\n");
	}
	if (frame)
		ptx_buf_printf(b, "\tmov.u64 %%r10, stack;\n\tcvta.local.u64 %%r10, %%r10;\n"
				  "\tadd.s64 %%r10, %%r10, %u;\n", frame);
	else /* no access through it, or only to slots kept in registers */
		ptx_buf_printf(b, "\tmov.b64 %%r10, 0;\n");
	/* Defined values for registers the verifier would reject reading. */
	ptx_buf_printf(b, "\tmov.b64 %%r0, 0;\n");
	for (unsigned r = 6; r <= 9; r++)
		ptx_buf_printf(b, "\tmov.b64 %%r%u, 0;\n", r);
	for (size_t i = fn->start; i < fn->end; i++) {
		if (c->o->comments)
			ptx_emit_comment(c, i);
		if (c->target[i]) /* only where a jump lands: the text is pasted */
			ptx_buf_printf(b, "L%zu:\n", i);
		int err = ptx_emit_insn(c, i, e);
		if (err)
			return err;
		if (c->p->insns[i].code == ISA_OPC_LD_IMM64)
			i++;
	}
	/* Falling off the end is rejected by the verifier; keep PTX well-formed. */
	if (c->inlined)
		ptx_buf_printf(b, "LRET:\n\t}\n");
	else
		ptx_buf_printf(b, "\tst.param.b64 [rv], %%r0;\n\tret;\n}\n\n");
	return 0;
}

int ptx_emit_prog(struct ptx_buf *b, const struct prog *p, const struct ptx_emit_opts *o,
		  char *sym_out, struct err *e)
{
	static const struct ptx_emit_opts defaults;
	char sym[128];
	struct ptx_ctx c = {.b = b, .p = p, .o = o ? o : &defaults, .sym = sym};
	struct ptx_buf *in = c.o->inline_out;
	/* on error the buffers are left as they were */
	size_t start = b->len, in_start = in ? in->len : 0;
	int err;

	if (!p->insn_cnt)
		return err_set(e, EINVAL, "program '%s' has no instructions",
			       p->name ? p->name : "?");
	if (c.o->symbol) {
		if (!ptx_symbol_valid(c.o->symbol) || strlen(c.o->symbol) >= sizeof(sym))
			return err_set(e, EINVAL, "'%s' is not a valid PTX symbol prefix",
				       c.o->symbol);
		strcpy(sym, c.o->symbol);
	} else {
		ptx_emit_symbol(p->name, sym, sizeof(sym));
	}
	err = ptx_split_functions(&c, e);
	if (!err)
		err = ptx_find_const_maps(&c, e);
	if (!err)
		err = ptx_plan_stack(&c, e);
	if (err)
		goto out;
	ptx_buf_printf(b, "// eBPF program '%s' (%zu instructions, %zu functions)\n",
		       p->name ? p->name : "?", p->insn_cnt, c.fn_cnt);
	if (in && (!c.o->inline_r1 || !c.o->inline_warp)) {
		err = err_set(e, EINVAL, "inline mode without its input registers");
		goto out;
	}
	for (size_t f = in ? 1 : 0; f < c.fn_cnt; f++) {
		ptx_emit_fn_decl(&c, f);
		ptx_buf_printf(b, ";\n");
	}
	ptx_buf_printf(b, "\n");
	for (size_t f = 0; f < c.fn_cnt && !err; f++) {
		c.inlined = in && f == 0;
		c.b = c.inlined ? in : b;
		err = ptx_emit_function(&c, f, e);
	}
	if (!err && (b->failed || (in && in->failed)))
		err = err_set(e, ENOMEM, "out of memory writing PTX");
	if (!err && sym_out)
		strcpy(sym_out, sym);
out:
	if (err) {
		err_prefix(e, "program '%s': ", p->name ? p->name : "?");
		b->len = start;
		if (b->text)
			b->text[start] = '\0';
		if (in) {
			in->len = in_start;
			if (in->text)
				in->text[in_start] = '\0';
		}
	}
	free(c.fns);
	free(c.call_map);
	free(c.target);
	free(c.stk);
	free(c.use);
	free(c.calls);
	return err;
}

int ptx_emit_needs_runtime(const struct prog *p, const struct ptx_emit_opts *o)
{
	for (size_t i = 0; i < p->insn_cnt; i++) {
		const struct isa_insn *in = &p->insns[i];
		if (in->code == ISA_OPC_JMP_CALLX)
			return 1;
		if (in->code != ISA_OPC_JMP_CALL || in->src != ISA_CALL_HELPER)
			continue;
		if (!(o && o->conformance_helpers && in->imm == HELPER_KTIME_GET_NS))
			return 1;
	}
	return 0;
}
