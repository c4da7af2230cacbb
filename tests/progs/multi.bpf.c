/* SPDX-License-Identifier: MIT */
/*
 * multi: several programs per section and per object, sharing a map.
 * Slot 0 counts entries (two programs on the same section add 1 and 10),
 * slot 1 counts returns.
 */
#include "progs.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} calls SEC(".maps");

static __always_inline int bump(__u32 slot, __u64 by)
{
	__u64 *v = bpf_map_lookup_elem(&calls, &slot);

	if (!v)
		return -1;
	return __sync_add_and_fetch(v, by);
}

SEC("uprobe/cuStreamSynchronize")
int sync_enter_a(struct pt_regs *ctx)
{
	return bump(0, 1);
}

SEC("uprobe/cuStreamSynchronize")
int sync_enter_b(struct pt_regs *ctx)
{
	return bump(0, 10);
}

SEC("uretprobe/cuStreamSynchronize")
int sync_exit(struct pt_regs *ctx)
{
	return bump(1, 1);
}

char LICENSE[] SEC("license") = "GPL";
