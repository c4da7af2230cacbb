/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes-s4.md (sl_one), smload variant: one add a block (warps x run time) on its SM's line */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024 * 8);
	__type(key, __u32);
	__type(value, __u64[16]);
} per_sm SEC(".maps");
SEC("gpu/block_exit/*")
int sl_one(struct gpuext_block_ctx *ctx)
{
	__u64 d = ctx->end_ns > ctx->start_ns ? ctx->end_ns - ctx->start_ns : 0;
	__u32 sm = ctx->sm * 8 + (ctx->block & 7);
	__u64 *s = bpf_map_lookup_elem(&per_sm, &sm);
	if (s)
		__sync_fetch_and_add(s, d * ctx->warps);
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
