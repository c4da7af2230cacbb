/* SPDX-License-Identifier: MIT */
/*
 * evil: a policy that passes the verifier and asks for everything it must
 * not get: evict every block, prefetch outside the block, prefetch whole
 * blocks outside managed memory or more than fit, move blocks that
 * do not exist or are not resident, read regions past the block, ask for
 * candidates past the end.  tests/unit/test_policies.c runs it and checks
 * that the runtime clamps each request and the model stays consistent.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpu_mem_ops.h>

SEC("struct_ops/gpu_page_prefetch")
int evil_prefetch(struct gpu_mem_prefetch_ctx *ctx)
{
	bpf_gpu_region_count(ctx, 0, 1u << 20);
	bpf_gpu_block_move_head(ctx, ctx->block + (1ull << 40));
	bpf_gpu_set_prefetch_region(ctx, 400, 100000); /* beyond the block's 512 pages */
	return GPU_MEM_BYPASS;
}

SEC("struct_ops/gpu_block_activate")
int evil_activate(struct gpu_mem_block_ctx *ctx)
{
	bpf_gpu_block_move_head(ctx, GPU_MEM_NO_BLOCK);
	bpf_gpu_block_move_tail(ctx, ctx->block + 1000000);
	bpf_gpu_set_prefetch_region(ctx, 0, 512); /* not a prefetch call */
	bpf_gpu_evict_candidate(ctx, 0);          /* not an eviction */
	bpf_gpu_block_move_head(ctx, ctx->block); /* allowed: evict me first */
	return 7;                                 /* unknown: the default */
}

SEC("struct_ops/gpu_block_access")
int evil_access(struct gpu_mem_block_ctx *ctx)
{
	bpf_gpu_block_move_tail(ctx, ctx->block - 1); /* may or may not be resident */
	bpf_gpu_prefetch_block(ctx, ctx->va_start + (1ull << 40)); /* not managed memory */
	bpf_gpu_prefetch_block(ctx, ~0ull);
	/* every block there is, more than the queue holds and the budget */
	for (__u64 i = 0; i < 80; i++)
		bpf_gpu_prefetch_block(ctx, ctx->va_start + ((i % 16) << 21) - (8ull << 21));
	return GPU_MEM_BYPASS;
}

SEC("struct_ops/gpu_evict_prepare")
int evil_evict(struct gpu_mem_evict_ctx *ctx)
{
	bpf_gpu_evict_candidate(ctx, ctx->nr_candidates + 5);
	bpf_gpu_prefetch_block(ctx, 0); /* not in an eviction */
	bpf_gpu_block_move_head(ctx, bpf_gpu_evict_candidate(ctx, 1u << 30));
	return 1 << 30; /* evict everything */
}

SEC(".struct_ops")
struct gpu_mem_ops evil = {
	.gpu_page_prefetch = (void *)evil_prefetch,
	.gpu_block_activate = (void *)evil_activate,
	.gpu_block_access = (void *)evil_access,
	.gpu_evict_prepare = (void *)evil_evict,
};

char LICENSE[] SEC("license") = "GPL";
