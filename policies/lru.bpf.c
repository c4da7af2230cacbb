/* SPDX-License-Identifier: MIT */
/*
 * lru: the driver's own eviction order written as a policy: a block goes to
 * the tail (evicted last) whenever pages migrate into it.  Running it gives
 * the same result as no policy (tests/unit/test_policies.c checks this): the
 * reference the other policies are measured against.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpu_mem_ops.h>

SEC("struct_ops/gpu_block_activate")
int lru_activate(struct gpu_mem_block_ctx *ctx)
{
	bpf_gpu_block_move_tail(ctx, ctx->block);
	return GPU_MEM_BYPASS;
}

SEC("struct_ops/gpu_block_access")
int lru_access(struct gpu_mem_block_ctx *ctx)
{
	bpf_gpu_block_move_tail(ctx, ctx->block);
	return GPU_MEM_BYPASS;
}

SEC(".struct_ops")
struct gpu_mem_ops lru = {
	.gpu_block_activate = (void *)lru_activate,
	.gpu_block_access = (void *)lru_access,
};

char LICENSE[] SEC("license") = "GPL";
