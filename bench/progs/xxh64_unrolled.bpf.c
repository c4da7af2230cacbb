/* SPDX-License-Identifier: MIT */
/* xxh64_unrolled benchmark as an eBPF program: see bench/kernels/xxh64_unrolled.h. */
#include "../kernels/xxh64_unrolled.h"

__attribute__((section("bench/xxh64_unrolled"), used)) bench_u64 bench_xxh64_unrolled(bench_u8 *mem, bench_u64 len)
{
	return xxh64_unrolled(mem, len);
}

char LICENSE[] __attribute__((section("license"), used)) = "MIT";
