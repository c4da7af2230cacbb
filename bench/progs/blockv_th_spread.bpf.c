/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes-s4.md (th_spread), threadhist variant: its four adds, the SM slots 1 KiB apart instead of 128 B (spread over more L2 slices; SMs < 256) */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>
struct c { __u64 threads, warps; };
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 262144);
	__type(key, __u32);
	__type(value, struct c);
} per_block SEC(".maps");
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 256 * 8);
	__type(key, __u32);
	__type(value, __u64[128]);
} per_sm SEC(".maps");
SEC("gpu/block_entry/*")
int th_spread(struct gpuext_block_ctx *ctx)
{
	__u64 threads = ctx->threads, warps = ctx->warps, index = ctx->block;
	__u32 sm = ctx->sm * 8 + (index & 7);
	__u64 *s = bpf_map_lookup_elem(&per_sm, &sm);
	if (s) {
		__sync_fetch_and_add(&s[0], threads);
		__sync_fetch_and_add(&s[1], warps);
	}
	if (index >= 262144)
		return 0;
	__u32 block = index;
	struct c *b = bpf_map_lookup_elem(&per_block, &block);
	if (b) {
		__sync_fetch_and_add(&b->threads, threads);
		__sync_fetch_and_add(&b->warps, warps);
	}
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
