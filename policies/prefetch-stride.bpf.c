/* SPDX-License-Identifier: MIT */
/*
 * prefetch-stride: per process, the distance between consecutive faults;
 * when the same forward stride (up to 64 pages) is seen twice in a row,
 * prefetch the next STRIDE_AHEAD strides' span within the block (one region
 * covers them: strides this short make whole-span migration cheaper than
 * separate faults).  Anything else: the driver's tree.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpu_mem_ops.h>

#define STRIDE_MAX 64  /* pages */
#define STRIDE_AHEAD 8

struct stride_state {
	__u64 last_page;
	__u64 stride;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct stride_state);
} strides SEC(".maps");

SEC("struct_ops/gpu_page_prefetch")
int stride_prefetch(struct gpu_mem_prefetch_ctx *ctx)
{
	__u32 pid = ctx->pid;
	__u64 page = ctx->fault_addr / GPU_MEM_PAGE_SIZE;
	struct stride_state *s = bpf_map_lookup_elem(&strides, &pid);

	if (!s) {
		struct stride_state init = {.last_page = page};
		bpf_map_update_elem(&strides, &pid, &init, BPF_ANY);
		return GPU_MEM_DEFAULT;
	}
	__u64 stride = page - s->last_page; /* wraps for backward: never <= STRIDE_MAX */
	__u64 prev = s->stride;
	s->last_page = page;
	s->stride = stride;
	if (!stride || stride > STRIDE_MAX || stride != prev)
		return GPU_MEM_DEFAULT;
	__u64 end = ctx->page_index + stride * STRIDE_AHEAD + 1;
	bpf_gpu_set_prefetch_region(ctx, ctx->page_index,
				    end < ctx->max_end ? (__u32)end : ctx->max_end);
	return GPU_MEM_BYPASS;
}

SEC(".struct_ops")
struct gpu_mem_ops prefetch_stride = {
	.gpu_page_prefetch = (void *)stride_prefetch,
};

char LICENSE[] SEC("license") = "GPL";
