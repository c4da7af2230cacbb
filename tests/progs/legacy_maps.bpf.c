/* SPDX-License-Identifier: MIT */
/*
 * legacy_maps: maps declared the pre-BTF way, SEC("maps") struct
 * bpf_map_def (libbpf 1.x no longer declares the struct; its layout is
 * the ABI).  Records freed pointers and counts the frees; returns the
 * total.
 */
#include "progs.h"

struct bpf_map_def {
	unsigned int type;
	unsigned int key_size;
	unsigned int value_size;
	unsigned int max_entries;
	unsigned int map_flags;
};

struct bpf_map_def SEC("maps") freed = {
	.type = BPF_MAP_TYPE_HASH,
	.key_size = sizeof(__u64),
	.value_size = sizeof(__u32),
	.max_entries = 32,
};

struct bpf_map_def SEC("maps") free_total = {
	.type = BPF_MAP_TYPE_ARRAY,
	.key_size = sizeof(__u32),
	.value_size = sizeof(__u64),
	.max_entries = 1,
};

SEC("uprobe/cuMemFree_v2")
int record_free(struct pt_regs *ctx)
{
	__u64 ptr = PT_REGS_PARM1(ctx);
	__u32 one = 1, zero = 0;
	__u64 *total = bpf_map_lookup_elem(&free_total, &zero);

	bpf_map_update_elem(&freed, &ptr, &one, BPF_ANY);
	if (!total)
		return -1;
	return __sync_add_and_fetch(total, 1);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
