/* SPDX-License-Identifier: MIT */
/*
 * fifo: evict in the order blocks became resident; later faults into a
 * resident block do not refresh it.  Good for single-pass scans, where
 * refreshing on access only keeps blocks that will not be used again.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpu_mem_ops.h>

SEC("struct_ops/gpu_block_activate")
int fifo_activate(struct gpu_mem_block_ctx *ctx)
{
	bpf_gpu_block_move_tail(ctx, ctx->block);
	return GPU_MEM_BYPASS;
}

SEC("struct_ops/gpu_block_access")
int fifo_access(struct gpu_mem_block_ctx *ctx)
{
	return GPU_MEM_BYPASS; /* keep its place */
}

SEC(".struct_ops")
struct gpu_mem_ops fifo = {
	.gpu_block_activate = (void *)fifo_activate,
	.gpu_block_access = (void *)fifo_access,
};

char LICENSE[] SEC("license") = "GPL";
