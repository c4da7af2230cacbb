/* SPDX-License-Identifier: MIT */
/* memcpy_copy benchmark as an eBPF program: see bench/kernels/memcpy_copy.h. */
#include "../kernels/memcpy_copy.h"

__attribute__((section("bench/memcpy_copy"), used)) bench_u64 bench_memcpy_copy(bench_u8 *mem, bench_u64 len)
{
	return memcpy_copy(mem, len);
}

char LICENSE[] __attribute__((section("license"), used)) = "MIT";
