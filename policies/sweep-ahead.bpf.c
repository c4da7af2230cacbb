/* SPDX-License-Identifier: MIT */
/*
 * sweep-ahead: for kernel sequences that sweep a buffer forward and then
 * backward (DNN training: layers forward, then backward): the blocks ahead
 * of the sweep, in its direction, are prefetched whole on the runtime's
 * stream before the kernels reach them; eviction stays LRU by access (an
 * accessed block goes to the tail), which in a forward-backward sweep keeps
 * the blocks the turn needs first.
 *
 * The direction: that of the last move between blocks, where a jump down
 * of more than JUMP_MAX blocks (a new pass from the start) counts as up.
 * The backward sweep's kernels each read their layer upwards: the jump down
 * to a layer's first block asks for the layers below, the steps up within
 * it ask for blocks that are resident already (no-ops).  Map ahead_blocks[0]: how many blocks
 * ahead (default 16, at most 32).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpu_mem_ops.h>

#define AHEAD_DEFAULT 16
#define AHEAD_MAX 32
#define JUMP_MAX 64
#define BLOCK (1ull << 21)

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} ahead_blocks SEC(".maps");

/* [0]: the last block accessed (va), [1]: 1 when the sweep goes down. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} sweep SEC(".maps");

static int used(struct gpu_mem_block_ctx *ctx)
{
	__u32 k0 = 0, k1 = 1;
	__u64 n = AHEAD_DEFAULT;
	__u64 *v = bpf_map_lookup_elem(&ahead_blocks, &k0);
	__u64 *last = bpf_map_lookup_elem(&sweep, &k0);
	__u64 *down = bpf_map_lookup_elem(&sweep, &k1);

	if (!last || !down)
		return GPU_MEM_DEFAULT;
	if (v && *v)
		n = *v < AHEAD_MAX ? *v : AHEAD_MAX;
	__u64 va = ctx->va_start;
	if (*last && va != *last) /* down: a step down or a short jump down */
		*down = va < *last && *last - va <= JUMP_MAX * BLOCK;
	*last = va;
	for (__u64 i = 1; i <= AHEAD_MAX && i <= n; i++) {
		if (*down && i * BLOCK > va)
			break;
		bpf_gpu_prefetch_block(ctx, *down ? va - i * BLOCK : va + i * BLOCK);
	}
	return GPU_MEM_DEFAULT; /* LRU by access: to the tail */
}

SEC("struct_ops/gpu_block_activate")
int sweep_ahead_activate(struct gpu_mem_block_ctx *ctx)
{
	return used(ctx);
}

SEC("struct_ops/gpu_block_access")
int sweep_ahead_access(struct gpu_mem_block_ctx *ctx)
{
	return used(ctx);
}

SEC(".struct_ops")
struct gpu_mem_ops sweep_ahead = {
	.gpu_block_activate = (void *)sweep_ahead_activate,
	.gpu_block_access = (void *)sweep_ahead_access,
};

char LICENSE[] SEC("license") = "GPL";
