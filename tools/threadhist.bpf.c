/* SPDX-License-Identifier: MIT */
/*
 * threadhist: threads and warps that entered kernels, per block and per SM.
 * The entry probe runs once per warp: it adds the warp's lane count to the
 * thread counters and 1 to the warp counters of its SM and of its block.
 *
 * Both maps are arrays, so finding a counter is an address computation, and
 * the adds are fire-and-forget reductions: no warp waits for memory here.
 * No counter is shared by the whole grid: an SM's counters sit on cache
 * lines of their own (only that SM's warps add to them, spread over
 * SPREAD_SLOTS lines: spread.h), a block's are added to by its own warps
 * only.  The summary adds the per-SM counts for the
 * totals.  (A grand-total word serialised every warp of the grid: 14x on a
 * short kernel; per-block hash inserts and lookups cost ~5000 cycles.)
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

SEC("gpu/entry/*")
int th_entry(void *ctx)
{
	__u64 lanes = bpf_gpu_lane_count();
	__u32 block = bpf_gpu_block_idx(0) +
		      bpf_gpu_grid_dim(0) * (bpf_gpu_block_idx(1) +
					     bpf_gpu_grid_dim(1) * bpf_gpu_block_idx(2));
	__u32 sm = bpf_gpu_sm_id() * SPREAD_SLOTS + (bpf_gpu_warp_id() & (SPREAD_SLOTS - 1));

	struct th_sm_count *s = bpf_map_lookup_elem(&per_sm, &sm);
	if (s) {
		__sync_fetch_and_add(&s->threads, lanes);
		__sync_fetch_and_add(&s->warps, 1);
	}
	struct th_count *b = bpf_map_lookup_elem(&per_block, &block);
	if (b) { /* NULL past TH_MAX_BLOCKS */
		__sync_fetch_and_add(&b->threads, lanes);
		__sync_fetch_and_add(&b->warps, 1);
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
