/* SPDX-License-Identifier: MIT */
/*
 * mru: evict the most recently migrated block first.  For cyclic scans over
 * more memory than the budget, LRU evicts exactly the block needed next;
 * MRU keeps a stable part of the cycle resident instead.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpu_mem_ops.h>

SEC("struct_ops/gpu_evict_prepare")
int mru_evict(struct gpu_mem_evict_ctx *ctx)
{
	__u32 n = ctx->nr_candidates;

	/* The candidates run from head (oldest) to tail (newest): move the
	 * `needed` newest ones to the head. */
	for (__u32 i = 0; i < 64 && i < ctx->needed && i < n; i++) {
		__u64 b = bpf_gpu_evict_candidate(ctx, n - 1);
		if (b == GPU_MEM_NO_BLOCK)
			break;
		bpf_gpu_block_move_head(ctx, b);
	}
	return 0;
}

SEC(".struct_ops")
struct gpu_mem_ops mru = {
	.gpu_evict_prepare = (void *)mru_evict,
};

char LICENSE[] SEC("license") = "GPL";
