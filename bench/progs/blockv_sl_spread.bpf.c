/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes-s4.md (sl_spread), smload variant: its four adds, the SM slots 1 KiB apart instead of 128 B (SMs < 256) */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 256 * 8);
	__type(key, __u32);
	__type(value, __u64[128]);
} per_sm SEC(".maps");
SEC("gpu/block_exit/*")
int sl_spread(struct gpuext_block_ctx *ctx)
{
	__u64 warps = ctx->warps, start = ctx->start_ns, end = ctx->end_ns;
	__u32 sm = ctx->sm * 8 + (ctx->block & 7);
	__u64 *l = bpf_map_lookup_elem(&per_sm, &sm);
	if (!l)
		return 0;
	__sync_fetch_and_add(&l[0], 1);
	__sync_fetch_and_add(&l[1], warps);
	__sync_fetch_and_add(&l[2], ctx->threads);
	__sync_fetch_and_add(&l[3], warps * (end > start ? end - start : 0));
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
