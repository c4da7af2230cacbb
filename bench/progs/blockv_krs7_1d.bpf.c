/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes-s7.md: blockv_krs7 whose
 * warp exit program reads %ctaid.y and %ctaid.z only where the grid has a
 * y or z (gridDim comes from the constant bank, %ctaid from special
 * registers: reading those on every warp's tail cost ~4% by hand) */
#include <linux/types.h>
static __always_inline __u32 krs_block_1d(void);
#define KRS_WARP_BLOCK() krs_block_1d()
#include "blockv_krs7.bpf.c"

static __always_inline __u32 krs_block_1d(void)
{
	__u32 block = bpf_gpu_block_idx(0), gy = bpf_gpu_grid_dim(1), gz = bpf_gpu_grid_dim(2);
	if ((gy | gz) != 1)
		block += (__u32)bpf_gpu_grid_dim(0) * ((__u32)bpf_gpu_block_idx(1) + gy * (__u32)bpf_gpu_block_idx(2));
	return block;
}
