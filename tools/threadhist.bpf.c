/* SPDX-License-Identifier: MIT */
/*
 * threadhist: threads and warps that entered kernels, per block and per SM.
 * A block probe: the program runs once per block, when its thread (0,0,0)
 * starts (gpu/block_entry), and adds the block's threads and warps
 * to the counters of its SM and of its block index.
 *
 * One program run per block instead of one per warp: on vecadd -n 16M
 * (65,536 blocks of 8 warps, 65 us) the four adds per warp were 2M global
 * reductions, as many as the kernel's own accesses, and cost 2.3x
 * (bench/results/2026-11-22-h200-device-maps-inline.md); per block they
 * are 8 times fewer, and the block's count comes from the block record
 * (struct gpuext_block_ctx), with no helper call.
 *
 * Both maps are arrays, so finding a counter is an address computation, and
 * the adds are fire-and-forget reductions.  An SM's counters sit on cache
 * lines of their own, spread over SPREAD_SLOTS lines by block index
 * (spread.h); a block index's are added to once per launch.  The summary
 * adds the per-SM counts for the totals.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "threadhist.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TH_MAX_BLOCKS);
	__type(key, __u32);
	__type(value, struct th_count);
} per_block SEC(".maps");

/* A plain array keyed by SM id, not a per-SM one: the host's view of a
 * per-SM map is the sum over the SMs (docs/device-maps.md). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TH_MAX_SM * SPREAD_SLOTS);
	__type(key, __u32);
	__type(value, struct th_sm_count);
} per_sm SEC(".maps");

SEC("gpu/block_entry/*")
int th_block(struct gpuext_block_ctx *ctx)
{
	__u64 threads = ctx->threads, warps = ctx->warps, index = ctx->block;
	__u32 sm = ctx->sm * SPREAD_SLOTS + (index & (SPREAD_SLOTS - 1));

	struct th_sm_count *s = bpf_map_lookup_elem(&per_sm, &sm);
	if (s) {
		__sync_fetch_and_add(&s->threads, threads);
		__sync_fetch_and_add(&s->warps, warps);
	}
	if (index >= TH_MAX_BLOCKS)
		return 0; /* counted per SM only */
	__u32 block = index;
	struct th_count *b = bpf_map_lookup_elem(&per_block, &block);
	if (b) {
		__sync_fetch_and_add(&b->threads, threads);
		__sync_fetch_and_add(&b->warps, warps);
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
