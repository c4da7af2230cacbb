/* SPDX-License-Identifier: MIT */
/*
 * kernelretsnoop: for every block of every kernel, when it started and when
 * its last warp exited.  A block probe (gpu/block_exit) runs once per block
 * with the block's record (struct gpuext_block_ctx: start and end time,
 * SM, threads, warps) and
 *   - adds 1 to the log2 bucket of the block's duration in its launch's
 *     histogram (bpf_gpu_launch_id(); one fire-and-forget reduction a
 *     block): every block of every launch is counted, the first 255
 *     launches each apart, later ones together; the agent's launch table
 *     (gpuext_launches) names each launch's kernel and grid;
 *   - stores the block's times, index, SM and size in `blocks` at its
 *     linear index (plain stores, no atomic): the last launch's blocks,
 *     which the CLI prints one per line with their end relative to the
 *     earliest start.
 * No ring buffer: a record per block through pinned host memory is what
 * blockretsnoop does, and on grids of many short blocks it costs more than
 * the kernel (one reservation per block on one shared word).  Per warp:
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

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KRS_MAX_LAUNCHES * SPREAD_SLOTS);
	__type(key, __u32);
	__type(value, struct krs_hist);
} durations SEC(".maps");

/* The agent's row per launch (kernel, grid, block), joined by id in the CLI. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} gpuext_launches SEC(".maps");

/* The log2 bucket of v (hist.c's: 0 for 0, b for [2^(b-1), 2^b)). */
static __always_inline __u32 krs_bucket(__u64 v)
{
	__u32 b = 0;
	if (v >> 32) {
		v >>= 32;
		b += 32;
	}
	if (v >> 16) {
		v >>= 16;
		b += 16;
	}
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
	b += v; /* v is 0 or 1 now */
	return b < KRS_BUCKETS ? b : KRS_BUCKETS - 1;
}

SEC("gpu/block_exit/*")
int krs_block(struct gpuext_block_ctx *ctx)
{
	__u64 start = ctx->start_ns, end = ctx->end_ns, index = ctx->block;
	__u64 launch = bpf_gpu_launch_id();
	__u32 key = (launch < KRS_MAX_LAUNCHES ? launch : 0) * SPREAD_SLOTS +
		    (index & (SPREAD_SLOTS - 1));

	struct krs_hist *h = bpf_map_lookup_elem(&durations, &key);
	if (h)
		__sync_fetch_and_add(&h->count[krs_bucket(end > start ? end - start : 0)], 1);
	__u32 slot = index & (KRS_MAX_BLOCKS - 1);
	struct krs_block *b = bpf_map_lookup_elem(&blocks, &slot);
	if (!b)
		return 0;
	b->start_ns = start;
	b->end_ns = end;
	b->block[0] = bpf_gpu_block_idx(0);
	b->block[1] = bpf_gpu_block_idx(1);
	b->block[2] = bpf_gpu_block_idx(2);
	b->sm = ctx->sm;
	b->threads = ctx->threads;
	b->warps = ctx->warps;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
