/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes-s5.md, kernelretsnoop decomposed:
 * its record without the end time (no %globaltimer after the exit barrier;
 * the start time read at entry, kept in a register), the same stores */
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
SEC("gpu/block_exit/*")
int krs_noend(struct gpuext_block_ctx *ctx)
{
	__u32 slot = ctx->block & (KRS_MAX_BLOCKS - 1);
	struct krs_block *b = bpf_map_lookup_elem(&blocks, &slot);
	if (!b)
		return 0;
	b->start_ns = ctx->start_ns;
	b->end_ns = 0;
	b->block[0] = bpf_gpu_block_idx(0);
	b->block[1] = bpf_gpu_block_idx(1);
	b->block[2] = bpf_gpu_block_idx(2);
	b->sm = ctx->sm;
	b->threads = ctx->threads;
	b->warps = ctx->warps;
	b->launch = bpf_gpu_launch_id();
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
