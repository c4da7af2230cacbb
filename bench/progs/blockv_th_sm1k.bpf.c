/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes.md, threadhist variant: the per-SM packed add only (no per-block counters) (th_sm1k) */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 256 * 8);
	__type(key, __u32);
	__type(value, __u64[128]);
} per_sm SEC(".maps");
SEC("gpu/block_entry/*")
int th_sm1k(struct gpuext_block_ctx *ctx)
{
	__u64 v = ctx->threads | ((__u64)ctx->warps << 32);
	__u32 sm = ctx->sm * 8 + (ctx->block & 7);
	__u64 *s = bpf_map_lookup_elem(&per_sm, &sm);
	if (s)
		__sync_fetch_and_add(s, v);
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
