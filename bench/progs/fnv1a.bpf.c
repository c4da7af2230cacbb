/* SPDX-License-Identifier: MIT */
/* fnv1a benchmark as an eBPF program: see bench/kernels/fnv1a.h. */
#include "../kernels/fnv1a.h"

__attribute__((section("bench/fnv1a"), used)) bench_u64 bench_fnv1a(bench_u8 *mem, bench_u64 len)
{
	return fnv1a(mem, len);
}

char LICENSE[] __attribute__((section("license"), used)) = "MIT";
