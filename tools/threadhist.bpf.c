/* SPDX-License-Identifier: MIT */
/*
 * threadhist: threads and warps that entered kernels, per SM, and how many
 * blocks of each size (log2 of threads).  A block probe: the program runs
 * once per block, when its thread (0,0,0) starts (gpu/block_entry), and
 * adds 1 to the count of blocks of its exact size on its SM
 * (threadhist.h): one fire-and-forget reduction a block; the host turns the
 * counts into threads, warps and the size histogram, exactly.
 *
 * One program run per block instead of one per warp: on vecadd -n 16M
 * (65,536 blocks of 8 warps, 65 us) the four adds per warp were 2M global
 * reductions, as many as the kernel's own accesses, and cost 2.3x
 * (bench/results/2026-11-22-h200-device-maps-inline.md).  One add a block
 * instead of three (threads, warps, the size's bucket on the SM's line):
 * on a grid of one-microsecond blocks each global update of a block shows
 * (bench/results/2026-11-22-h200-block-probes-s6.md).
 *
 * The map is an array, so finding a counter is an address computation, and
 * the add is a fire-and-forget reduction.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "threadhist.h"

/* A plain array keyed by SM and size, not a per-SM one: the host's view of
 * a per-SM map is the sum over the SMs (docs/device-maps.md). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TH_MAX_SM * TH_SIZES);
	__type(key, __u32);
	__type(value, __u64);
} sm_blocks SEC(".maps");

SEC("gpu/block_entry/*")
int th_block(struct gpuext_block_ctx *ctx)
{
	__u32 k = th_key(ctx->sm, ctx->threads);
	__u64 *n = bpf_map_lookup_elem(&sm_blocks, &k);
	if (n)
		__sync_fetch_and_add(n, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
