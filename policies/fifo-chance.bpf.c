/* SPDX-License-Identifier: MIT */
/*
 * fifo-chance: FIFO with a second chance (CLOCK).  A fault into a resident
 * block sets its referenced bit instead of moving it; at eviction a
 * referenced block at the head loses its bit and goes to the tail, the
 * first unreferenced one is evicted.  Near-LRU quality, with no list moves
 * on the fault path.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpu_mem_ops.h>

#include "policy_common.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, POLICY_MAX_BLOCKS);
	__type(key, __u32);
	__type(value, __u8);
} referenced SEC(".maps");

static __always_inline void chance_set(__u64 block, __u8 v)
{
	__u32 key = (__u32)block;
	__u8 *r = bpf_map_lookup_elem(&referenced, &key);

	if (r)
		*r = v;
}

SEC("struct_ops/gpu_block_activate")
int chance_activate(struct gpu_mem_block_ctx *ctx)
{
	chance_set(ctx->block, 0);
	bpf_gpu_block_move_tail(ctx, ctx->block);
	return GPU_MEM_BYPASS;
}

SEC("struct_ops/gpu_block_access")
int chance_access(struct gpu_mem_block_ctx *ctx)
{
	chance_set(ctx->block, 1);
	return GPU_MEM_BYPASS;
}

SEC("struct_ops/gpu_evict_prepare")
int chance_evict(struct gpu_mem_evict_ctx *ctx)
{
	for (__u32 i = 0; i < POLICY_SAMPLE && i < ctx->nr_candidates; i++) {
		__u64 b = bpf_gpu_evict_candidate(ctx, 0);
		__u32 key = (__u32)b;
		__u8 *r = bpf_map_lookup_elem(&referenced, &key);
		if (!r || !*r)
			break;
		*r = 0;
		bpf_gpu_block_move_tail(ctx, b);
	}
	return 0;
}

SEC(".struct_ops")
struct gpu_mem_ops fifo_chance = {
	.gpu_block_activate = (void *)chance_activate,
	.gpu_block_access = (void *)chance_access,
	.gpu_evict_prepare = (void *)chance_evict,
};

char LICENSE[] SEC("license") = "GPL";
