/* SPDX-License-Identifier: MIT */
/* switch_vm benchmark as an eBPF program: see bench/kernels/switch_vm.h. */
#include "../kernels/switch_vm.h"

__attribute__((section("bench/switch_vm"), used)) bench_u64 bench_switch_vm(bench_u8 *mem, bench_u64 len)
{
	return switch_vm(mem, len);
}

char LICENSE[] __attribute__((section("license"), used)) = "MIT";
