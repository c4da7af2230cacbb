/* SPDX-License-Identifier: MIT */
/*
 * lru_hash: fault counts per 2 MiB block of unified memory (CUPTI UVM
 * records) in an LRU hash of 4 entries: old blocks are evicted.  Returns the
 * block's fault count.
 */
#include "progs.h"

struct uvm_rec {
	__u64 address;
	__u32 kind;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4);
	__type(key, __u64);
	__type(value, __u32);
} faults SEC(".maps");

SEC("cupti/uvm")
int count_fault(struct uvm_rec *rec)
{
	__u64 block = rec->address >> 21;
	__u32 *n = bpf_map_lookup_elem(&faults, &block), one = 1;

	if (n) {
		__sync_fetch_and_add(n, 1);
		return *n;
	}
	bpf_map_update_elem(&faults, &block, &one, BPF_ANY);
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
