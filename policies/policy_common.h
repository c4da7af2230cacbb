/* SPDX-License-Identifier: MIT */
/*
 * policy_common.h - what the shipped policies share: table sizes and the
 * driver's density-tree prefetch region (prefetch-tree, prefetch-pid-tree).
 */
#ifndef GPUEXT_POLICY_COMMON_H
#define GPUEXT_POLICY_COMMON_H

#include <bpf/gpu_mem_ops.h>

/* Per-block state is kept in arrays indexed by block id: 65536 blocks of
 * 2 MiB = 128 GiB of managed memory; blocks beyond are left to the default. */
#define POLICY_MAX_BLOCKS 65536
/* Candidates an eviction policy looks at, from the head. */
#define POLICY_SAMPLE 32
/* uvm_perf_prefetch's default threshold, percent. */
#define POLICY_TREE_THRESHOLD 51

/*
 * The largest aligned power-of-two region around the faulting page (1 page
 * .. the whole block) whose resident + faulting pages are above threshold
 * percent, as the driver computes it; set as the prefetch region.
 */
static __always_inline int policy_tree_region(struct gpu_mem_prefetch_ctx *ctx, __u32 threshold)
{
	__u32 page = ctx->page_index, first = page, end = page;

	for (__u32 level = 0; level <= 9; level++) {
		__u32 size = 1u << level;
		__u32 f = page & ~(size - 1);
		if (f < ctx->max_first || f + size > ctx->max_end)
			break;
		long n = bpf_gpu_region_count(ctx, f, f + size);
		if (n > 0 && (__u64)n * 100 > (__u64)size * threshold) {
			first = f;
			end = f + size;
		}
	}
	bpf_gpu_set_prefetch_region(ctx, first, end);
	return GPU_MEM_BYPASS;
}

#endif /* GPUEXT_POLICY_COMMON_H */
