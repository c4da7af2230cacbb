/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes-s5.md, kernelretsnoop without the
 * exit barrier, whole: thread (0,0,0) stores the record but the end at the
 * block's entry (packed 8-byte stores), each warp's exit its own end time
 * at (block index, warp) for the host to take the block's latest */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>
#include "../../tools/kernelretsnoop.h"
#define WE_SLOTS (1 << 20)
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KRS_MAX_BLOCKS);
	__type(key, __u32);
	__type(value, struct krs_block);
} blocks SEC(".maps");
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WE_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} ends SEC(".maps");
SEC("gpu/block_entry/*")
int krs_warps_entry(struct gpuext_block_ctx *ctx)
{
	__u32 slot = ctx->block & (KRS_MAX_BLOCKS - 1);
	__u64 *w = bpf_map_lookup_elem(&blocks, &slot);
	if (!w)
		return 0;
	w[0] = ctx->start_ns;
	w[2] = bpf_gpu_block_idx(0) | bpf_gpu_block_idx(1) << 32;
	w[3] = bpf_gpu_block_idx(2) | (__u64)ctx->sm << 32;
	w[4] = ctx->threads | (__u64)ctx->warps << 32;
	w[5] = bpf_gpu_launch_id();
	return 0;
}
SEC("gpu/exit/*")
int krs_warps_exit(void *ctx)
{
	__u32 slot = (bpf_gpu_block_idx(0) * 32 + bpf_gpu_warp_id()) & (WE_SLOTS - 1);
	__u64 *e = bpf_map_lookup_elem(&ends, &slot);
	if (e)
		*e = bpf_gpu_globaltimer();
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
