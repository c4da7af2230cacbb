/* SPDX-License-Identifier: MIT */
/*
 * loop_sum.h - a bounded loop: a non-linear recurrence over N iterations,
 * N read from memory (u32 at offset 0) so that no compiler can fold it, and
 * capped so that the verifier sees a bound.  The recurrence mixes add, xor,
 * shift and multiply so that no closed form exists.
 */
#ifndef GPUEXT_BENCH_LOOP_SUM_H
#define GPUEXT_BENCH_LOOP_SUM_H

#include "bench_types.h"

#define LOOP_SUM_MAX_ITERS 10000

BENCH_KERNEL loop_sum(bench_u8 *mem, bench_u64 len)
{
	bench_u64 acc = 1, n;

	if (len < 4)
		return 0;
	n = *(bench_u32 *)mem;
	if (n > LOOP_SUM_MAX_ITERS)
		n = LOOP_SUM_MAX_ITERS;
	for (bench_u64 i = 0; i < n; i++)
		acc = acc * 31 + (i ^ (acc >> 7));
	return acc;
}

#endif
