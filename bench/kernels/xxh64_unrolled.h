/* SPDX-License-Identifier: MIT */
/*
 * xxh64_unrolled.h - straight-line code: xxHash64-style rounds (multiply,
 * rotate, multiply) over 512 bytes read 8 bytes at a time, the loop fully
 * unrolled by the compiler into ~1,000 instructions with no branch (clang
 * hoists loads and spills to the stack; 64 words is what fits in 512 bytes of
 * stack).  It is the benchmark where per-instruction JIT compile time is
 * measured on a program large enough for fixed costs not to dominate.
 */
#ifndef GPUEXT_BENCH_XXH64_UNROLLED_H
#define GPUEXT_BENCH_XXH64_UNROLLED_H

#include "bench_types.h"

#define XXH64_UNROLLED_WORDS 64
#define XXH_PRIME64_1 0x9e3779b185ebca87ull
#define XXH_PRIME64_2 0xc2b2ae3d27d4eb4full
#define XXH_PRIME64_4 0x85ebca77c2b2ae63ull
#define XXH_ROTL64(x, r) (((x) << (r)) | ((x) >> (64 - (r))))

BENCH_KERNEL xxh64_unrolled(bench_u8 *mem, bench_u64 len)
{
	bench_u64 acc = len * XXH_PRIME64_1;

	if (len < XXH64_UNROLLED_WORDS * 8)
		return 0;
#pragma unroll
	for (int i = 0; i < XXH64_UNROLLED_WORDS; i++) {
		bench_u64 w = ((bench_u64 *)mem)[i] * XXH_PRIME64_2;

		acc ^= XXH_ROTL64(w, 31) * XXH_PRIME64_1;
		acc = XXH_ROTL64(acc, 27) * XXH_PRIME64_1 + XXH_PRIME64_4;
	}
	acc ^= acc >> 33;
	acc *= XXH_PRIME64_2;
	acc ^= acc >> 29;
	return acc;
}

#endif
