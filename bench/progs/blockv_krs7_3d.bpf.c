/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes-s7.md: blockv_krs7 whose
 * warp exit program computes the block index from special registers on
 * its way out (%ctaid.x/y/z, %nctaid.x/y), as in round 1, instead of
 * bpf_gpu_block_index()'s register */
#define KRS_WARP_BLOCK()                                                                 \
	((__u32)bpf_gpu_block_idx(0) +                                                   \
	 (__u32)bpf_gpu_grid_dim(0) *                                                    \
		 ((__u32)bpf_gpu_block_idx(1) + (__u32)bpf_gpu_grid_dim(1) * (__u32)bpf_gpu_block_idx(2)))
#include "blockv_krs7.bpf.c"
