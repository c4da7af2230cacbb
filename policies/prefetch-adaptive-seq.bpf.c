/* SPDX-License-Identifier: MIT */
/*
 * prefetch-adaptive-seq: detect sequential faults per process and prefetch
 * ahead of them, the window doubling (64 KiB .. the rest of the block)
 * while the run continues; a fault that breaks the run resets it and the
 * driver's tree decides.  Faults within SEQ_GAP pages after the last one
 * still count as sequential (warps fault out of order).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpu_mem_ops.h>

#define SEQ_GAP 16     /* pages */
#define SEQ_MIN_WINDOW 16
#define SEQ_MAX_SHIFT 5 /* 16 << 5 = 512 pages: the whole block */

struct seq_state {
	__u64 last_page; /* fault address / 4 KiB */
	__u32 run;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct seq_state);
} runs SEC(".maps");

SEC("struct_ops/gpu_page_prefetch")
int seq_prefetch(struct gpu_mem_prefetch_ctx *ctx)
{
	__u32 pid = ctx->pid;
	__u64 page = ctx->fault_addr / GPU_MEM_PAGE_SIZE;
	struct seq_state *s = bpf_map_lookup_elem(&runs, &pid);

	if (!s) {
		struct seq_state init = {.last_page = page};
		bpf_map_update_elem(&runs, &pid, &init, BPF_ANY);
		return GPU_MEM_DEFAULT;
	}
	if (page > s->last_page && page - s->last_page <= SEQ_GAP)
		s->run++;
	else if (page != s->last_page)
		s->run = 0;
	s->last_page = page;
	if (!s->run)
		return GPU_MEM_DEFAULT;
	__u32 shift = s->run < SEQ_MAX_SHIFT ? s->run : SEQ_MAX_SHIFT;
	__u32 end = ctx->page_index + (SEQ_MIN_WINDOW << shift);
	bpf_gpu_set_prefetch_region(ctx, ctx->page_index, end < ctx->max_end ? end : ctx->max_end);
	return GPU_MEM_BYPASS;
}

SEC(".struct_ops")
struct gpu_mem_ops prefetch_adaptive_seq = {
	.gpu_page_prefetch = (void *)seq_prefetch,
};

char LICENSE[] SEC("license") = "GPL";
