/* SPDX-License-Identifier: MIT */
/*
 * prefetch-always-max: on any fault, migrate the whole 2 MiB block.  One
 * fault per block for scans; for sparse access it moves 2 MiB per 4 KiB
 * used.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpu_mem_ops.h>

SEC("struct_ops/gpu_page_prefetch")
int max_prefetch(struct gpu_mem_prefetch_ctx *ctx)
{
	bpf_gpu_set_prefetch_region(ctx, ctx->max_first, ctx->max_end);
	return GPU_MEM_BYPASS;
}

SEC(".struct_ops")
struct gpu_mem_ops prefetch_always_max = {
	.gpu_page_prefetch = (void *)max_prefetch,
};

char LICENSE[] SEC("license") = "GPL";
