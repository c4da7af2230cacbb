/* SPDX-License-Identifier: MIT */
/*
 * pid-quota: LRU, except that a process over its quota of GPU memory pays
 * for its own faults: the block it just brought in goes to the head (next
 * to be evicted) instead of the tail, so it recycles its own memory rather
 * than evicting other processes' blocks.  The quota is a percentage of the
 * budget per pid in the map `quota_pct` (written by the user, e.g. from the
 * agent's session); pids without an entry get QUOTA_DEFAULT_PCT.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpu_mem_ops.h>

#define QUOTA_DEFAULT_PCT 50

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u32);
} quota_pct SEC(".maps");

static __always_inline int quota_place(struct gpu_mem_block_ctx *ctx)
{
	__u32 pid = ctx->pid;
	__u32 *pct = bpf_map_lookup_elem(&quota_pct, &pid);
	__u64 limit = (__u64)ctx->capacity_blocks * (pct ? *pct : QUOTA_DEFAULT_PCT) / 100;

	if (limit < 1)
		limit = 1;
	if (ctx->pid_resident_blocks > limit)
		bpf_gpu_block_move_head(ctx, ctx->block);
	else
		bpf_gpu_block_move_tail(ctx, ctx->block);
	return GPU_MEM_BYPASS;
}

SEC("struct_ops/gpu_block_activate")
int quota_activate(struct gpu_mem_block_ctx *ctx)
{
	return quota_place(ctx);
}

SEC("struct_ops/gpu_block_access")
int quota_access(struct gpu_mem_block_ctx *ctx)
{
	return quota_place(ctx);
}

SEC(".struct_ops")
struct gpu_mem_ops pid_quota = {
	.gpu_block_activate = (void *)quota_activate,
	.gpu_block_access = (void *)quota_access,
};

char LICENSE[] SEC("license") = "GPL";
