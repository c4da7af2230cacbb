/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes-s5.md, kernelretsnoop with its
 * record (same layout) written as six 8-byte stores instead of nine */
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
int krs_packed(struct gpuext_block_ctx *ctx)
{
	__u32 slot = ctx->block & (KRS_MAX_BLOCKS - 1);
	__u64 *w = bpf_map_lookup_elem(&blocks, &slot);
	if (!w)
		return 0;
	w[0] = ctx->start_ns;
	w[1] = ctx->end_ns;
	w[2] = bpf_gpu_block_idx(0) | bpf_gpu_block_idx(1) << 32;
	w[3] = bpf_gpu_block_idx(2) | (__u64)ctx->sm << 32;
	w[4] = ctx->threads | (__u64)ctx->warps << 32;
	w[5] = bpf_gpu_launch_id();
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
