/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes-s5.md, kernelretsnoop without the
 * exit barrier, whole: thread (0,0,0) stores the record but the end at the
 * block's entry (packed 8-byte stores), each warp's exit its own end time
 * at (block index, warp) for the host to take the block's latest
 * (blockv_wrs_end's program) */
#include "blockv_krs.h"
#include "blockv_wrs_end.bpf.c"

SEC("gpu/block_entry/*")
int krs_warps_entry(struct gpuext_block_ctx *ctx)
{
	__u64 *w = (__u64 *)krs_record(ctx);
	if (w)
		krs_pack_but_end(w, ctx);
	return 0;
}
