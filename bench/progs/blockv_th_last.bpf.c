/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes.md, threadhist variant (th_last): th_packed as a block_exit program, run by the block's last warp */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 262144);
	__type(key, __u32);
	__type(value, __u64);
} per_block SEC(".maps");
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024 * 8);
	__type(key, __u32);
	__type(value, __u64[16]);
} per_sm SEC(".maps");
SEC("gpu/block_exit/*")
int th_last(struct gpuext_block_ctx *ctx)
{
	__u64 v = ctx->threads | ((__u64)ctx->warps << 32), index = ctx->block;
	__u32 sm = ctx->sm * 8 + (index & 7);
	__u64 *s = bpf_map_lookup_elem(&per_sm, &sm);
	if (s)
		__sync_fetch_and_add(s, v);
	if (index >= 262144)
		return 0;
	__u32 block = index;
	__u64 *b = bpf_map_lookup_elem(&per_block, &block);
	if (b)
		__sync_fetch_and_add(b, v);
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
