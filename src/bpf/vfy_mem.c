/* SPDX-License-Identifier: MIT */
/*
 * vfy_mem.c - every load, store and atomic: the pointer's kind decides the
 * region, and the access [lo, hi + size) (lo/hi: the smallest and largest
 * offset the pointer may have) must lie inside it.  The stack is tracked per
 * byte (written or not) with 8-byte slots that remember spilled registers.
 */
#include <errno.h>
#include <string.h>

#include "vfy.h"

static const char *regname(uint32_t regno)
{
	static const char *const n[] = {"R0", "R1", "R2", "R3", "R4", "R5",
					"R6", "R7", "R8", "R9", "R10"};
	return regno < ISA_NR_REGS ? n[regno] : "R?";
}

/* Reject a register that cannot be dereferenced. */
static int check_ptr_deref(struct vfy_env *env, uint32_t regno, const struct vfy_reg *r)
{
	const char *rn = regname(regno);
	switch (r->type) {
	case REG_NOT_INIT:
		return vfy_reject(env, EACCES, "%s !read_ok: the register is not initialized", rn);
	case REG_SCALAR:
		return vfy_reject(env, EACCES,
				  "%s is a scalar, not a pointer: invalid memory access", rn);
	case REG_PTR_MAP_VALUE_OR_NULL:
	case REG_PTR_RINGBUF_REC_OR_NULL:
		return vfy_reject(env, EACCES, "%s is %s: check it against NULL before the access",
				  rn, vfy_reg_type_name(r->type));
	case REG_CONST_MAP:
		return vfy_reject(env, EACCES,
				  "%s is a map pointer: pass it to a helper, it cannot be dereferenced",
				  rn);
	case REG_RELEASED:
		return vfy_reject(env, EACCES,
				  "%s is a ring buffer record released at insn %u: use after release",
				  rn, r->insn);
	default:
		return 0;
	}
}

static bool is_leak(const struct vfy_env *env, const struct vfy_reg *value)
{
	return value && vfy_reg_is_ptr(value) && !env->opts.allow_ptr_leaks;
}

/* Check [lo, hi + size) inside [0, region) for a region of known size. */
static int check_region(struct vfy_env *env, uint32_t regno, const struct vfy_reg *r,
			int64_t lo, int64_t hi, uint32_t size, uint64_t region, const char *what)
{
	if (lo < 0 || (uint64_t)hi + size > region) {
		if (lo == hi)
			return vfy_reject(env, EACCES,
					  "%s %s access out of bounds: offset %lld size %u, "
					  "the %s has %llu bytes",
					  regname(regno), what, (long long)lo, size, what,
					  (unsigned long long)region);
		return vfy_reject(env, EACCES,
				  "%s %s access out of bounds: offsets %lld..%lld size %u, "
				  "the %s has %llu bytes (bound the offset with a check first)",
				  regname(regno), what, (long long)lo, (long long)hi, size, what,
				  (unsigned long long)region);
	}
	return 0;
}

static void mark_depth(struct vfy_env *env, const struct vfy_reg *r, int64_t lo)
{
	struct vfy_frame *f = env->cur->frames[r->frameno];
	uint32_t depth = (uint32_t)((-lo + 7) & ~7);
	struct vfy_subprog *sp = &env->subprogs[f->subprog];
	if (depth > sp->stack_depth)
		sp->stack_depth = depth;
}

/* fp-relative offset o (-512..-1) to index into stype. */
static int sidx(int64_t o) { return (int)(o + ISA_STACK_SIZE); }

/*
 * Bytes [lo, hi) of frame f may change.  A spill they overlap becomes plain
 * data, unless exact (a store at a known offset) covers it whole: then the
 * caller replaces it.  Part of a spilled pointer never becomes data a
 * program could read as a number.
 */
static int check_clobber_spills(struct vfy_env *env, struct vfy_frame *f, int64_t lo, int64_t hi,
				bool exact)
{
	for (int64_t o = lo & ~7LL; o < hi; o += 8) {
		int slot = sidx(o) / 8;
		if (f->stype[slot * 8] != SLOT_SPILL)
			continue;
		if (exact && o >= lo && o + 8 <= hi)
			continue; /* overwritten whole */
		if (vfy_reg_is_ptr(&f->spill[slot]) && !env->opts.allow_ptr_leaks)
			return vfy_reject(env, EACCES,
					  "overwriting part of a spilled pointer at fp%lld", (long long)o);
		memset(&f->stype[slot * 8], SLOT_MISC, 8);
	}
	/* A 32-bit spill loses its value when any of its bytes may change. */
	for (int64_t o = lo & ~3LL; o < hi; o += 4)
		if (f->stype[sidx(o)] == SLOT_SPILL32)
			memset(&f->stype[sidx(o)], SLOT_MISC, 4);
	return 0;
}

static int check_stack_write(struct vfy_env *env, uint32_t regno, const struct vfy_reg *r,
			     int64_t lo, int64_t hi, uint32_t size, const struct vfy_reg *value)
{
	struct vfy_frame *f = env->cur->frames[r->frameno];
	int err;

	if (value && vfy_reg_is_ptr(value)) {
		if (lo != hi || size != 8 || (lo & 7))
			return vfy_reject(env, EACCES,
					  "spilling a pointer needs an 8-byte store at a constant, "
					  "8-byte aligned stack offset (here %s%lld size %u)",
					  lo == hi ? "fp" : "variable offset from fp", (long long)lo, size);
		if (value->type == REG_PTR_STACK && value->frameno > r->frameno)
			return vfy_reject(env, EACCES,
					  "storing a pointer to the stack of a called function into "
					  "its caller's stack");
	}
	if ((err = check_clobber_spills(env, f, lo, hi + size, lo == hi)))
		return err;
	if (lo != hi) {
		/* Which bytes are written is unknown: none becomes initialized. */
		return 0;
	}
	int i = sidx(lo);
	if (size == 8 && !(lo & 7) && value) {
		f->spill[i / 8] = *value;
		memset(&f->stype[i], SLOT_SPILL, 8);
		return 0;
	}
	/* A 32-bit scalar keeps its bounds (compilers spill u32 counters so). */
	if (size == 4 && !(lo & 3) && value && value->type == REG_SCALAR) {
		f->spill32_min[i / 4] = value->b.u32min;
		f->spill32_max[i / 4] = value->b.u32max;
		memset(&f->stype[i], SLOT_SPILL32, 4);
		return 0;
	}
	memset(&f->stype[i], SLOT_MISC, size);
	return 0;
}

static int check_stack_read(struct vfy_env *env, uint32_t regno, const struct vfy_reg *r,
			    int64_t lo, int64_t hi, uint32_t size, bool sign_extend,
			    struct vfy_reg *loaded)
{
	struct vfy_frame *f = env->cur->frames[r->frameno];

	for (int64_t o = lo; o < hi + size; o++) {
		int i = sidx(o);
		if (f->stype[i] == SLOT_INVALID)
			return vfy_reject(env, EACCES,
					  "%s reads uninitialized stack: byte fp%lld was never written "
					  "(access fp%lld size %u)",
					  regname(regno), (long long)o, (long long)lo, size);
		if (f->stype[i] == SLOT_SPILL && vfy_reg_is_ptr(&f->spill[i / 8]) &&
		    (lo != hi || size != 8 || (lo & 7)))
			return vfy_reject(env, EACCES,
					  "%s reads part of a pointer spilled at fp%lld",
					  regname(regno), (long long)((o + 512) / 8 * 8 - 512));
	}
	if (!loaded)
		return 0;
	int i = sidx(lo);
	if (lo == hi && size == 8 && !(lo & 7) && f->stype[i] == SLOT_SPILL) {
		*loaded = f->spill[i / 8];
		return 0;
	}
	/* The low bytes of a spilled scalar (little-endian): its value, truncated. */
	if (lo == hi && !(lo & 7) && f->stype[i] == SLOT_SPILL && !sign_extend &&
	    f->spill[i / 8].type == REG_SCALAR) {
		struct vfy_bounds b = f->spill[i / 8].b;
		vfy_bounds_end(&b, size * 8, false);
		mark_reg_scalar(loaded, b);
		return 0;
	}
	if (lo == hi && size == 4 && !(lo & 3) && f->stype[i] == SLOT_SPILL32 && !sign_extend) {
		struct vfy_bounds b = vfy_bounds_sized(4);
		b.u32min = b.umin = f->spill32_min[i / 4];
		b.u32max = b.umax = f->spill32_max[i / 4];
		if (!vfy_bounds_sync(&b))
			return vfy_bug(env, "inconsistent 32-bit spill at fp%lld", (long long)lo);
		mark_reg_scalar(loaded, b);
		return 0;
	}
	mark_reg_scalar(loaded, sign_extend ? vfy_bounds_sized_signed(size) : vfy_bounds_sized(size));
	return 0;
}

static const char *map_name(const struct vfy_env *env, uint32_t map)
{
	const struct map_def *d = vfy_map_def(env, map);
	return d && d->name[0] ? d->name : "(unnamed)";
}

/*
 * Natural alignment (every region starts 8-byte aligned): atomics need it
 * everywhere, the GPU for every access, and the stack always (as in Linux:
 * spills and the device's local memory rely on it).
 */
static int check_align(struct vfy_env *env, uint32_t regno, const struct vfy_reg *r, int32_t off,
		       uint32_t size, enum vfy_access kind, int64_t lo, int64_t hi)
{
	/* Only loads and stores of 2, 4, 8 bytes have an alignment (not helper buffers). */
	if (size != 2 && size != 4 && size != 8)
		return 0;
	bool misaligned = (((int64_t)r->off + off) & (size - 1)) || !tnum_is_aligned(r->b.var, size);
	if (misaligned && (kind == ACCESS_ATOMIC || env->profile == VFY_PROFILE_GPU ||
			   r->type == REG_PTR_STACK))
		return vfy_reject(env, EACCES,
				  "%s misaligned %s access: offset %lld%s is not a multiple of %u",
				  regname(regno),
				  kind == ACCESS_ATOMIC ? "atomic" :
				  r->type == REG_PTR_STACK ? "stack" : "device memory",
				  (long long)lo, lo == hi ? "" : " (or more)", size);
	return 0;
}

int check_mem_access(struct vfy_env *env, uint32_t regno, int32_t off, uint32_t size,
		     enum vfy_access kind, bool sign_extend, const struct vfy_reg *value,
		     struct vfy_reg *loaded)
{
	struct vfy_reg *r = &vfy_cur_regs(env->cur)[regno];
	bool write = kind != ACCESS_READ;
	int err;

	if ((err = check_ptr_deref(env, regno, r)))
		return err;
	int64_t lo = (int64_t)r->off + off + r->b.smin;
	int64_t hi = (int64_t)r->off + off + r->b.smax;

	switch (r->type) {
	case REG_PTR_STACK:
		if (lo < -ISA_STACK_SIZE || hi + size > 0)
			return vfy_reject(env, EACCES,
					  "%s stack access out of bounds: fp%lld%s size %u, the "
					  "stack is fp-%d..fp-1",
					  regname(regno), (long long)lo, lo == hi ? "" : " (or more)", size,
					  ISA_STACK_SIZE);
		if ((err = check_align(env, regno, r, off, size, kind, lo, hi)))
			return err;
		mark_depth(env, r, lo);
		vfy_trail_note_stack(env, r->frameno, lo, hi);
		if (kind == ACCESS_ATOMIC) {
			if ((err = check_stack_read(env, regno, r, lo, hi, size, false, NULL)))
				return err;
			struct vfy_frame *f = env->cur->frames[r->frameno];
			for (int64_t o = lo; o < hi + size; o++)
				if (f->stype[sidx(o)] == SLOT_SPILL &&
				    vfy_reg_is_ptr(&f->spill[sidx(o) / 8]))
					return vfy_reject(env, EACCES,
							  "atomic operation on a pointer spilled at fp%lld",
							  (long long)(o & ~7LL));
		}
		if (kind == ACCESS_READ)
			return check_stack_read(env, regno, r, lo, hi, size, sign_extend, loaded);
		if (kind == ACCESS_ATOMIC) {
			struct vfy_reg unknown;
			mark_reg_unknown(&unknown);
			/* The slot now holds data the verifier cannot follow. */
			return check_stack_write(env, regno, r, lo, hi, size,
						 size == 8 ? &unknown : NULL);
		}
		return check_stack_write(env, regno, r, lo, hi, size, value);
	case REG_PTR_CTX:
		if (write && value && vfy_reg_is_ptr(value))
			return vfy_reject(env, EACCES, "%s leaks a pointer into the ctx",
					  regname(regno));
		if (kind == ACCESS_ATOMIC)
			return vfy_reject(env, EACCES, "atomic operation on the ctx prohibited");
		if ((err = check_ctx_access(env, regno, lo, hi, size, write)))
			return err;
		break;
	case REG_PTR_MAP_VALUE: {
		const struct map_def *d = vfy_map_def(env, r->map);
		if (!d)
			return vfy_bug(env, "map %u has no definition", r->map);
		if ((err = check_region(env, regno, r, lo, hi, size, d->value_size, "map value")))
			return err;
		if (write && (d->flags & MAP_F_RDONLY_PROG))
			return vfy_reject(env, EACCES, "%s writes into read-only map '%s'",
					  regname(regno), map_name(env, r->map));
		if (write && is_leak(env, value))
			return vfy_reject(env, EACCES, "%s leaks a pointer into map '%s'",
					  regname(regno), map_name(env, r->map));
		break;
	}
	case REG_PTR_RINGBUF_REC:
		if ((err = check_region(env, regno, r, lo, hi, size, r->size, "ringbuf record")))
			return err;
		if (write && is_leak(env, value))
			return vfy_reject(env, EACCES, "%s leaks a pointer into a ring buffer record",
					  regname(regno));
		break;
	case REG_PTR_MEM:
		if ((err = check_region(env, regno, r, lo, hi, size, r->size, "memory")))
			return err;
		if (write && is_leak(env, value))
			return vfy_reject(env, EACCES, "%s leaks a pointer into the program's memory",
					  regname(regno));
		break;
	default:
		return vfy_bug(env, "%s: unexpected register type %d", regname(regno), r->type);
	}
	if ((err = check_align(env, regno, r, off, size, kind, lo, hi)))
		return err;
	if (kind == ACCESS_READ && loaded)
		mark_reg_scalar(loaded,
				sign_extend ? vfy_bounds_sized_signed(size) : vfy_bounds_sized(size));
	return 0;
}

int check_helper_mem(struct vfy_env *env, uint32_t regno, uint64_t size_min, uint64_t size_max,
		     bool write, bool leaks, const char *what)
{
	struct vfy_reg *r = &vfy_cur_regs(env->cur)[regno];
	int err;

	if (size_max == 0)
		return 0;
	if (size_max > (1u << 29))
		return vfy_bug(env, "helper memory size %llu unchecked", (unsigned long long)size_max);
	if ((err = check_ptr_deref(env, regno, r)))
		return err;
	if (r->type == REG_PTR_CTX)
		return vfy_reject(env, EACCES, "%s: %s cannot be the ctx", regname(regno), what);
	if (r->type != REG_PTR_STACK) {
		/* One access of the whole size stands for the helper's. */
		return check_mem_access(env, regno, 0, (uint32_t)size_max,
					write ? ACCESS_WRITE : ACCESS_READ, false, NULL, NULL);
	}
	int64_t lo = (int64_t)r->off + r->b.smin, hi = (int64_t)r->off + r->b.smax;
	if (lo < -ISA_STACK_SIZE || hi + (int64_t)size_max > 0)
		return vfy_reject(env, EACCES,
				  "%s: %s of %llu bytes at fp%lld%s leaves the stack", regname(regno),
				  what, (unsigned long long)size_max, (long long)lo,
				  lo == hi ? "" : " (or more)");
	mark_depth(env, r, lo);
	struct vfy_frame *f = env->cur->frames[r->frameno];
	if (!write) {
		for (int64_t o = lo; o < hi + (int64_t)size_max; o++) {
			int i = sidx(o);
			if (f->stype[i] == SLOT_INVALID)
				return vfy_reject(env, EACCES,
						  "%s: %s at fp%lld reads uninitialized stack "
						  "(byte fp%lld was never written)",
						  regname(regno), what, (long long)lo, (long long)o);
			if (f->stype[i] == SLOT_SPILL && vfy_reg_is_ptr(&f->spill[i / 8]) &&
			    leaks && !env->opts.allow_ptr_leaks)
				return vfy_reject(env, EACCES,
						  "%s: %s at fp%lld would pass a spilled pointer "
						  "to a helper", regname(regno), what, (long long)lo);
		}
		return 0;
	}
	if ((err = check_clobber_spills(env, f, lo, hi + (int64_t)size_max, false)))
		return err;
	/* Only the bytes every possible call writes become initialized. */
	if (lo == hi)
		for (int64_t o = lo; o < lo + (int64_t)size_min; o++)
			f->stype[sidx(o)] = SLOT_MISC;
	return 0;
}

int check_load_store(struct vfy_env *env, const struct isa_insn *insn)
{
	struct vfy_reg *regs = vfy_cur_regs(env->cur);
	uint32_t size = isa_size_bytes(insn->code);
	unsigned cls = ISA_CLASS(insn->code);
	int err;

	if (cls == ISA_LDX) {
		struct vfy_reg val;
		if ((err = check_mem_access(env, insn->src, insn->off, size, ACCESS_READ,
					    ISA_MODE(insn->code) == ISA_MEMSX, NULL, &val)))
			return err;
		regs[insn->dst] = val;
		return 0;
	}
	if (cls == ISA_ST) {
		struct vfy_reg imm;
		mark_reg_const(&imm, (uint64_t)(int64_t)insn->imm);
		return check_mem_access(env, insn->dst, insn->off, size, ACCESS_WRITE, false, &imm,
					NULL);
	}
	/* STX */
	const struct vfy_reg *src = &regs[insn->src];
	if (src->type == REG_NOT_INIT)
		return vfy_reject(env, EACCES, "%s !read_ok: storing an uninitialized register",
				  regname(insn->src));
	if (src->type == REG_RELEASED)
		return vfy_reject(env, EACCES,
				  "%s is a ring buffer record released at insn %u: use after release",
				  regname(insn->src), src->insn);
	if (ISA_MODE(insn->code) == ISA_MEM)
		return check_mem_access(env, insn->dst, insn->off, size, ACCESS_WRITE, false, src,
					NULL);

	/* Atomics: read-modify-write of a scalar. */
	unsigned op = (unsigned)insn->imm;
	if (src->type != REG_SCALAR)
		return vfy_reject(env, EACCES, "%s: atomic operand must be a scalar, not %s",
				  regname(insn->src), vfy_reg_type_name(src->type));
	if (op == ISA_ATOMIC_CMPXCHG && regs[0].type != REG_SCALAR)
		return vfy_reject(env, EACCES, "R0 must be an initialized scalar for cmpxchg (is %s)",
				  vfy_reg_type_name(regs[0].type));
	if ((err = check_mem_access(env, insn->dst, insn->off, size, ACCESS_ATOMIC, false, NULL,
				    NULL)))
		return err;
	struct vfy_bounds b = size == 8 ? vfy_bounds_unknown() : vfy_bounds_sized(size);
	if (op == ISA_ATOMIC_CMPXCHG)
		mark_reg_scalar(&regs[0], b);
	else if (op & ISA_FETCH)
		mark_reg_scalar(&regs[insn->src], b);
	return 0;
}
