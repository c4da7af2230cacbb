/* SPDX-License-Identifier: MIT */
/*
 * prefetch-none: migrate only the faulting pages.  The baseline that shows
 * what the driver's prefetch is worth, and the right choice for sparse
 * random access, where prefetched pages are mostly evicted unused.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpu_mem_ops.h>

SEC("struct_ops/gpu_page_prefetch")
int none_prefetch(struct gpu_mem_prefetch_ctx *ctx)
{
	return GPU_MEM_BYPASS; /* no region set: nothing beyond the faulting page */
}

SEC(".struct_ops")
struct gpu_mem_ops prefetch_none = {
	.gpu_page_prefetch = (void *)none_prefetch,
};

char LICENSE[] SEC("license") = "GPL";
