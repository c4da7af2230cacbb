/* SPDX-License-Identifier: MIT */
/*
 * kernelretsnoop: for every block index of every kernel, when its last run
 * started and when its last warp exited, and which launch that was.  A
 * block probe (gpu/block_exit) runs once per block with the block's record
 * (struct gpuext_block_ctx: start and end time, SM, threads, warps) and
 * stores it with the launch id (bpf_gpu_launch_id()) in `blocks` at the
 * block's linear index: plain stores, no atomic, no arithmetic.  The CLI
 * prints one line per block index, groups the records by launch (the
 * agent's launch table, gpuext_launches, names each) and makes the
 * duration histograms on the host.
 *
 * Why so little: a block_exit program runs after the block's last warp
 * arrived, so every instruction and every global update in it lengthens
 * the block, and on grids of many short blocks (vecadd -n 16M: 65,536
 * blocks in 64 us) that is the kernel's time.  A device-side histogram
 * (the log2 bucket computed, then one red a block) cost more than the
 * records themselves (bench/results/2026-11-22-h200-block-probes-s4.md).
 * Per launch records of every block through pinned host memory:
 * blockretsnoop; per warp: warpretsnoop (a record per warp, much dearer).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "kernelretsnoop.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KRS_MAX_BLOCKS);
	__type(key, __u32);
	__type(value, struct krs_block);
} blocks SEC(".maps");

/* The agent's row per launch (kernel, grid, block), joined by id in the CLI. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} gpuext_launches SEC(".maps");

SEC("gpu/block_exit/*")
int krs_block(struct gpuext_block_ctx *ctx)
{
	__u32 slot = ctx->block & (KRS_MAX_BLOCKS - 1);
	struct krs_block *b = bpf_map_lookup_elem(&blocks, &slot);
	if (!b)
		return 0;
	b->start_ns = ctx->start_ns;
	b->end_ns = ctx->end_ns;
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
