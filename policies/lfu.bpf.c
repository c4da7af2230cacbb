/* SPDX-License-Identifier: MIT */
/*
 * lfu: evict the least frequently faulted block.  The count of a block is
 * the number of fault batches that touched it, kept across evictions (a
 * block that keeps coming back is hot).  Eviction samples the 32 candidates
 * nearest the head and moves the least counted to the head: a sampled LFU,
 * bounded work per eviction whatever the budget.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpu_mem_ops.h>

#include "policy_common.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, POLICY_MAX_BLOCKS);
	__type(key, __u32);
	__type(value, __u64);
} freq SEC(".maps");

static __always_inline void lfu_bump(__u64 block)
{
	__u32 key = (__u32)block;
	__u64 *f = bpf_map_lookup_elem(&freq, &key);

	if (f)
		*f += 1;
}

static __always_inline __u64 lfu_count(__u64 block)
{
	__u32 key = (__u32)block;
	__u64 *f = bpf_map_lookup_elem(&freq, &key);

	return f ? *f : 0;
}

SEC("struct_ops/gpu_block_activate")
int lfu_activate(struct gpu_mem_block_ctx *ctx)
{
	lfu_bump(ctx->block);
	return GPU_MEM_DEFAULT;
}

SEC("struct_ops/gpu_block_access")
int lfu_access(struct gpu_mem_block_ctx *ctx)
{
	lfu_bump(ctx->block);
	return GPU_MEM_DEFAULT;
}

SEC("struct_ops/gpu_evict_prepare")
int lfu_evict(struct gpu_mem_evict_ctx *ctx)
{
	__u64 best = GPU_MEM_NO_BLOCK, best_count = ~0ull;

	for (__u32 i = 0; i < POLICY_SAMPLE && i < ctx->nr_candidates; i++) {
		__u64 b = bpf_gpu_evict_candidate(ctx, i);
		__u64 c = lfu_count(b);
		if (b != GPU_MEM_NO_BLOCK && c < best_count) {
			best = b;
			best_count = c;
		}
	}
	if (best != GPU_MEM_NO_BLOCK)
		bpf_gpu_block_move_head(ctx, best);
	return 0;
}

SEC(".struct_ops")
struct gpu_mem_ops lfu = {
	.gpu_block_activate = (void *)lfu_activate,
	.gpu_block_access = (void *)lfu_access,
	.gpu_evict_prepare = (void *)lfu_evict,
};

char LICENSE[] SEC("license") = "GPL";
