/* SPDX-License-Identifier: MIT */
/*
 * smload: the work every SM did: blocks, warps, threads and warp-time (the
 * sum over its blocks of warps x the block's run time, entry to last
 * exit).  The CLI shows the imbalance (max / mean over the SMs that ran
 * something) and a bar per SM.
 *
 * A block probe (gpu/block_exit): once per block, when its last warp
 * leaves, the block's record (struct gpuext_block_ctx) has its start and
 * end times and its warps, and four fire-and-forget adds go to its SM's
 * own line.  A block holds its SM's resources (warp slots, registers,
 * shared memory) from its entry to its last exit, so warps x that time is
 * the SM time it occupied.  This replaced per-warp probes at entry and
 * exit that added lanes x %globaltimer at both ends (5 global reductions a
 * warp: 2.09x on vecadd -n 16M,
 * bench/results/2026-11-22-h200-device-maps-inline.md).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "smload.h"

/* Plain array keyed by SM id (see threadhist.bpf.c for why not per-SM). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SL_MAX_SM * SPREAD_SLOTS);
	__type(key, __u32);
	__type(value, struct sl_load);
} per_sm SEC(".maps");

SEC("gpu/block_exit/*")
int sl_block(struct gpuext_block_ctx *ctx)
{
	__u64 warps = ctx->warps, start = ctx->start_ns, end = ctx->end_ns;
	/* the block's copy of its SM's counters (spread.h) */
	__u32 sm = ctx->sm * SPREAD_SLOTS + (ctx->block & (SPREAD_SLOTS - 1));

	struct sl_load *l = bpf_map_lookup_elem(&per_sm, &sm);
	if (!l)
		return 0;
	__sync_fetch_and_add(&l->blocks, 1);
	__sync_fetch_and_add(&l->warps, warps);
	__sync_fetch_and_add(&l->threads, ctx->threads);
	__sync_fetch_and_add(&l->warp_ns, warps * (end > start ? end - start : 0));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
