/* SPDX-License-Identifier: MIT */
/*
 * vfy_range.c - bounds of scalars (see vfy_range.h).
 *
 * Arithmetic works on a "view": the 64-bit value or its low 32 bits, each
 * with a tnum, an unsigned and a signed interval.  A 64-bit operation also
 * computes the 32-bit view where the low half of the result depends only on
 * the low halves of the operands (add, sub, mul, bitwise ops), which keeps
 * 32-bit bounds precise across 64-bit arithmetic.
 */
#include "vfy_range.h"

#include <stdio.h>

#include "isa.h"

#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIN(a, b) ((a) < (b) ? (a) : (b))

struct view {
	struct tnum var; /* zero-extended to 64 bits when w == 32 */
	uint64_t umin, umax;
	int64_t smin, smax;
	unsigned w;      /* 32 or 64 */
};

static uint64_t wmask(unsigned w) { return w == 64 ? UINT64_MAX : UINT32_MAX; }
static int64_t wsmin(unsigned w) { return w == 64 ? INT64_MIN : INT32_MIN; }
static int64_t wsmax(unsigned w) { return w == 64 ? INT64_MAX : INT32_MAX; }

/* Sign-extend the low w bits of v. */
static int64_t sext(uint64_t v, unsigned w)
{
	return w == 64 ? (int64_t)v : (int64_t)(int32_t)(uint32_t)v;
}

static struct view view_full(unsigned w)
{
	return (struct view){.var = tnum_cast(TNUM_UNKNOWN, w / 8), .umin = 0,
			     .umax = wmask(w), .smin = wsmin(w), .smax = wsmax(w), .w = w};
}

static struct view view_const(uint64_t v, unsigned w)
{
	v &= wmask(w);
	return (struct view){.var = tnum_const(v), .umin = v, .umax = v,
			     .smin = sext(v, w), .smax = sext(v, w), .w = w};
}

static struct view view64(const struct vfy_bounds *b)
{
	return (struct view){.var = b->var, .umin = b->umin, .umax = b->umax,
			     .smin = b->smin, .smax = b->smax, .w = 64};
}

static struct view view32(const struct vfy_bounds *b)
{
	return (struct view){.var = tnum_subreg(b->var), .umin = b->u32min,
			     .umax = b->u32max, .smin = b->s32min, .smax = b->s32max, .w = 32};
}

static bool view_is_const(const struct view *v) { return tnum_is_const(v->var); }

struct vfy_bounds vfy_bounds_unknown(void)
{
	return (struct vfy_bounds){.var = TNUM_UNKNOWN, .smin = INT64_MIN, .smax = INT64_MAX,
				   .umin = 0, .umax = UINT64_MAX, .s32min = INT32_MIN,
				   .s32max = INT32_MAX, .u32min = 0, .u32max = UINT32_MAX};
}

struct vfy_bounds vfy_bounds_const(uint64_t v)
{
	return (struct vfy_bounds){.var = tnum_const(v), .smin = (int64_t)v, .smax = (int64_t)v,
				   .umin = v, .umax = v, .s32min = (int32_t)(uint32_t)v,
				   .s32max = (int32_t)(uint32_t)v, .u32min = (uint32_t)v,
				   .u32max = (uint32_t)v};
}

struct vfy_bounds vfy_bounds_sized(unsigned bytes)
{
	struct vfy_bounds b = vfy_bounds_unknown();
	if (bytes < 8) {
		b.var = tnum_cast(TNUM_UNKNOWN, bytes);
		vfy_bounds_sync(&b);
	}
	return b;
}

struct vfy_bounds vfy_bounds_sized_signed(unsigned bytes)
{
	struct vfy_bounds b = vfy_bounds_unknown();
	if (bytes < 8) {
		int64_t lim = (int64_t)1 << (bytes * 8 - 1);
		b.smin = -lim;
		b.smax = lim - 1;
		vfy_bounds_sync(&b);
	}
	return b;
}

/* Do a and b have a common member? */
static bool tnum_overlap(struct tnum a, struct tnum b)
{
	return !((a.value ^ b.value) & ~(a.mask | b.mask));
}

static bool sync_once(struct vfy_bounds *b)
{
	const uint64_t sign64 = 1ull << 63;
	const uint64_t sign32 = 1ull << 31;
	struct tnum t = b->var, s = tnum_subreg(b->var);

	/* What the known bits imply for each interval. */
	b->umin = MAX(b->umin, tnum_umin(t));
	b->umax = MIN(b->umax, tnum_umax(t));
	b->smin = MAX(b->smin, (int64_t)(t.value | (t.mask & sign64)));
	b->smax = MIN(b->smax, (int64_t)((t.value | t.mask) & ~(t.mask & sign64)));
	b->u32min = MAX(b->u32min, (uint32_t)tnum_umin(s));
	b->u32max = MIN(b->u32max, (uint32_t)tnum_umax(s));
	b->s32min = MAX(b->s32min, (int32_t)(uint32_t)(s.value | (s.mask & sign32)));
	b->s32max = MIN(b->s32max, (int32_t)(uint32_t)((s.value | s.mask) & ~(s.mask & sign32)));

	/* A 64-bit interval whose upper halves agree is a 32-bit interval. */
	if ((b->umin >> 32) == (b->umax >> 32)) {
		b->u32min = MAX(b->u32min, (uint32_t)b->umin);
		b->u32max = MIN(b->u32max, (uint32_t)b->umax);
		if ((int32_t)(uint32_t)b->umin <= (int32_t)(uint32_t)b->umax) {
			b->s32min = MAX(b->s32min, (int32_t)(uint32_t)b->umin);
			b->s32max = MIN(b->s32max, (int32_t)(uint32_t)b->umax);
		}
	}
	if (((uint64_t)b->smin >> 32) == ((uint64_t)b->smax >> 32)) {
		if ((uint32_t)b->smin <= (uint32_t)b->smax) {
			b->u32min = MAX(b->u32min, (uint32_t)b->smin);
			b->u32max = MIN(b->u32max, (uint32_t)b->smax);
		}
		if ((int32_t)(uint32_t)b->smin <= (int32_t)(uint32_t)b->smax) {
			b->s32min = MAX(b->s32min, (int32_t)(uint32_t)b->smin);
			b->s32max = MIN(b->s32max, (int32_t)(uint32_t)b->smax);
		}
	}

	/* Signed and unsigned agree where the interval does not cross the sign. */
	if ((int32_t)b->u32min <= (int32_t)b->u32max) {
		b->s32min = MAX(b->s32min, (int32_t)b->u32min);
		b->s32max = MIN(b->s32max, (int32_t)b->u32max);
	}
	if ((uint32_t)b->s32min <= (uint32_t)b->s32max) {
		b->u32min = MAX(b->u32min, (uint32_t)b->s32min);
		b->u32max = MIN(b->u32max, (uint32_t)b->s32max);
	}
	if ((int64_t)b->umin <= (int64_t)b->umax) {
		b->smin = MAX(b->smin, (int64_t)b->umin);
		b->smax = MIN(b->smax, (int64_t)b->umax);
	}
	if ((uint64_t)b->smin <= (uint64_t)b->smax) {
		b->umin = MAX(b->umin, (uint64_t)b->smin);
		b->umax = MIN(b->umax, (uint64_t)b->smax);
	}

	/* With the upper half known, the 32-bit bounds bound the whole value. */
	if (!(t.mask >> 32)) {
		uint64_t hi = t.value & ~0xffffffffull;
		b->umin = MAX(b->umin, hi | b->u32min);
		b->umax = MIN(b->umax, hi | b->u32max);
		b->smin = MAX(b->smin, (int64_t)(hi | b->u32min));
		b->smax = MIN(b->smax, (int64_t)(hi | b->u32max));
	}

	if (b->umin > b->umax || b->smin > b->smax || b->u32min > b->u32max ||
	    b->s32min > b->s32max)
		return false;

	/* And the intervals back into the known bits. */
	struct tnum r = tnum_range(b->umin, b->umax);
	if (!tnum_overlap(t, r))
		return false;
	t = tnum_intersect(t, r);
	s = tnum_subreg(t);
	r = tnum_range(b->u32min, b->u32max);
	if (!tnum_overlap(s, r))
		return false;
	b->var = tnum_with_subreg(t, tnum_intersect(s, r));
	return true;
}

bool vfy_bounds_sync(struct vfy_bounds *b)
{
	for (int i = 0; i < 3; i++)
		if (!sync_once(b))
			return false;
	return true;
}

void vfy_bounds_zext32(struct vfy_bounds *b)
{
	b->var = tnum_subreg(b->var);
	b->umin = b->u32min;
	b->umax = b->u32max;
	b->smin = b->u32min;
	b->smax = b->u32max;
	if (!vfy_bounds_sync(b))
		*b = vfy_bounds_sized(4);
}

bool vfy_bounds_in(const struct vfy_bounds *a, const struct vfy_bounds *b)
{
	return a->umin <= b->umin && b->umax <= a->umax && a->smin <= b->smin &&
	       b->smax <= a->smax && a->u32min <= b->u32min && b->u32max <= a->u32max &&
	       a->s32min <= b->s32min && b->s32max <= a->s32max && tnum_in(a->var, b->var);
}

bool vfy_bounds_equal(const struct vfy_bounds *a, const struct vfy_bounds *b)
{
	return vfy_bounds_in(a, b) && vfy_bounds_in(b, a);
}

struct vfy_bounds vfy_bounds_union(const struct vfy_bounds *a, const struct vfy_bounds *b)
{
	return (struct vfy_bounds){
		.var = tnum_union(a->var, b->var),
		.smin = MIN(a->smin, b->smin), .smax = MAX(a->smax, b->smax),
		.umin = MIN(a->umin, b->umin), .umax = MAX(a->umax, b->umax),
		.s32min = MIN(a->s32min, b->s32min), .s32max = MAX(a->s32max, b->s32max),
		.u32min = MIN(a->u32min, b->u32min), .u32max = MAX(a->u32max, b->u32max)};
}

/* Signed a op b, or false if it leaves the w-bit signed range. */
static bool sadd_ok(int64_t a, int64_t b, unsigned w, int64_t *r)
{
	return !__builtin_add_overflow(a, b, r) && *r >= wsmin(w) && *r <= wsmax(w);
}

static bool ssub_ok(int64_t a, int64_t b, unsigned w, int64_t *r)
{
	return !__builtin_sub_overflow(a, b, r) && *r >= wsmin(w) && *r <= wsmax(w);
}

static struct view view_alu(struct view a, struct view b, unsigned op, int16_t off)
{
	unsigned w = a.w;
	uint64_t m = wmask(w);
	struct view r = view_full(w);
	uint64_t u;
	int64_t s1, s2;

	if (op == ISA_ALU_MOV) {
		if (!off)
			return b;
		/* movsx: sign-extend the low `off` bits of b. */
		if (b.umax < (1ull << (off - 1)))
			return b;
		int64_t lim = (int64_t)1 << (off - 1);
		r.smin = -lim;
		r.smax = lim - 1;
		return r;
	}
	if (view_is_const(&a) && view_is_const(&b) && op != ISA_ALU_DIV && op != ISA_ALU_MOD &&
	    op != ISA_ALU_ARSH) {
		uint64_t x = a.var.value, y = b.var.value, z;
		unsigned sh = (unsigned)(y & (w - 1));
		switch (op) {
		case ISA_ALU_ADD: z = x + y; break;
		case ISA_ALU_SUB: z = x - y; break;
		case ISA_ALU_MUL: z = x * y; break;
		case ISA_ALU_OR: z = x | y; break;
		case ISA_ALU_AND: z = x & y; break;
		case ISA_ALU_XOR: z = x ^ y; break;
		case ISA_ALU_LSH: z = x << sh; break;
		case ISA_ALU_RSH: z = (x & m) >> sh; break;
		case ISA_ALU_NEG: z = -x; break;
		default: return r;
		}
		return view_const(z, w);
	}

	switch (op) {
	case ISA_ALU_ADD:
		r.var = tnum_cast(tnum_add(a.var, b.var), w / 8);
		if (!__builtin_add_overflow(a.umax, b.umax, &u) && u <= m) {
			r.umin = a.umin + b.umin;
			r.umax = u;
		}
		if (sadd_ok(a.smin, b.smin, w, &s1) && sadd_ok(a.smax, b.smax, w, &s2)) {
			r.smin = s1;
			r.smax = s2;
		}
		break;
	case ISA_ALU_SUB:
		r.var = tnum_cast(tnum_sub(a.var, b.var), w / 8);
		if (a.umin >= b.umax) {
			r.umin = a.umin - b.umax;
			r.umax = a.umax - b.umin;
		}
		if (ssub_ok(a.smin, b.smax, w, &s1) && ssub_ok(a.smax, b.smin, w, &s2)) {
			r.smin = s1;
			r.smax = s2;
		}
		break;
	case ISA_ALU_MUL:
		r.var = tnum_cast(tnum_mul(a.var, b.var), w / 8);
		if (!__builtin_mul_overflow(a.umax, b.umax, &u) && u <= m) {
			r.umin = a.umin * b.umin;
			r.umax = u;
		}
		if (a.smin >= 0 && b.smin >= 0 && !__builtin_mul_overflow(a.smax, b.smax, &s2) &&
		    s2 <= wsmax(w)) {
			r.smin = a.smin * b.smin;
			r.smax = s2;
		}
		break;
	case ISA_ALU_AND:
		r.var = tnum_and(a.var, b.var);
		r.umax = MIN(a.umax, b.umax);
		break;
	case ISA_ALU_OR:
		r.var = tnum_or(a.var, b.var);
		r.umin = MAX(a.umin, b.umin);
		break;
	case ISA_ALU_XOR:
		r.var = tnum_xor(a.var, b.var);
		break;
	case ISA_ALU_LSH:
		if (view_is_const(&b)) {
			unsigned k = (unsigned)(b.var.value & (w - 1));
			r.var = tnum_cast(tnum_lshift(a.var, k), w / 8);
			if (k == 0 || (a.umax >> (w - k)) == 0) {
				r.umin = a.umin << k;
				r.umax = a.umax << k;
			}
		}
		break;
	case ISA_ALU_RSH:
		if (view_is_const(&b)) {
			unsigned k = (unsigned)(b.var.value & (w - 1));
			r.var = tnum_rshift(a.var, k);
			r.umin = a.umin >> k;
			r.umax = a.umax >> k;
		} else {
			r.umax = a.umax;
		}
		break;
	case ISA_ALU_ARSH:
		if (view_is_const(&b)) {
			unsigned k = (unsigned)(b.var.value & (w - 1));
			r.var = tnum_cast(tnum_arshift(a.var, k, w), w / 8);
			r.smin = a.smin >> k;
			r.smax = a.smax >> k;
		} else if (a.smin >= 0) {
			r.smin = 0;
			r.smax = a.smax;
		} else if (a.smax < 0) {
			r.smin = a.smin;
			r.smax = -1;
		} else {
			r.smin = a.smin;
			r.smax = a.smax;
		}
		break;
	case ISA_ALU_NEG:
		r.var = tnum_cast(tnum_neg(a.var), w / 8);
		break;
	case ISA_ALU_DIV:
		if (off)
			break; /* sdiv: any w-bit value */
		if (view_is_const(&b) && b.var.value == 0)
			return view_const(0, w);
		if (view_is_const(&b)) {
			r.umin = a.umin / b.var.value;
			r.umax = a.umax / b.var.value;
		} else {
			r.umax = a.umax;
		}
		break;
	case ISA_ALU_MOD:
		if (off)
			break; /* smod: any w-bit value */
		/* x % 0 == x, and x % y <= x: never above a.umax. */
		if (view_is_const(&b) && b.var.value == 0)
			return a;
		if (view_is_const(&b) && a.umax < b.var.value && b.umin > 0)
			return a;
		r.umax = a.umax;
		if (b.umin > 0)
			r.umax = MIN(a.umax, b.umax - 1);
		break;
	default:
		break;
	}
	return r;
}

/* Is the low half of (a op b) a function of the low halves of a and b? */
static bool low_half_only(unsigned op, int16_t off)
{
	switch (op) {
	case ISA_ALU_ADD: case ISA_ALU_SUB: case ISA_ALU_MUL: case ISA_ALU_AND:
	case ISA_ALU_OR: case ISA_ALU_XOR: case ISA_ALU_NEG:
		return true;
	case ISA_ALU_MOV:
		return !off;
	default:
		return false;
	}
}

void vfy_bounds_alu(struct vfy_bounds *dst, const struct vfy_bounds *src, unsigned op,
		    int16_t off, bool is64)
{
	struct vfy_bounds res;

	if (is64) {
		struct view r = view_alu(view64(dst), view64(src), op, off);
		struct view r32 = low_half_only(op, off) ?
					  view_alu(view32(dst), view32(src), op, off) :
					  view_full(32);
		res = (struct vfy_bounds){.var = r.var, .smin = r.smin, .smax = r.smax,
					  .umin = r.umin, .umax = r.umax,
					  .s32min = (int32_t)r32.smin, .s32max = (int32_t)r32.smax,
					  .u32min = (uint32_t)r32.umin, .u32max = (uint32_t)r32.umax};
		if (tnum_overlap(tnum_subreg(r.var), r32.var))
			res.var = tnum_with_subreg(r.var, tnum_intersect(tnum_subreg(r.var), r32.var));
	} else {
		struct view r = view_alu(view32(dst), view32(src), op, off);
		res = vfy_bounds_unknown();
		res.var = tnum_subreg(r.var);
		res.u32min = (uint32_t)r.umin;
		res.u32max = (uint32_t)r.umax;
		res.s32min = (int32_t)r.smin;
		res.s32max = (int32_t)r.smax;
		res.umin = r.umin;
		res.umax = r.umax;
		res.smin = (int64_t)r.umin;
		res.smax = (int64_t)r.umax;
	}
	/* The views are each sound, so they cannot contradict; if rounding made
	 * them, forget rather than guess. */
	if (!vfy_bounds_sync(&res))
		res = is64 ? vfy_bounds_unknown() : vfy_bounds_sized(4);
	*dst = res;
}

void vfy_bounds_end(struct vfy_bounds *dst, unsigned width, bool swap)
{
	if (vfy_bounds_is_const(dst)) {
		uint64_t v = dst->var.value;
		if (swap)
			v = width == 16 ? __builtin_bswap16((uint16_t)v) :
			    width == 32 ? __builtin_bswap32((uint32_t)v) : __builtin_bswap64(v);
		else if (width < 64)
			v &= (1ull << width) - 1;
		*dst = vfy_bounds_const(v);
		return;
	}
	if (swap) {
		*dst = vfy_bounds_sized(width / 8);
		return;
	}
	if (width == 64)
		return;
	struct vfy_bounds r = vfy_bounds_sized(width / 8);
	r.var = tnum_cast(dst->var, width / 8);
	if (dst->umax < (1ull << width)) {
		r.umin = dst->umin;
		r.umax = dst->umax;
	}
	if (!vfy_bounds_sync(&r))
		r = vfy_bounds_sized(width / 8);
	*dst = r;
}

bool vfy_rel_of_jump(unsigned op, bool taken, enum vfy_rel *rel)
{
	static const struct {
		unsigned op;
		enum vfy_rel taken, not_taken;
	} rels[] = {
		{ISA_JMP_JEQ, REL_EQ, REL_NE},    {ISA_JMP_JNE, REL_NE, REL_EQ},
		{ISA_JMP_JGT, REL_UGT, REL_ULE},  {ISA_JMP_JGE, REL_UGE, REL_ULT},
		{ISA_JMP_JLT, REL_ULT, REL_UGE},  {ISA_JMP_JLE, REL_ULE, REL_UGT},
		{ISA_JMP_JSGT, REL_SGT, REL_SLE}, {ISA_JMP_JSGE, REL_SGE, REL_SLT},
		{ISA_JMP_JSLT, REL_SLT, REL_SGE}, {ISA_JMP_JSLE, REL_SLE, REL_SGT},
		{ISA_JMP_JSET, REL_SET, REL_NSET},
	};
	for (size_t i = 0; i < sizeof(rels) / sizeof(rels[0]); i++)
		if (rels[i].op == op) {
			*rel = taken ? rels[i].taken : rels[i].not_taken;
			return true;
		}
	return false;
}

/* Narrow views a and b to "a rel b"; false if impossible. */
static bool view_refine(struct view *a, struct view *b, enum vfy_rel rel)
{
	unsigned w = a->w;

	switch (rel) {
	case REL_EQ:
		if (!tnum_overlap(a->var, b->var))
			return false;
		a->var = b->var = tnum_intersect(a->var, b->var);
		a->umin = b->umin = MAX(a->umin, b->umin);
		a->umax = b->umax = MIN(a->umax, b->umax);
		a->smin = b->smin = MAX(a->smin, b->smin);
		a->smax = b->smax = MIN(a->smax, b->smax);
		break;
	case REL_NE:
		if (view_is_const(b) || view_is_const(a)) {
			struct view *v = view_is_const(b) ? a : b;
			uint64_t c = view_is_const(b) ? b->var.value : a->var.value;
			if ((view_is_const(v) && v->var.value == c) ||
			    (v->umin == c && v->umax == c) ||
			    (v->smin == sext(c, w) && v->smax == sext(c, w)))
				return false;
			if (v->umin == c)
				v->umin++;
			else if (v->umax == c)
				v->umax--;
			if (v->smin == sext(c, w))
				v->smin++;
			else if (v->smax == sext(c, w))
				v->smax--;
		}
		break;
	case REL_UGT:
		return view_refine(b, a, REL_ULT);
	case REL_UGE:
		return view_refine(b, a, REL_ULE);
	case REL_SGT:
		return view_refine(b, a, REL_SLT);
	case REL_SGE:
		return view_refine(b, a, REL_SLE);
	case REL_ULT:
		if (b->umax == 0 || a->umin == wmask(w))
			return false;
		a->umax = MIN(a->umax, b->umax - 1);
		b->umin = MAX(b->umin, a->umin + 1);
		break;
	case REL_ULE:
		a->umax = MIN(a->umax, b->umax);
		b->umin = MAX(b->umin, a->umin);
		break;
	case REL_SLT:
		if (b->smax == wsmin(w) || a->smin == wsmax(w))
			return false;
		a->smax = MIN(a->smax, b->smax - 1);
		b->smin = MAX(b->smin, a->smin + 1);
		break;
	case REL_SLE:
		a->smax = MIN(a->smax, b->smax);
		b->smin = MAX(b->smin, a->smin);
		break;
	case REL_SET:
		if (!(tnum_umax(a->var) & tnum_umax(b->var)))
			return false;
		/* Testing one known bit proves it set. */
		if (view_is_const(b) && __builtin_popcountll(b->var.value) == 1) {
			a->var.value |= b->var.value;
			a->var.mask &= ~b->var.value;
		}
		break;
	case REL_NSET:
		if (a->var.value & b->var.value)
			return false;
		if (view_is_const(b))
			a->var.mask &= ~b->var.value;
		if (view_is_const(a))
			b->var.mask &= ~a->var.value;
		break;
	}
	return a->umin <= a->umax && a->smin <= a->smax && b->umin <= b->umax &&
	       b->smin <= b->smax;
}

static bool refine_store(struct vfy_bounds *d, const struct view *v)
{
	if (v->w == 64) {
		d->var = v->var;
		d->umin = v->umin;
		d->umax = v->umax;
		d->smin = v->smin;
		d->smax = v->smax;
	} else {
		d->var = tnum_with_subreg(d->var, v->var);
		d->u32min = (uint32_t)v->umin;
		d->u32max = (uint32_t)v->umax;
		d->s32min = (int32_t)v->smin;
		d->s32max = (int32_t)v->smax;
	}
	return vfy_bounds_sync(d);
}

bool vfy_bounds_refine(struct vfy_bounds *a, struct vfy_bounds *b, enum vfy_rel rel,
		       bool is32)
{
	struct view va = is32 ? view32(a) : view64(a);
	struct view vb = is32 ? view32(b) : view64(b);

	if (!view_refine(&va, &vb, rel))
		return false;
	return refine_store(a, &va) && refine_store(b, &vb);
}

int vfy_bounds_str(char *buf, unsigned long size, const struct vfy_bounds *b)
{
	if (vfy_bounds_is_const(b))
		return snprintf(buf, size, "%lld", (long long)b->var.value);
	char t[48];
	tnum_str(t, sizeof(t), b->var);
	return snprintf(buf, size, "[s %lld..%lld u %llu..%llu s32 %d..%d u32 %u..%u var %s]",
			(long long)b->smin, (long long)b->smax, (unsigned long long)b->umin,
			(unsigned long long)b->umax, b->s32min, b->s32max, b->u32min, b->u32max,
			t);
}
