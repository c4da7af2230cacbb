/* SPDX-License-Identifier: MIT */
/*
 * tnum.c - tracked numbers (see tnum.h).  The add/sub/mul algorithms follow
 * the published analysis of bit-level abstract arithmetic (Vishwanathan et
 * al., "Sound, Precise, and Fast Abstract Interpretation with Tristate
 * Numbers", CGO 2022).
 */
#include "tnum.h"

#include <stdio.h>

struct tnum tnum_const(uint64_t v)
{
	return (struct tnum){.value = v, .mask = 0};
}

struct tnum tnum_range(uint64_t min, uint64_t max)
{
	uint64_t chi = min ^ max;
	if (min > max)
		return TNUM_UNKNOWN;
	if (chi == 0)
		return tnum_const(min);
	/* Every bit below the highest differing bit can take either value. */
	unsigned bits = 64 - (unsigned)__builtin_clzll(chi);
	if (bits > 63)
		return TNUM_UNKNOWN;
	uint64_t delta = (1ull << bits) - 1;
	return (struct tnum){.value = min & ~delta, .mask = delta};
}

struct tnum tnum_add(struct tnum a, struct tnum b)
{
	uint64_t sm = a.mask + b.mask;
	uint64_t sv = a.value + b.value;
	uint64_t sigma = sm + sv;
	/* Bits where a carry may or may not happen. */
	uint64_t chi = sigma ^ sv;
	uint64_t mu = chi | a.mask | b.mask;
	return (struct tnum){.value = sv & ~mu, .mask = mu};
}

struct tnum tnum_sub(struct tnum a, struct tnum b)
{
	uint64_t dv = a.value - b.value;
	uint64_t alpha = dv + a.mask;
	uint64_t beta = dv - b.mask;
	/* Bits where a borrow may or may not happen. */
	uint64_t chi = alpha ^ beta;
	uint64_t mu = chi | a.mask | b.mask;
	return (struct tnum){.value = dv & ~mu, .mask = mu};
}

struct tnum tnum_neg(struct tnum a)
{
	return tnum_sub(tnum_const(0), a);
}

struct tnum tnum_and(struct tnum a, struct tnum b)
{
	uint64_t alpha = a.value | a.mask;
	uint64_t beta = b.value | b.mask;
	uint64_t v = a.value & b.value;
	return (struct tnum){.value = v, .mask = alpha & beta & ~v};
}

struct tnum tnum_or(struct tnum a, struct tnum b)
{
	uint64_t v = a.value | b.value;
	uint64_t mu = a.mask | b.mask;
	return (struct tnum){.value = v, .mask = mu & ~v};
}

struct tnum tnum_xor(struct tnum a, struct tnum b)
{
	uint64_t v = a.value ^ b.value;
	uint64_t mu = a.mask | b.mask;
	return (struct tnum){.value = v & ~mu, .mask = mu};
}

struct tnum tnum_mul(struct tnum a, struct tnum b)
{
	/* Long multiplication: known bits of a add b shifted, unknown ones add
	 * "b or nothing", whose union is (0; value|mask). */
	struct tnum acc_v = tnum_const(a.value * b.value);
	struct tnum acc_m = tnum_const(0);

	while (a.value || a.mask) {
		if (a.value & 1)
			acc_m = tnum_add(acc_m, (struct tnum){.value = 0, .mask = b.mask});
		else if (a.mask & 1)
			acc_m = tnum_add(acc_m, (struct tnum){.value = 0, .mask = b.value | b.mask});
		a = tnum_rshift(a, 1);
		b = tnum_lshift(b, 1);
	}
	return tnum_add(acc_v, acc_m);
}

struct tnum tnum_lshift(struct tnum a, unsigned shift)
{
	return (struct tnum){.value = a.value << shift, .mask = a.mask << shift};
}

struct tnum tnum_rshift(struct tnum a, unsigned shift)
{
	return (struct tnum){.value = a.value >> shift, .mask = a.mask >> shift};
}

struct tnum tnum_arshift(struct tnum a, unsigned shift, unsigned width)
{
	if (width == 32)
		return (struct tnum){
			.value = (uint32_t)((int32_t)(uint32_t)a.value >> shift),
			.mask = (uint32_t)((int32_t)(uint32_t)a.mask >> shift)};
	return (struct tnum){.value = (uint64_t)((int64_t)a.value >> shift),
			     .mask = (uint64_t)((int64_t)a.mask >> shift)};
}

struct tnum tnum_intersect(struct tnum a, struct tnum b)
{
	uint64_t v = a.value | b.value;
	uint64_t mu = a.mask & b.mask;
	return (struct tnum){.value = v & ~mu, .mask = mu};
}

struct tnum tnum_union(struct tnum a, struct tnum b)
{
	/* Bits that are unknown in either or differ between the two. */
	uint64_t mu = a.mask | b.mask | (a.value ^ b.value);
	return (struct tnum){.value = a.value & ~mu, .mask = mu};
}

struct tnum tnum_cast(struct tnum a, unsigned bytes)
{
	if (bytes >= 8)
		return a;
	uint64_t keep = (1ull << (bytes * 8)) - 1;
	return (struct tnum){.value = a.value & keep, .mask = a.mask & keep};
}

struct tnum tnum_subreg(struct tnum a)
{
	return tnum_cast(a, 4);
}

struct tnum tnum_with_subreg(struct tnum a, struct tnum sub)
{
	struct tnum hi = {.value = a.value & ~0xffffffffull, .mask = a.mask & ~0xffffffffull};
	return tnum_or(hi, tnum_subreg(sub));
}

bool tnum_in(struct tnum a, struct tnum b)
{
	if (b.mask & ~a.mask)
		return false;
	return a.value == (b.value & ~a.mask);
}

bool tnum_is_aligned(struct tnum a, uint64_t size)
{
	if (!size)
		return true;
	return !((a.value | a.mask) & (size - 1));
}

int tnum_str(char *buf, unsigned long size, struct tnum a)
{
	if (tnum_is_const(a))
		return snprintf(buf, size, "%#llx", (unsigned long long)a.value);
	return snprintf(buf, size, "(%#llx; %#llx)", (unsigned long long)a.value,
			(unsigned long long)a.mask);
}
