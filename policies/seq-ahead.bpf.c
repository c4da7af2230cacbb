/* SPDX-License-Identifier: MIT */
/*
 * seq-ahead: for scans over more memory than the budget (a kernel sequence
 * sweeping a buffer, layer after layer): when a block is accessed, the
 * blocks after it are prefetched whole, on the runtime's own stream, before
 * the kernels reach them (a bulk copy instead of a fault per 64 KiB), and
 * the accessed block goes to the head of the eviction list.  In a cyclic
 * scan the block just used is the one needed last (MRU), while the blocks
 * prefetched ahead, pushed to the tail, stay until they are used.
 *
 * Map ahead_blocks[0]: how many blocks ahead (default 32 = 64 MiB, at most
 * 32: the prefetches for the next kernel are then asked for one kernel
 * earlier, as uvm_workload's seq launches 12-16 blocks each, instead of
 * racing it).  Costs a whole block per prefetch: wrong for sparse or random
 * access.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpu_mem_ops.h>

#define AHEAD_DEFAULT 32
#define AHEAD_MAX 32

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} ahead_blocks SEC(".maps");

static int used(struct gpu_mem_block_ctx *ctx)
{
	__u32 key = 0;
	__u64 n = AHEAD_DEFAULT;
	__u64 *v = bpf_map_lookup_elem(&ahead_blocks, &key);

	if (v && *v)
		n = *v < AHEAD_MAX ? *v : AHEAD_MAX;
	bpf_gpu_block_move_head(ctx, ctx->block);
	for (__u64 i = 1; i <= AHEAD_MAX && i <= n; i++)
		bpf_gpu_prefetch_block(ctx, ctx->va_start + (i << 21));
	return GPU_MEM_BYPASS;
}

SEC("struct_ops/gpu_block_activate")
int seq_ahead_activate(struct gpu_mem_block_ctx *ctx)
{
	return used(ctx);
}

SEC("struct_ops/gpu_block_access")
int seq_ahead_access(struct gpu_mem_block_ctx *ctx)
{
	return used(ctx);
}

SEC(".struct_ops")
struct gpu_mem_ops seq_ahead = {
	.gpu_block_activate = (void *)seq_ahead_activate,
	.gpu_block_access = (void *)seq_ahead_access,
};

char LICENSE[] SEC("license") = "GPL";
