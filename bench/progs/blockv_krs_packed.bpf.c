/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes-s5.md, kernelretsnoop with its
 * record (same layout) written as six 8-byte stores instead of nine */
#include "blockv_krs.h"

SEC("gpu/block_exit/*")
int krs_packed(struct gpuext_block_ctx *ctx)
{
	__u64 *w = (__u64 *)krs_record(ctx);
	if (!w)
		return 0;
	krs_pack_but_end(w, ctx);
	w[1] = ctx->end_ns;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
