/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes.md, threadhist variant (th_v2): everything on the SM's own line (threads,
 * warps, log2 bucket of the block's threads): 3 reds a block, one line */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>
struct sm_line {
	__u64 threads, warps, blocks_log2[14];
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024 * 8);
	__type(key, __u32);
	__type(value, struct sm_line);
} per_sm SEC(".maps");
SEC("gpu/block_entry/*")
int th_v2(struct gpuext_block_ctx *ctx)
{
	__u64 threads = ctx->threads;
	__u32 sm = ctx->sm * 8 + (ctx->block & 7), b = 0;
	struct sm_line *s = bpf_map_lookup_elem(&per_sm, &sm);
	if (!s)
		return 0;
	__sync_fetch_and_add(&s->threads, threads);
	__sync_fetch_and_add(&s->warps, ctx->warps);
	for (__u64 v = threads; v && b < 13; v >>= 1)
		b++;
	__sync_fetch_and_add(&s->blocks_log2[b], 1);
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
