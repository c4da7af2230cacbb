/* SPDX-License-Identifier: MIT */
/*
 * vfy_range.h - what the verifier knows about a 64-bit value: signed and
 * unsigned bounds of the whole value and of its low 32 bits, plus a tnum.
 *
 * Invariant of a struct vfy_bounds after vfy_bounds_sync() returned true:
 * every min <= its max, and the five views agree (each is narrowed by what the
 * others imply).  A false return means no value satisfies all of them: the
 * path that produced them cannot happen (e.g. a branch that is never taken).
 */
#ifndef GPUEXT_BPF_VFY_RANGE_H
#define GPUEXT_BPF_VFY_RANGE_H

#include <stdbool.h>
#include <stdint.h>

#include "tnum.h"

struct vfy_bounds {
	struct tnum var;
	int64_t smin, smax;
	uint64_t umin, umax;
	int32_t s32min, s32max;
	uint32_t u32min, u32max;
};

struct vfy_bounds vfy_bounds_const(uint64_t v);
struct vfy_bounds vfy_bounds_unknown(void);
/* An unknown value of `bytes` bytes, zero-extended (loads). */
struct vfy_bounds vfy_bounds_sized(unsigned bytes);
/* An unknown value of `bytes` bytes, sign-extended to 64 bits (ldsx, movsx). */
struct vfy_bounds vfy_bounds_sized_signed(unsigned bytes);

/* Narrow the views by each other; false if they contradict. */
bool vfy_bounds_sync(struct vfy_bounds *b);
/* Keep only the low 32 bits (result of a 32-bit operation). */
void vfy_bounds_zext32(struct vfy_bounds *b);

static inline bool vfy_bounds_is_const(const struct vfy_bounds *b)
{
	return tnum_is_const(b->var);
}
/* Is every value of b also a value of a? */
bool vfy_bounds_in(const struct vfy_bounds *a, const struct vfy_bounds *b);
bool vfy_bounds_equal(const struct vfy_bounds *a, const struct vfy_bounds *b);
/* A bounds that holds every value of a and of b. */
struct vfy_bounds vfy_bounds_union(const struct vfy_bounds *a, const struct vfy_bounds *b);

/*
 * dst = dst OP src for an ALU opcode op (ISA_ALU_*; off = the instruction's
 * off for sdiv/smod/movsx), 64- or 32-bit.  Any operation is allowed (the ISA
 * defines division by zero); the result over-approximates.
 */
void vfy_bounds_alu(struct vfy_bounds *dst, const struct vfy_bounds *src, unsigned op,
		    int16_t off, bool is64);
/* Byte swaps: END (to_le/to_be, imm = width) and BSWAP. */
void vfy_bounds_end(struct vfy_bounds *dst, unsigned width, bool swap);

/*
 * A comparison as the verifier refines it: "a REL b", 64- or 32-bit.  Every
 * jump opcode and its negation maps to one of these.
 */
enum vfy_rel {
	REL_EQ, REL_NE, REL_ULT, REL_ULE, REL_UGT, REL_UGE,
	REL_SLT, REL_SLE, REL_SGT, REL_SGE, REL_SET, REL_NSET,
};
/* The relation a jump opcode (ISA_JMP_*) tests when taken / not taken. */
bool vfy_rel_of_jump(unsigned op, bool taken, enum vfy_rel *rel);
/*
 * Narrow a and b to the values for which "a rel b" holds.  False if there
 * are none (that direction of the branch is impossible).
 */
bool vfy_bounds_refine(struct vfy_bounds *a, struct vfy_bounds *b, enum vfy_rel rel,
		       bool is32);

/* "[smin, smax]", "0x10", ... for the log; returns snprintf's count. */
int vfy_bounds_str(char *buf, unsigned long size, const struct vfy_bounds *b);

#endif /* GPUEXT_BPF_VFY_RANGE_H */
