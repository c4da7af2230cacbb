/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes-s4.md (exit_red_bid): one add a block at its block index (8-byte slots), no %smid in the address */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << 16);
	__type(key, __u32);
	__type(value, __u64);
} per_block SEC(".maps");
SEC("gpu/block_exit/*")
int exit_red_bid(struct gpuext_block_ctx *ctx)
{
	__u32 slot = ctx->block & ((1 << 16) - 1);
	__u64 *s = bpf_map_lookup_elem(&per_block, &slot);
	if (s)
		__sync_fetch_and_add(s, ctx->warps);
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
