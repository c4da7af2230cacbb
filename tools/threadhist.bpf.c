/* SPDX-License-Identifier: MIT */
/*
 * threadhist: threads and warps that entered kernels, per SM, and how many
 * blocks of each size (log2 of threads).  A block probe: the program runs
 * once per block, when its thread (0,0,0) starts (gpu/block_entry), and
 * adds the block's threads, warps and one block of its size to its SM's
 * counters: three fire-and-forget reductions on one 128-byte line.
 *
 * One program run per block instead of one per warp: on vecadd -n 16M
 * (65,536 blocks of 8 warps, 65 us) the four adds per warp were 2M global
 * reductions, as many as the kernel's own accesses, and cost 2.3x
 * (bench/results/2026-11-22-h200-device-maps-inline.md); per block they
 * are 8 times fewer, and the block's count comes from the block record
 * (struct gpuext_block_ctx), with no helper call.  One line a block:
 * counters at the block index as well (a second line per block) cost
 * about 7% more on vecadd than the SM's line alone, while more adds to
 * the same line cost next to nothing
 * (bench/results/2026-11-22-h200-block-probes-s4.md).
 *
 * The map is an array, so finding a counter is an address computation, and
 * the adds are fire-and-forget reductions.  An SM's counters sit on cache
 * lines of their own, spread over SPREAD_SLOTS lines by block index
 * (spread.h).  The summary adds the per-SM counts for the totals.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "threadhist.h"

/* A plain array keyed by SM id, not a per-SM one: the host's view of a
 * per-SM map is the sum over the SMs (docs/device-maps.md). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TH_MAX_SM * SPREAD_SLOTS);
	__type(key, __u32);
	__type(value, struct th_sm_count);
} sm_threads SEC(".maps");

/* The log2 bucket of v < 2048 (hist.c's: b for [2^(b-1), 2^b), 0 for 0). */
static __always_inline __u32 th_bucket(__u32 v)
{
	__u32 b = 0;
	if (v >> 8) {
		v >>= 8;
		b += 8;
	}
	if (v >> 4) {
		v >>= 4;
		b += 4;
	}
	if (v >> 2) {
		v >>= 2;
		b += 2;
	}
	if (v >> 1) {
		v >>= 1;
		b += 1;
	}
	return b + v;
}

SEC("gpu/block_entry/*")
int th_block(struct gpuext_block_ctx *ctx)
{
	__u32 threads = ctx->threads, b = th_bucket(threads);
	__u32 sm = ctx->sm * SPREAD_SLOTS + (ctx->block & (SPREAD_SLOTS - 1));

	struct th_sm_count *s = bpf_map_lookup_elem(&sm_threads, &sm);
	if (!s)
		return 0;
	__sync_fetch_and_add(&s->threads, threads);
	__sync_fetch_and_add(&s->warps, ctx->warps);
	if (b < TH_SIZE_BUCKETS)
		__sync_fetch_and_add(&s->blocks_by_size[b], 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
