/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes-s5.md, blockretsnoop's ring
 * buffer decomposed: one fetch-and-add a block on one device word after the
 * exit barrier (a ring buffer reserve makes two, on two words) */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} pos SEC(".maps");
SEC("gpu/block_exit/*")
int one_atomic(struct gpuext_block_ctx *ctx)
{
	__u32 k = 0, one = 1;
	__u64 *p = bpf_map_lookup_elem(&pos, &k);
	if (!p)
		return 0;
	/* the old value used, as a reserve uses it: an atom, not a red */
	__u64 old = __sync_fetch_and_add(p, 64);
	__u64 *q = bpf_map_lookup_elem(&pos, &one);
	if (q && old == ~0ull)
		*q = old;
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
