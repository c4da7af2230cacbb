/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes-s5.md, kernelretsnoop split: its
 * record stored at the block's entry by thread (0,0,0) (start, index, SM,
 * threads, warps, launch), only the end time after the exit barrier */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>
#include "../../tools/kernelretsnoop.h"
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KRS_MAX_BLOCKS);
	__type(key, __u32);
	__type(value, struct krs_block);
} blocks SEC(".maps");
SEC("gpu/block_entry/*")
int krs_split_entry(struct gpuext_block_ctx *ctx)
{
	__u32 slot = ctx->block & (KRS_MAX_BLOCKS - 1);
	struct krs_block *b = bpf_map_lookup_elem(&blocks, &slot);
	if (!b)
		return 0;
	b->start_ns = ctx->start_ns;
	b->block[0] = bpf_gpu_block_idx(0);
	b->block[1] = bpf_gpu_block_idx(1);
	b->block[2] = bpf_gpu_block_idx(2);
	b->sm = ctx->sm;
	b->threads = ctx->threads;
	b->warps = ctx->warps;
	b->launch = bpf_gpu_launch_id();
	return 0;
}
SEC("gpu/block_exit/*")
int krs_split_exit(struct gpuext_block_ctx *ctx)
{
	__u32 slot = ctx->block & (KRS_MAX_BLOCKS - 1);
	struct krs_block *b = bpf_map_lookup_elem(&blocks, &slot);
	if (b)
		b->end_ns = ctx->end_ns;
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
