/* SPDX-License-Identifier: MIT */
/*
 * ptx_stack.c - prove that a function's eBPF frame (and a mem probe's ctx)
 * is only touched at constant offsets it can see (see ptx_stack.h).
 *
 * The abstract value of a register: unknown yet (not reached), a scalar
 * (nothing derived from r10 or the ctx), frame + k, ctx + k, or "any"
 * (the join of two different things); and, among the scalars, a pointer
 * into a block-local array (or NULL): an inline lookup's result plus any
 * offset (V_SHARED, which joins with another scalar into a scalar); and a
 * pointer into a device map's value (or NULL), an inline lookup's result
 * plus offsets (V_GLOBAL); for both, off = the address mod 8 while what was
 * added is known mod 8 (constants; scalars whose low 3 bits are known 0),
 * else -1.  Scalars include values loaded from
 * memory: a frame or ctx pointer can only get into memory through a store
 * or a helper, both of which make it escape here.
 *
 * Along the way, an upper bound of each scalar (lim: the value is below it,
 * 0 when nothing is known), its low bits known to be 0 (tz: the value is a
 * multiple of 2^tz; a shifted or masked index) and of each 4-byte unit of
 * the frame (what was
 * stored there; the promoted frame starts zeroed), through constants,
 * masks, shifts, sums and products, so that an inline lookup whose key is
 * proven below max_entries needs no bounds test (nor its result a NULL
 * test).  A bound that grows at a join that was seen before is dropped,
 * which ends the fixpoint on loops.  Units are only used where the frame is
 * promoted: then every access to it is one the analysis saw.
 */
#include "ptx_stack.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum val_kind { V_UNSEEN = 0, V_SCALAR, V_FP, V_CTX, V_ANY, V_SHARED, V_GLOBAL };

struct val {
	uint8_t kind;
	int32_t off;
	uint64_t lim; /* V_SCALAR: the value is below lim; 0: not known */
	uint8_t tz;   /* V_SCALAR: the value is a multiple of 2^tz (<= 64) */
};

enum { UNITS = PTX_STACK_SLOTS * 2, UNIT_ANY = UINT32_MAX };

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
	uint32_t unit_max[UNITS]; /* frame bytes [4u - 512, 4u - 508): at most */
};

struct analysis {
	const struct prog *p;
	size_t start, end;
	const struct ptx_stack_call *calls;
	struct regs *in; /* per instruction of [start, end), state on entry */
	unsigned char *seen;
	unsigned char *grown; /* per instruction: joins that raised a bound */
	unsigned ctx_bytes; /* of the ctx r1 points to at the start; 0: none */
	int frame_escapes, ctx_escapes;
	int ctx_spilled; /* a ctx pointer was stored to a frame slot */
	struct ptx_stack *st;
};

/* A scalar or a followed pointer into a map (which is a scalar to the frame
 * and ctx analysis). */
static int val_is_scalar(struct val v)
{
	return v.kind == V_SCALAR || v.kind == V_SHARED || v.kind == V_GLOBAL;
}

/* The largest value v may hold. */
static uint64_t val_max(struct val v)
{
	return v.kind == V_SCALAR && v.lim ? v.lim - 1 : UINT64_MAX;
}

/* A scalar of at most max. */
static struct val scalar_max(uint64_t max)
{
	return (struct val){V_SCALAR, 0, max == UINT64_MAX ? 0 : max + 1, 0};
}

static struct val val_join(struct val a, struct val b)
{
	if (a.kind == V_UNSEEN)
		return b;
	if (a.kind == V_SCALAR && b.kind == V_SCALAR) {
		struct val v = scalar_max(val_max(a) > val_max(b) ? val_max(a) : val_max(b));
		v.tz = a.tz < b.tz ? a.tz : b.tz;
		return v;
	}
	if (b.kind == V_UNSEEN || (a.kind == b.kind && a.off == b.off))
		return a;
	if (a.kind == b.kind && (a.kind == V_GLOBAL || a.kind == V_SHARED))
		return (struct val){a.kind, -1, 0, 0}; /* alignments differ */
	if (val_is_scalar(a) && val_is_scalar(b))
		return (struct val){V_SCALAR, 0, 0, 0};
	return (struct val){V_ANY, 0, 0, 0};
}

/* v + k for a map value's pointer (V_SHARED, V_GLOBAL): the address mod
 * 8, where known. */
static struct val value_add(struct val v, int64_t k)
{
	if (v.off >= 0)
		v.off = (int32_t)((v.off + (k & 7)) & 7);
	return v;
}

/* v + a scalar s: the address mod 8 stays known where s is a multiple of 8. */
static struct val value_add_scalar(struct val v, struct val s)
{
	if (s.tz < 3)
		v.off = -1;
	return v;
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
	} else if (v.kind == V_SHARED || v.kind == V_GLOBAL) {
		*space = v.kind == V_SHARED ? PTX_SPACE_SHARED : PTX_SPACE_GLOBAL;
		*at = value_add(v, off).off;
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

/* The frame unit of byte offset x (from r10). */
static unsigned unit_of(int64_t x)
{
	return (unsigned)(x + ISA_STACK_SIZE) / 4;
}

/* The bound of size bytes loaded from the frame at x (a promoted frame's
 * units; a narrow or sign-extending load by its width only). */
static uint64_t frame_load_max(const struct regs *r, int64_t x, unsigned size, int sx)
{
	if (sx)
		return UINT64_MAX;
	if (size == 4 && !(x & 3))
		return r->unit_max[unit_of(x)];
	if (size == 8 && !(x & 7) && r->unit_max[unit_of(x) + 1] == 0)
		return r->unit_max[unit_of(x)];
	return size == 8 ? UINT64_MAX : (1ull << (8 * size)) - 1;
}

/* A store of size bytes of at most max to the frame at x. */
static void frame_store(struct regs *r, int64_t x, unsigned size, uint64_t max)
{
	if (x < -ISA_STACK_SIZE || x + size > 0)
		return; /* not the frame: it escapes (access) */
	unsigned u = unit_of(x);
	if (size == 4 && !(x & 3)) {
		r->unit_max[u] = max <= UINT32_MAX ? (uint32_t)max : UNIT_ANY;
	} else if (size == 8 && !(x & 7)) {
		r->unit_max[u] = max <= UINT32_MAX ? (uint32_t)max : UNIT_ANY;
		r->unit_max[u + 1] = (uint32_t)(max >> 32);
	} else {
		for (unsigned k = u; k <= unit_of(x + size - 1); k++)
			r->unit_max[k] = UNIT_ANY;
	}
}

/* Bits a value of at most m has: (2^bits - 1) bounds an OR or XOR. */
static uint64_t bits_max(uint64_t m)
{
	uint64_t b = 0;
	while (b < m)
		b = b << 1 | 1;
	return b;
}

/*
 * The bound of ALU instruction in's result, a (dst) and b (src or the
 * immediate) at most; UINT64_MAX when not known.  32-bit operations see
 * their operands' low halves (at most UINT32_MAX unless smaller).
 */
static uint64_t alu_max(const struct isa_insn *in, uint64_t a, uint64_t b)
{
	int w32 = ISA_CLASS(in->code) == ISA_ALU;
	uint64_t top = w32 ? UINT32_MAX : UINT64_MAX, m;
	int x = ISA_SRC(in->code) == ISA_X;

	if (w32) {
		a = a > UINT32_MAX ? UINT32_MAX : a;
		b = b > UINT32_MAX ? UINT32_MAX : b;
	}
	switch (ISA_OP(in->code)) {
	case ISA_ALU_MOV:
		m = in->off ? top : b; /* movsx: the sign */
		break;
	case ISA_ALU_ADD:
		m = a + b < a ? top : a + b;
		break;
	case ISA_ALU_MUL:
		m = a && b > top / a ? top : a * b;
		break;
	case ISA_ALU_AND:
		m = a < b ? a : b;
		break;
	case ISA_ALU_OR:
	case ISA_ALU_XOR:
		m = bits_max(a > b ? a : b);
		break;
	case ISA_ALU_LSH: {
		unsigned k = (unsigned)in->imm & (w32 ? 31 : 63);
		m = x || (a && k && a > top >> k) ? top : a << k;
		break;
	}
	case ISA_ALU_RSH:
		m = x ? a : a >> ((unsigned)in->imm & (w32 ? 31 : 63));
		break;
	case ISA_ALU_DIV: /* unsigned: the quotient, or 0 by 0 */
		m = in->off ? top : !x && b ? a / b : a;
		break;
	case ISA_ALU_MOD: /* unsigned: below the divisor, or dst by 0 */
		m = in->off ? top : !x && b && b - 1 < a ? b - 1 : a;
		break;
	default: /* sub, neg, arsh, end: anything */
		m = top;
		break;
	}
	return m > top ? top : m;
}

/* The low zero bits of constant k (64 for 0). */
static uint8_t tz_of(uint64_t k)
{
	return k ? (uint8_t)__builtin_ctzll(k) : 64;
}

/*
 * The low bits known 0 of ALU instruction in's result, a (dst) and b (src
 * or the immediate) multiples of 2^a and 2^b.  A 32-bit operation's result
 * is known to its low 32 bits (and 0-extended).
 */
static uint8_t alu_tz(const struct isa_insn *in, unsigned a, unsigned b)
{
	int w32 = ISA_CLASS(in->code) == ISA_ALU, x = ISA_SRC(in->code) == ISA_X;
	unsigned t, k = (unsigned)in->imm & (w32 ? 31 : 63);

	switch (ISA_OP(in->code)) {
	case ISA_ALU_MOV:
		t = in->off ? 0 : b; /* movsx: the sign's bits */
		break;
	case ISA_ALU_ADD:
	case ISA_ALU_SUB:
	case ISA_ALU_OR:
	case ISA_ALU_XOR:
		t = a < b ? a : b;
		break;
	case ISA_ALU_NEG:
		t = a;
		break;
	case ISA_ALU_MUL:
		t = a + b;
		break;
	case ISA_ALU_AND:
		t = a > b ? a : b;
		break;
	case ISA_ALU_LSH:
		t = x ? a : a + k;
		break;
	case ISA_ALU_RSH:
		t = x || a <= k ? 0 : a - k;
		break;
	default: /* div, mod, arsh, end */
		t = 0;
		break;
	}
	t = t > 64 ? 64 : t;
	return (uint8_t)(w32 && t > 32 ? 32 : t);
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
	struct val src = in->src < ISA_NR_REGS ? r->r[in->src] : (struct val){V_SCALAR, 0, 0, 0};
	const struct val scalar = {V_SCALAR, 0, 0, 0};
	uint8_t cls = ISA_CLASS(in->code);
	int x = ISA_SRC(in->code) == ISA_X;

	if (!dst)
		return; /* malformed: the emitter rejects it */
	if (in->code == ISA_OPC_LD_IMM64) {
		*dst = scalar;
		if (in->src == ISA_PSEUDO_NONE && i + 1 < a->end) {
			uint64_t k = (uint64_t)(uint32_t)in->imm |
				     (uint64_t)(uint32_t)a->p->insns[i + 1].imm << 32;
			*dst = scalar_max(k);
			dst->tz = tz_of(k);
		}
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
				if (c->inline_map && k == 2) {
					access(a, r->r[2], 0, 4, 0, &u->space, &u->off);
					u->key_in_range = u->space == PTX_SPACE_STACK &&
							  frame_load_max(r, u->off, 4, 0) <
								  c->max_entries;
				} else if (c->inline_map && k == 3 && c->value_bytes) {
					value_arg(a, r->r[3], c->value_bytes, u);
				} else {
					escape(a, r->r[k]);
				}
			}
			if (c->atomic_r1 && r->r[1].kind == V_SHARED)
				u->space = PTX_SPACE_SHARED;
			if (c->atomic_r1 && r->r[1].kind == V_GLOBAL)
				u->space = PTX_SPACE_GLOBAL;
			if (c->inline_map) /* the key, the value: data */
				read_frame(a, r, r->r[2], 0, 4);
			if (c->inline_map && c->value_bytes)
				read_frame(a, r, r->r[3], 0, c->value_bytes);
		}
		for (unsigned k = 0; k <= 5; k++)
			r->r[k] = scalar;
		if (in->code == ISA_OPC_JMP_CALL && a->calls[i].block_array)
			r->r[0] = (struct val){V_SHARED, 0, 0, 0};
		if (in->code == ISA_OPC_JMP_CALL && a->calls[i].global_value)
			r->r[0] = (struct val){V_GLOBAL, 0, 0, 0};
		return;
	}
	switch (cls) {
	case ISA_LDX: {
		unsigned size = isa_size_bytes(in->code);
		int sx = ISA_MODE(in->code) == ISA_MEMSX, s = frame_slot(src, in->off, size);
		if (record)
			access(a, src, in->off, size, 0, &u->space, &u->off);
		if (record && size < 8)
			read_frame(a, r, src, in->off, size);
		/* a spilled ctx pointer comes back whole from its slot (V_ANY
		 * where paths spilled different things: it escapes when used) */
		if (s >= 0 && size == 8 && r->slot[s].kind != V_SCALAR)
			*dst = r->slot[s];
		else
			*dst = scalar_max(src.kind == V_FP
						  ? frame_load_max(r, (int64_t)src.off + in->off, size, sx)
					  : sx || size == 8 ? UINT64_MAX
							    : (1ull << (8 * size)) - 1);
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
				if (dst->kind == V_GLOBAL)
					u->space = PTX_SPACE_GLOBAL;
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
		if (dst->kind == V_FP && in->code != ISA_OPC_ATOMIC_W && in->code != ISA_OPC_ATOMIC_DW)
			frame_store(r, (int64_t)dst->off + in->off, isa_size_bytes(in->code),
				    cls == ISA_ST ? (uint64_t)(int64_t)in->imm : val_max(src));
		if ((in->code == ISA_OPC_ATOMIC_W || in->code == ISA_OPC_ATOMIC_DW) &&
		    (in->imm & ISA_FETCH))
			r->r[in->imm == ISA_ATOMIC_CMPXCHG ? 0 : in->src] = scalar;
		return;
	case ISA_ALU64:
		if (in->code == ISA_OPC_ALU64_MOV_X && in->off == 0) {
			if (record && src.kind == V_SHARED)
				u->shared_def = PTX_SHARED_COPY;
			*dst = src;
			return;
		}
		/* a map value's pointer (a block-local array's, a device map's)
		 * plus a constant or a scalar: the same value (in a verified
		 * program), its address mod 8 known where what was added is */
		if ((dst->kind == V_SHARED || dst->kind == V_GLOBAL) && moves_ptr(in->code)) {
			*dst = value_add(*dst, in->code == ISA_OPC_ALU64_ADD_K ? in->imm
									       : -(int64_t)in->imm);
			if (record && dst->kind == V_SHARED)
				u->shared_def = PTX_SHARED_ADD;
			return;
		}
		if (in->code == ISA_OPC_ALU64_ADD_X && (dst->kind == V_SHARED || dst->kind == V_GLOBAL) &&
		    src.kind == V_SCALAR) {
			*dst = value_add_scalar(*dst, src);
			if (record && dst->kind == V_SHARED)
				u->shared_def = PTX_SHARED_ADD;
			return;
		}
		if (in->code == ISA_OPC_ALU64_ADD_X && dst->kind == V_SCALAR &&
		    (src.kind == V_SHARED || src.kind == V_GLOBAL)) {
			*dst = value_add_scalar(src, *dst);
			if (record && dst->kind == V_SHARED)
				u->shared_def = PTX_SHARED_ADD_SRC;
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
		if (from_ptr) {
			*dst = (struct val){V_ANY, 0, 0, 0};
		} else {
			uint64_t k = cls == ISA_ALU ? (uint64_t)(uint32_t)in->imm
						    : (uint64_t)(int64_t)in->imm;
			uint8_t tz = alu_tz(in, mov || dst->kind != V_SCALAR ? 0 : dst->tz,
					    !x ? tz_of(k) : src.kind == V_SCALAR ? src.tz : 0);
			*dst = scalar_max(alu_max(in, mov ? 0 : val_max(*dst), x ? val_max(src) : k));
			dst->tz = tz;
		}
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

/* Joins that may raise a bound at one instruction before it is dropped
 * (the paths into a join point each raise it once; a loop, every turn). */
enum { GROW_LIMIT = 8 };

/* Join s into the entry state of j; did it change? */
static int join_into(struct analysis *a, size_t j, const struct regs *s)
{
	struct regs *d = &a->in[j - a->start];
	int seen = a->seen[j - a->start], changed = !seen, grew = 0;
	int widen = a->grown[j - a->start] >= GROW_LIMIT;

	a->seen[j - a->start] = 1;
	for (unsigned r = 0; r < ISA_NR_REGS + PTX_STACK_SLOTS; r++) {
		struct val *dv = r < ISA_NR_REGS ? &d->r[r] : &d->slot[r - ISA_NR_REGS];
		struct val sv = r < ISA_NR_REGS ? s->r[r] : s->slot[r - ISA_NR_REGS];
		struct val v = val_join(*dv, sv);
		if (seen && v.kind == V_SCALAR && val_max(v) > val_max(*dv)) {
			grew = 1;
			if (widen)
				v.lim = 0;
		}
		if (v.kind != dv->kind || v.off != dv->off || v.lim != dv->lim || v.tz != dv->tz)
			changed = 1;
		*dv = v;
	}
	for (unsigned u = 0; u < UNITS; u++) {
		uint32_t m = seen && d->unit_max[u] > s->unit_max[u] ? d->unit_max[u] : s->unit_max[u];
		if (seen && m > d->unit_max[u]) {
			grew = 1;
			if (widen)
				m = UNIT_ANY;
		}
		if (m != d->unit_max[u])
			changed = 1;
		d->unit_max[u] = m;
	}
	a->grown[j - a->start] += grew && !widen;
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
	a.grown = calloc(n, 1);
	if (!a.in || !a.seen || !a.grown) {
		free(a.in);
		free(a.seen);
		free(a.grown);
		return err_set(e, ENOMEM, "out of memory");
	}
	struct regs entry = {0}; /* the promoted frame starts zeroed */
	for (unsigned r = 0; r < ISA_NR_REGS; r++)
		entry.r[r] = (struct val){V_SCALAR, 0, 0, 0};
	for (unsigned k = 0; k < PTX_STACK_SLOTS; k++)
		entry.slot[k] = (struct val){V_SCALAR, 0, 0, 0};
	entry.r[ISA_REG_FP] = (struct val){V_FP, 0, 0, 0};
	if (ctx_bytes)
		entry.r[1] = (struct val){V_CTX, 0, 0, 0};
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
	if (!st->promoted) { /* keep the memory frame: nothing is in a slot,
			      * nor known of what it holds */
		st->slots = 0;
		for (size_t i = start; i < end; i++) {
			st->use[i].key_in_range = 0;
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
	free(a.grown);
	return 0;
}
