/* SPDX-License-Identifier: MIT */
/*
 * kernelretsnoop: for every block index of every kernel, when its last run
 * started and when its last warp exited, and which launch that was.  Two
 * block probes fill the block's record (struct krs_block) in `blocks` at
 * its linear index, with plain stores: gpu/block_entry writes everything
 * but the end (start time, block index, SM, threads, warps, the launch id
 * of bpf_gpu_launch_id()), gpu/block_exit the end time.  The CLI prints one
 * line per block index, groups the records by launch (the agent's launch
 * table, gpuext_launches, names each) and makes the duration histograms on
 * the host.
 *
 * Why split: a global write on the block's tail (after the exit barrier,
 * where the end time is known) lengthens the block, and on grids of many
 * short blocks (vecadd -n 16M: 65,536 blocks in 64 us) that is the
 * kernel's time; the same write costs next to nothing where the block's
 * first thread waits for its first loads anyway, which is where the
 * injector runs a block_entry program (docs/ptx-inject.md, "Block probes";
 * bench/results/2026-11-22-h200-block-probes-s6.md).  So the tail keeps one
 * 8-byte store.  A device-side histogram (the log2 bucket computed, then
 * one red a block) cost more than the records themselves
 * (bench/results/2026-11-22-h200-block-probes-s4.md).  Per launch records
 * of every block through pinned host memory: blockretsnoop; per warp:
 * warpretsnoop (a record per warp, much dearer).
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

/* The record of block index ctx->block, NULL if none. */
static __always_inline struct krs_block *krs_record(const struct gpuext_block_ctx *ctx)
{
	__u32 slot = ctx->block & (KRS_MAX_BLOCKS - 1);
	return bpf_map_lookup_elem(&blocks, &slot);
}

SEC("gpu/block_entry/*")
int krs_entry(struct gpuext_block_ctx *ctx)
{
	struct krs_block *b = krs_record(ctx);
	if (!b)
		return 0;
	/* 8-byte stores, two 32-bit fields in each (krs_block's layout) */
	__u64 *w = (__u64 *)b;
	w[KRS_W_START] = ctx->start_ns;
	w[KRS_W_BLOCK01] = bpf_gpu_block_idx(0) | bpf_gpu_block_idx(1) << 32;
	w[KRS_W_BLOCK2_SM] = bpf_gpu_block_idx(2) | (__u64)ctx->sm << 32;
	w[KRS_W_THREADS_WARPS] = ctx->threads | (__u64)ctx->warps << 32;
	w[KRS_W_LAUNCH] = bpf_gpu_launch_id();
	return 0;
}

SEC("gpu/block_exit/*")
int krs_exit(struct gpuext_block_ctx *ctx)
{
	struct krs_block *b = krs_record(ctx);
	if (b)
		b->end_ns = ctx->end_ns;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
