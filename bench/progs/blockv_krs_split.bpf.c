/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes-s5.md, kernelretsnoop split: its
 * record stored at the block's entry by thread (0,0,0) (start, index, SM,
 * threads, warps, launch), only the end time after the exit barrier */
#include "blockv_krs.h"

SEC("gpu/block_entry/*")
int krs_split_entry(struct gpuext_block_ctx *ctx)
{
	struct blockv_krs_rec *b = krs_record(ctx);
	if (b)
		krs_store_but_end(b, ctx);
	return 0;
}

SEC("gpu/block_exit/*")
int krs_split_exit(struct gpuext_block_ctx *ctx)
{
	struct blockv_krs_rec *b = krs_record(ctx);
	if (b)
		b->end_ns = ctx->end_ns;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
