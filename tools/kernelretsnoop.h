/* SPDX-License-Identifier: MIT */
/* kernelretsnoop.h - maps of tools/kernelretsnoop.bpf.c (per block). */
#ifndef GPUEXT_TOOLS_KERNELRETSNOOP_H
#define GPUEXT_TOOLS_KERNELRETSNOOP_H

#include <linux/types.h>

/* Block indexes (linear, modulo this: a power of two, so that every warp's
 * exit finds its slot with a mask) with a record of their last run. */
#define KRS_MAX_BLOCKS (1 << 16)

/*
 * Value of `blocks` (key: linear block index % KRS_MAX_BLOCKS): the last
 * run of a block of that index.  Only what the host cannot derive: the
 * block's threads and warps, and its (x, y, z) from the linear index, come
 * from the launch table's row of `launch` (the CLI joins them).  start_ns,
 * launch and block_sm are stored by the block's entry program, end_ns is
 * the maximum of its warps' exit times (bpf_gpu_atomic_max); end_ns 0: no
 * block of that index ran.
 */
struct krs_block {
	__u64 start_ns; /* %globaltimer in thread (0,0,0) once its first global
			 * loads are issued (at its entry where the kernel has
			 * none before a loop: docs/ptx-inject.md) */
	__u64 end_ns;   /* %globaltimer at the block's last warp exit */
	__u64 launch;   /* bpf_gpu_launch_id(): the launch table's id, 0 none */
	__u64 block_sm; /* the linear block index in bits 0..31, the SM above */
};

/* The fields of krs_block.block_sm. */
#define KRS_BLOCK(block_sm) ((__u32)(block_sm))
#define KRS_SM(block_sm) ((__u32)((block_sm) >> 32))

#endif
