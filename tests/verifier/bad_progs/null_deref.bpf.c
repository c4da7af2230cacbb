/* SPDX-License-Identifier: MIT */
/* Unsafe on purpose (tests/unit/test_verifier.c): the lookup is not checked. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

SEC("uprobe/cuLaunchKernel")
int count_unchecked(void *ctx)
{
	__u32 key = 1;
	__u64 *v = bpf_map_lookup_elem(&counts, &key);
	return *v;
}

char LICENSE[] SEC("license") = "GPL";
