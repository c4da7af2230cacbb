/* SPDX-License-Identifier: MIT */
/*
 * memcpy_copy.h - a memcpy-like copy: the first half of memory is copied into
 * the second half, 8 bytes at a time with a byte tail, through explicit loads
 * and stores (a program cannot call memcpy).  The result folds in a few words
 * read back from the destination, and the harness compares the whole
 * destination across engines as well.
 */
#ifndef GPUEXT_BENCH_MEMCPY_COPY_H
#define GPUEXT_BENCH_MEMCPY_COPY_H

#include "bench_types.h"

#define MEMCPY_COPY_MAX_LEN 8192

BENCH_KERNEL memcpy_copy(bench_u8 *mem, bench_u64 len)
{
	bench_u64 half, words, i;
	bench_u8 *dst;

	if (len > 2 * MEMCPY_COPY_MAX_LEN)
		len = 2 * MEMCPY_COPY_MAX_LEN;
	half = len / 2;
	dst = mem + half;
	words = half / 8;
	for (i = 0; i < words; i++)
		((bench_u64 *)dst)[i] = ((bench_u64 *)mem)[i];
	for (i = words * 8; i < half; i++)
		dst[i] = mem[i];
	if (half < 8)
		return half;
	return half ^ *(bench_u64 *)dst ^ *(bench_u64 *)(dst + half - 8);
}

#endif
