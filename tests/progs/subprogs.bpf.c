/* SPDX-License-Identifier: MIT */
/*
 * subprogs: bpf-to-bpf calls.  Two programs in different sections share the
 * .text subprograms; calls nest three deep (sum_squares -> square -> twice)
 * and a static function in the program's own section is called too.
 * Input: one __u64 n.  gpu/mem returns sum_{i<n} i*i (n <= 32);
 * gpu/exit returns twice(n) + clamp(n).
 */
#include "progs.h"

__noinline static __u64 twice(__u64 x)
{
	return x + x;
}

__noinline static __u64 square(__u64 x)
{
	return twice(x * x) / 2;
}

__noinline __u64 sum_squares(__u64 n)
{
	__u64 s = 0;

	for (__u64 i = 0; i < n && i < 32; i++)
		s += square(i);
	return s;
}

__attribute__((section("gpu/exit/matmul"), noinline)) static __u64 clamp(__u64 x)
{
	return x > 1000 ? 1000 : x;
}

SEC("gpu/mem/matmul")
int on_mem(__u64 *n)
{
	return sum_squares(*n);
}

SEC("gpu/exit/matmul")
int on_exit(__u64 *n)
{
	return twice(*n) + clamp(*n);
}

char LICENSE[] SEC("license") = "GPL";
