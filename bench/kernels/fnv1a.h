/* SPDX-License-Identifier: MIT */
/*
 * fnv1a.h - a hashing routine: 64-bit FNV-1a over the whole buffer, one
 * byte at a time (a load, an xor and a 64-bit multiply per byte).  The
 * buffer is 1 KiB in the benchmark; the cap keeps the loop bounded.
 */
#ifndef GPUEXT_BENCH_FNV1A_H
#define GPUEXT_BENCH_FNV1A_H

#include "bench_types.h"

#define FNV1A_MAX_LEN 4096

BENCH_KERNEL fnv1a(bench_u8 *mem, bench_u64 len)
{
	bench_u64 hash = 0xcbf29ce484222325ull; /* FNV offset basis */

	if (len > FNV1A_MAX_LEN)
		len = FNV1A_MAX_LEN;
	for (bench_u64 i = 0; i < len; i++) {
		hash ^= mem[i];
		hash *= 0x100000001b3ull; /* FNV prime */
	}
	return hash;
}

#endif
