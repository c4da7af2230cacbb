/* SPDX-License-Identifier: MIT */
/*
 * hash_count: a histogram of allocation sizes (cuMemAlloc_v2's second
 * argument) in a hash map.  Returns how often this size has been seen.
 */
#include "progs.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u64);
	__type(value, __u64);
} alloc_sizes SEC(".maps");

SEC("uprobe/cuMemAlloc_v2")
int count_alloc(struct pt_regs *ctx)
{
	__u64 size = PT_REGS_PARM2(ctx), one = 1;
	__u64 *n = bpf_map_lookup_elem(&alloc_sizes, &size);

	if (n)
		return __sync_fetch_and_add(n, 1) + 1;
	if (bpf_map_update_elem(&alloc_sizes, &size, &one, BPF_NOEXIST))
		return -1;
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
