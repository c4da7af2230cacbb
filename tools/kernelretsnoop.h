/* SPDX-License-Identifier: MIT */
/* kernelretsnoop.h - maps of tools/kernelretsnoop.bpf.c (per block). */
#ifndef GPUEXT_TOOLS_KERNELRETSNOOP_H
#define GPUEXT_TOOLS_KERNELRETSNOOP_H

#include <linux/types.h>

/* Block indexes (linear, modulo this) with a record of their last run. */
#define KRS_MAX_BLOCKS (1 << 16)

/* The block index and the SM in krs_block.block_sm. */
#define KRS_BLOCK_INDEX(block_sm) ((__u32)(block_sm))
#define KRS_BLOCK_SM(block_sm) ((__u32)((block_sm) >> 32))

/*
 * Value of `blocks` (key: linear block index % KRS_MAX_BLOCKS): the block
 * of that index that ran last, only what the host cannot derive from the
 * launch table (the block's x, y, z, threads and warps come from its
 * launch's grid and block).  end_ns 0: no warp of that index has exited.
 */
struct krs_block {
	__u64 start_ns; /* %globaltimer in thread (0,0,0) once its first global
			 * loads are issued */
	__u64 end_ns;   /* the latest of its warps' exits (red.max) */
	__u64 launch;   /* bpf_gpu_launch_id(): the launch table's id, 0 none */
	__u64 block_sm; /* the linear block index in bits 0..31, the SM above */
};

#endif
