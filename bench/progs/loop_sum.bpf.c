/* SPDX-License-Identifier: MIT */
/* loop_sum benchmark as an eBPF program: see bench/kernels/loop_sum.h. */
#include "../kernels/loop_sum.h"

__attribute__((section("bench/loop_sum"), used)) bench_u64 bench_loop_sum(bench_u8 *mem, bench_u64 len)
{
	return loop_sum(mem, len);
}

char LICENSE[] __attribute__((section("license"), used)) = "MIT";
