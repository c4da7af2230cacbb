/* SPDX-License-Identifier: MIT */
/*
 * array_count: counts launches per stream slot.  The first argument of
 * cuLaunchKernel's probe picks one of 8 slots (arg & 7); returns the slot's
 * new count.
 */
#include "progs.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} launches SEC(".maps");

SEC("uprobe/cuLaunchKernel")
int count_launch(struct pt_regs *ctx)
{
	__u32 slot = PT_REGS_PARM1(ctx) & 7;
	__u64 *n = bpf_map_lookup_elem(&launches, &slot);

	if (!n)
		return -1;
	*n += 1;
	return *n;
}

char LICENSE[] SEC("license") = "GPL";
