/* SPDX-License-Identifier: MIT */
/*
 * tnum.h - tracked numbers: what is known about the bits of a 64-bit value.
 *
 * A tnum {value, mask} stands for every x with (x & ~mask) == value: bits set
 * in mask are unknown, the others are known and equal to value's.  Invariant
 * of every tnum these functions return: (value & mask) == 0.  All functions
 * are pure, take and return tnums by value, and over-approximate: the result
 * contains every value the operation can produce from members of its inputs.
 */
#ifndef GPUEXT_BPF_TNUM_H
#define GPUEXT_BPF_TNUM_H

#include <stdbool.h>
#include <stdint.h>

struct tnum {
	uint64_t value;
	uint64_t mask;
};

#define TNUM_UNKNOWN ((struct tnum){.value = 0, .mask = UINT64_MAX})

/* Exactly v. */
struct tnum tnum_const(uint64_t v);
/* The smallest tnum holding every value of [min, max] (unsigned). */
struct tnum tnum_range(uint64_t min, uint64_t max);

struct tnum tnum_add(struct tnum a, struct tnum b);
struct tnum tnum_sub(struct tnum a, struct tnum b);
struct tnum tnum_neg(struct tnum a);
struct tnum tnum_and(struct tnum a, struct tnum b);
struct tnum tnum_or(struct tnum a, struct tnum b);
struct tnum tnum_xor(struct tnum a, struct tnum b);
struct tnum tnum_mul(struct tnum a, struct tnum b);
/* Shifts by a known amount (< 64). */
struct tnum tnum_lshift(struct tnum a, unsigned shift);
struct tnum tnum_rshift(struct tnum a, unsigned shift);
/* Arithmetic shift of a value `width` bits wide (32 or 64), sign bit at width-1. */
struct tnum tnum_arshift(struct tnum a, unsigned shift, unsigned width);

/* Values in both a and b (a and b must have a common member). */
struct tnum tnum_intersect(struct tnum a, struct tnum b);
/* A tnum holding every member of a and of b. */
struct tnum tnum_union(struct tnum a, struct tnum b);
/* The low `bytes` bytes of a (zero-extended). */
struct tnum tnum_cast(struct tnum a, unsigned bytes);
/* The low 32 bits, zero-extended, and the value with its low 32 bits replaced. */
struct tnum tnum_subreg(struct tnum a);
struct tnum tnum_with_subreg(struct tnum a, struct tnum sub);

static inline bool tnum_is_const(struct tnum a) { return a.mask == 0; }
static inline bool tnum_is_unknown(struct tnum a) { return a.mask == UINT64_MAX; }
/* Does a know exactly the value v? */
static inline bool tnum_equals_const(struct tnum a, uint64_t v)
{
	return a.mask == 0 && a.value == v;
}
/* Is every member of b a member of a? */
bool tnum_in(struct tnum a, struct tnum b);
/* Is every member a multiple of size (a power of 2)? */
bool tnum_is_aligned(struct tnum a, uint64_t size);
/* Smallest and largest member, unsigned. */
static inline uint64_t tnum_umin(struct tnum a) { return a.value; }
static inline uint64_t tnum_umax(struct tnum a) { return a.value | a.mask; }

/* "0x10" for a constant, "(0x0; 0xff)" otherwise; returns snprintf's count. */
int tnum_str(char *buf, unsigned long size, struct tnum a);

#endif /* GPUEXT_BPF_TNUM_H */
