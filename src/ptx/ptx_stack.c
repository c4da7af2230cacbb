/* SPDX-License-Identifier: MIT */
/*
 * ptx_stack.c - prove that a function's eBPF frame (and a mem probe's ctx)
 * is only touched at constant offsets it can see (see ptx_stack.h).
 *
 * The abstract value of a register: unknown yet (not reached), a scalar
 * (nothing derived from r10 or the ctx), frame + k, ctx + k, or "any"
 * (the join of two different things); and, among the scalars, a pointer
 * into a block-local array (or NULL): an inline lookup's result plus any
 * offset (V_SHARED, which joins with another scalar into a scalar).  Scalars include values loaded from
 * memory: a frame or ctx pointer can only get into memory through a store
 * or a helper, both of which make it escape here.
 */
#include "ptx_stack.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum val_kind { V_UNSEEN = 0, V_SCALAR, V_FP, V_CTX, V_ANY, V_SHARED };

struct val {
	uint8_t kind;
	int32_t off;
};

/*
 * A ctx pointer spilled whole to a frame slot (clang spills r1 under
 * register pressure) is followed there: an 8-byte load of the slot gives it
 * back, any other read of the slot (a narrower load, a map key or value)
 * makes it escape, and so does the frame's own escape (what is in the
 * frame is then out of sight).
 */
struct regs {
	struct val r[ISA_NR_REGS];
	struct val slot[PTX_STACK_SLOTS]; /* V_CTX: a spilled ctx pointer; else V_SCALAR */
};

struct analysis {
	const struct prog *p;
	size_t start, end;
	const struct ptx_stack_call *calls;
	struct regs *in; /* per instruction of [start, end), state on entry */
	unsigned char *seen;
	unsigned ctx_bytes; /* of the ctx r1 points to at the start; 0: none */
	int frame_escapes, ctx_escapes;
	int ctx_spilled; /* a ctx pointer was stored to a frame slot */
	struct ptx_stack *st;
};

static struct val val_join(struct val a, struct val b)
{
	if (a.kind == V_UNSEEN)
		return b;
	if (b.kind == V_UNSEEN || (a.kind == b.kind && a.off == b.off))
		return a;
	if ((a.kind == V_SCALAR || a.kind == V_SHARED) && (b.kind == V_SCALAR || b.kind == V_SHARED))
		return (struct val){V_SCALAR, 0};
	return (struct val){V_ANY, 0};
}

static int val_is_ptr(struct val v)
{
	return v.kind == V_FP || v.kind == V_CTX || v.kind == V_ANY;
}

/* What was pointed to by v leaves the analysis' sight. */
static void escape(struct analysis *a, struct val v)
{
	if (v.kind == V_FP || v.kind == V_ANY)
		a->frame_escapes = 1;
	if (v.kind == V_CTX || v.kind == V_ANY)
		a->ctx_escapes = 1;
}

/* An access of size bytes at v + off, a write when store: recorded in use
 * (final pass) when it stays inside one slot of the frame or one word of the
 * ctx (ctx is only read). */
static void access(struct analysis *a, struct val v, int32_t off, unsigned size, int store,
		   uint8_t *space, int32_t *at)
{
	int64_t x = (int64_t)v.off + off;

	*space = PTX_SPACE_OTHER;
	if (v.kind == V_FP) {
		if (x < -ISA_STACK_SIZE || x + size > 0 || (unsigned)(x & 7) + size > 8) {
			a->frame_escapes = 1;
			return;
		}
		*space = PTX_SPACE_STACK;
		*at = (int32_t)x;
		a->st->slots |= 1ull << ptx_stack_slot((int32_t)x);
	} else if (v.kind == V_CTX) {
		if (store || x < 0 || x + size > a->ctx_bytes || (unsigned)(x & 7) + size > 8) {
			a->ctx_escapes = 1;
			return;
		}
		*space = PTX_SPACE_CTX;
		*at = (int32_t)x;
	} else if (v.kind == V_SHARED) {
		*space = PTX_SPACE_SHARED;
	} else {
		escape(a, v);
	}
}

/* The value of an inline array update read from v: whole slots of the
 * frame from an 8-aligned offset, or memory the analysis does not follow. */
static void value_arg(struct analysis *a, struct val v, uint32_t bytes, struct ptx_stack_use *u)
{
	if (v.kind != V_FP || (v.off & 7) || v.off < -ISA_STACK_SIZE ||
	    v.off + (int64_t)bytes > 0) {
		escape(a, v);
		return;
	}
	unsigned n = (bytes + 7) / 8;
	a->st->slots |= (n >= 64 ? ~0ull : (1ull << n) - 1) << ptx_stack_slot(v.off);
	u->value_space = PTX_SPACE_STACK;
	u->value_off = v.off;
}

/* The frame slot that size bytes at v + off lie in; -1 when v is not the
 * frame or they cross a slot boundary or leave the frame. */
static int frame_slot(struct val v, int32_t off, unsigned size)
{
	int64_t x = (int64_t)v.off + off;
	if (v.kind != V_FP || x < -ISA_STACK_SIZE || x + size > 0 || (unsigned)(x & 7) + size > 8)
		return -1;
	return (int)ptx_stack_slot((int32_t)x);
}

/* size bytes at v + off read as data (not an 8-byte load of one slot): a
 * pointer spilled in the slots they cover leaves the analysis' sight. */
static void read_frame(struct analysis *a, const struct regs *r, struct val v, int32_t off,
		       unsigned size)
{
	int64_t x = (int64_t)v.off + off;
	if (v.kind != V_FP)
		return;
	for (int64_t b = x & ~7ll; b < x + size; b += 8)
		if (b >= -ISA_STACK_SIZE && b < 0)
			escape(a, r->slot[ptx_stack_slot((int32_t)b)]);
}

/* Does STX i store a ctx pointer whole into a frame slot (a spill)? */
static int spills_ctx(const struct isa_insn *in, struct val dst, struct val src)
{
	return ISA_CLASS(in->code) == ISA_STX && ISA_MODE(in->code) == ISA_MEM &&
	       isa_size_bytes(in->code) == 8 && src.kind == V_CTX && frame_slot(dst, in->off, 8) >= 0;
}

/* Is code an ALU64 add/sub of a constant, which moves a pointer? */
static int moves_ptr(uint8_t code)
{
	return code == ISA_OPC_ALU64_ADD_K || code == ISA_OPC_ALU64_SUB_K;
}

/* The effect of instruction i on r (in place); with record set, what it
 * does with pointers is checked and recorded (the states are final). */
static void transfer(struct analysis *a, size_t i, struct regs *r, int record)
{
	const struct isa_insn *in = &a->p->insns[i];
	struct ptx_stack_use *u = &a->st->use[i];
	struct val *dst = in->dst < ISA_NR_REGS ? &r->r[in->dst] : NULL;
	struct val src = in->src < ISA_NR_REGS ? r->r[in->src] : (struct val){V_SCALAR, 0};
	const struct val scalar = {V_SCALAR, 0};
	uint8_t cls = ISA_CLASS(in->code);
	int x = ISA_SRC(in->code) == ISA_X;

	if (!dst)
		return; /* malformed: the emitter rejects it */
	if (in->code == ISA_OPC_LD_IMM64) {
		*dst = scalar;
		return;
	}
	if (in->code == ISA_OPC_JMP_CALL || in->code == ISA_OPC_JMP_CALLX) {
		const struct ptx_stack_call *c = &a->calls[i];
		unsigned n = in->code == ISA_OPC_JMP_CALL ? c->nargs : 5;
		if (record) {
			if (in->code == ISA_OPC_JMP_CALLX)
				escape(a, *dst);
			for (unsigned k = 1; k <= n && k <= 5; k++) {
				if (!val_is_ptr(r->r[k]))
					continue;
				if (c->inline_map && k == 2)
					access(a, r->r[2], 0, 4, 0, &u->space, &u->off);
				else if (c->inline_map && k == 3 && c->value_bytes)
					value_arg(a, r->r[3], c->value_bytes, u);
				else
					escape(a, r->r[k]);
			}
			if (c->inline_map) /* the key, the value: data */
				read_frame(a, r, r->r[2], 0, 4);
			if (c->inline_map && c->value_bytes)
				read_frame(a, r, r->r[3], 0, c->value_bytes);
		}
		for (unsigned k = 0; k <= 5; k++)
			r->r[k] = scalar;
		if (in->code == ISA_OPC_JMP_CALL && a->calls[i].block_array)
			r->r[0] = (struct val){V_SHARED, 0};
		return;
	}
	switch (cls) {
	case ISA_LDX: {
		unsigned size = isa_size_bytes(in->code);
		int s = frame_slot(src, in->off, size);
		if (record)
			access(a, src, in->off, isa_size_bytes(in->code), 0, &u->space, &u->off);
		if (record && size < 8)
			read_frame(a, r, src, in->off, size);
		/* a spilled ctx pointer comes back whole from its slot */
		*dst = s >= 0 && size == 8 ? r->slot[s] : scalar;
		return;
	}
	case ISA_ST:
	case ISA_STX:
		if (record) {
			if (in->code == ISA_OPC_ATOMIC_W || in->code == ISA_OPC_ATOMIC_DW) {
				escape(a, *dst);
				escape(a, src);
				if (dst->kind == V_SHARED)
					u->space = PTX_SPACE_SHARED;
			} else {
				access(a, *dst, in->off, isa_size_bytes(in->code), 1, &u->space,
				       &u->off);
				if (cls == ISA_STX && !spills_ctx(in, *dst, src))
					escape(a, src); /* a pointer spilled to memory */
				a->ctx_spilled |= spills_ctx(in, *dst, src);
			}
		}
		/* a narrower store keeps part of a spilled pointer: that part is
		 * read as data later */
		if (record && isa_size_bytes(in->code) < 8)
			read_frame(a, r, *dst, in->off, isa_size_bytes(in->code));
		if (frame_slot(*dst, in->off, isa_size_bytes(in->code)) >= 0)
			r->slot[frame_slot(*dst, in->off, isa_size_bytes(in->code))] =
				spills_ctx(in, *dst, src) ? src : scalar;
		if ((in->code == ISA_OPC_ATOMIC_W || in->code == ISA_OPC_ATOMIC_DW) &&
		    (in->imm & ISA_FETCH))
			r->r[in->imm == ISA_ATOMIC_CMPXCHG ? 0 : in->src] = scalar;
		return;
	case ISA_ALU64:
		if (in->code == ISA_OPC_ALU64_MOV_X && in->off == 0) {
			*dst = src;
			return;
		}
		/* a block-local array's pointer plus any scalar: the same array */
		if (dst->kind == V_SHARED &&
		    (moves_ptr(in->code) ||
		     (in->code == ISA_OPC_ALU64_ADD_X && src.kind == V_SCALAR)))
			return;
		if (in->code == ISA_OPC_ALU64_ADD_X && dst->kind == V_SCALAR && src.kind == V_SHARED) {
			*dst = src;
			return;
		}
		if (moves_ptr(in->code) && (dst->kind == V_FP || dst->kind == V_CTX)) {
			int64_t k = (int64_t)dst->off +
				    (in->code == ISA_OPC_ALU64_ADD_K ? in->imm : -(int64_t)in->imm);
			if (k >= -ISA_STACK_SIZE && k <= ISA_STACK_SIZE) {
				dst->off = (int32_t)k;
				return;
			}
		}
		/* fall through */
	case ISA_ALU: {
		int mov = ISA_OP(in->code) == ISA_ALU_MOV;
		int uses_src = x && ISA_OP(in->code) != ISA_ALU_END && ISA_OP(in->code) != ISA_ALU_NEG;
		int from_ptr = (!mov && val_is_ptr(*dst)) || (uses_src && val_is_ptr(src));
		if (record) {
			if (!mov)
				escape(a, *dst);
			if (uses_src)
				escape(a, src);
		}
		/* a pointer made something else is no longer followed */
		*dst = from_ptr ? (struct val){V_ANY, 0} : scalar;
		return;
	}
	case ISA_JMP:
	case ISA_JMP32:
		if (record && in->code != ISA_OPC_JMP_EXIT && in->code != ISA_OPC_JMP_JA &&
		    in->code != ISA_OPC_JMP32_JA) {
			escape(a, *dst);
			if (x)
				escape(a, src);
		}
		if (record && in->code == ISA_OPC_JMP_EXIT)
			escape(a, r->r[0]);
		return;
	default:
		return;
	}
}

/* Successors of i inside the function (at most two). */
static unsigned successors(const struct analysis *a, size_t i, size_t out[2])
{
	const struct isa_insn *in = &a->p->insns[i];
	unsigned n = 0;
	int64_t t = -1;

	if (in->code == ISA_OPC_JMP_EXIT)
		return 0;
	if (in->code == ISA_OPC_JMP_JA)
		t = (int64_t)i + in->off + 1;
	else if (in->code == ISA_OPC_JMP32_JA)
		t = (int64_t)i + in->imm + 1;
	else if ((ISA_CLASS(in->code) == ISA_JMP || ISA_CLASS(in->code) == ISA_JMP32) &&
		 in->code != ISA_OPC_JMP_CALL && in->code != ISA_OPC_JMP_CALLX)
		t = (int64_t)i + in->off + 1;
	if (in->code != ISA_OPC_JMP_JA && in->code != ISA_OPC_JMP32_JA) {
		size_t next = i + (in->code == ISA_OPC_LD_IMM64 ? 2 : 1);
		if (next < a->end)
			out[n++] = next;
	}
	if (t >= (int64_t)a->start && t < (int64_t)a->end)
		out[n++] = (size_t)t;
	return n;
}

/* Join s into the entry state of j; did it change? */
static int join_into(struct analysis *a, size_t j, const struct regs *s)
{
	struct regs *d = &a->in[j - a->start];
	int changed = !a->seen[j - a->start];

	a->seen[j - a->start] = 1;
	for (unsigned r = 0; r < ISA_NR_REGS + PTX_STACK_SLOTS; r++) {
		struct val *dv = r < ISA_NR_REGS ? &d->r[r] : &d->slot[r - ISA_NR_REGS];
		struct val sv = r < ISA_NR_REGS ? s->r[r] : s->slot[r - ISA_NR_REGS];
		struct val v = val_join(*dv, sv);
		if (v.kind != dv->kind || v.off != dv->off)
			changed = 1;
		*dv = v;
	}
	return changed;
}

int ptx_stack_analyze(const struct prog *p, size_t start, size_t end,
		      const struct ptx_stack_call *calls, unsigned ctx_bytes, struct ptx_stack *st,
		      struct err *e)
{
	struct analysis a = {.p = p, .start = start, .end = end, .calls = calls, .st = st,
			     .ctx_bytes = ctx_bytes};
	size_t n = end - start;
	int changed = 1;

	st->promoted = 0;
	st->ctx_in_regs = 0;
	st->slots = 0;
	memset(st->use + start, 0, n * sizeof(*st->use));
	a.in = calloc(n, sizeof(*a.in));
	a.seen = calloc(n, 1);
	if (!a.in || !a.seen) {
		free(a.in);
		free(a.seen);
		return err_set(e, ENOMEM, "out of memory");
	}
	struct regs entry;
	for (unsigned r = 0; r < ISA_NR_REGS; r++)
		entry.r[r] = (struct val){V_SCALAR, 0};
	for (unsigned s = 0; s < PTX_STACK_SLOTS; s++)
		entry.slot[s] = (struct val){V_SCALAR, 0};
	entry.r[ISA_REG_FP] = (struct val){V_FP, 0};
	if (ctx_bytes)
		entry.r[1] = (struct val){V_CTX, 0};
	join_into(&a, start, &entry);
	/* The lattice has height 3 per register: this ends after a few passes. */
	while (changed) {
		changed = 0;
		for (size_t i = start; i < end; i++) {
			if (!a.seen[i - start])
				continue;
			struct regs s = a.in[i - start];
			size_t succ[2];
			transfer(&a, i, &s, 0);
			unsigned k = successors(&a, i, succ);
			for (unsigned j = 0; j < k; j++)
				changed |= join_into(&a, succ[j], &s);
		}
	}
	for (size_t i = start; i < end; i++) {
		if (!a.seen[i - start])
			continue;
		struct regs s = a.in[i - start];
		transfer(&a, i, &s, 1);
	}
	/* what was spilled to a frame that escapes is out of sight */
	if (a.frame_escapes && a.ctx_spilled)
		a.ctx_escapes = 1;
	st->promoted = !a.frame_escapes;
	st->ctx_in_regs = ctx_bytes && !a.ctx_escapes;
	if (!st->promoted) { /* keep the memory frame: nothing is in a slot */
		st->slots = 0;
		for (size_t i = start; i < end; i++) {
			if (st->use[i].space == PTX_SPACE_STACK)
				st->use[i].space = PTX_SPACE_OTHER;
			if (st->use[i].value_space == PTX_SPACE_STACK)
				st->use[i].value_space = PTX_SPACE_OTHER;
		}
	}
	if (!st->ctx_in_regs)
		for (size_t i = start; i < end; i++)
			if (st->use[i].space == PTX_SPACE_CTX)
				st->use[i].space = PTX_SPACE_OTHER;
	free(a.in);
	free(a.seen);
	return 0;
}
