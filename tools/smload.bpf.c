/* SPDX-License-Identifier: MIT */
/*
 * smload: the work every SM did: blocks, warps, threads and warp-time (the
 * sum over its blocks of warps x the block's run time, entry to last
 * exit).  The CLI shows the imbalance (max / mean over the SMs that ran
 * something) and a bar per SM.
 *
 * Two block probes on its SM's own line: gpu/block_entry adds 1, the
 * block's warps and threads (where the block's first thread waits for its
 * first loads: a global update there costs next to nothing, on the block's
 * tail a few percent of a short block's life,
 * bench/results/2026-11-22-h200-block-probes-s6.md), gpu/block_exit, when
 * the block's last warp leaves, warps x its run time (entry to last exit,
 * from the block's record, struct gpuext_block_ctx).  A block holds its
 * SM's resources (warp slots, registers, shared memory) from its entry to
 * its last exit, so warps x that time is the SM time it occupied.  This
 * replaced per-warp probes at entry and exit that added lanes x
 * %globaltimer at both ends (5 global reductions a warp: 2.09x on vecadd
 * -n 16M, bench/results/2026-11-22-h200-device-maps-inline.md).
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

/* The block's copy of its SM's counters (spread.h), NULL if none. */
static __always_inline struct sl_load *sl_line(const struct gpuext_block_ctx *ctx)
{
	__u32 sm = ctx->sm * SPREAD_SLOTS + (ctx->block & (SPREAD_SLOTS - 1));
	return bpf_map_lookup_elem(&per_sm, &sm);
}

SEC("gpu/block_entry/*")
int sl_entry(struct gpuext_block_ctx *ctx)
{
	struct sl_load *l = sl_line(ctx);
	if (!l)
		return 0;
	__sync_fetch_and_add(&l->blocks, 1);
	__sync_fetch_and_add(&l->warps, ctx->warps);
	__sync_fetch_and_add(&l->threads, ctx->threads);
	return 0;
}

SEC("gpu/block_exit/*")
int sl_exit(struct gpuext_block_ctx *ctx)
{
	__u64 start = ctx->start_ns, end = ctx->end_ns;
	struct sl_load *l = sl_line(ctx);
	if (l)
		__sync_fetch_and_add(&l->warp_ns, ctx->warps * (end > start ? end - start : 0));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
