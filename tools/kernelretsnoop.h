/* SPDX-License-Identifier: MIT */
/* kernelretsnoop.h - maps of tools/kernelretsnoop.bpf.c (per block). */
#ifndef GPUEXT_TOOLS_KERNELRETSNOOP_H
#define GPUEXT_TOOLS_KERNELRETSNOOP_H

#include <linux/types.h>

/* Block indexes (linear, modulo this) with a record of their last run. */
#define KRS_MAX_BLOCKS (1 << 16)

/* Value of `blocks` (key: linear block index % KRS_MAX_BLOCKS): the block
 * of that index that ended last (plain stores: a launch overwrites the
 * previous one's; end_ns 0 = no block of that index ran). */
struct krs_block {
	__u64 start_ns; /* %globaltimer at the block's entry */
	__u64 end_ns;   /* %globaltimer at its last exit */
	__u32 block[3];
	__u32 sm;
	__u32 threads;
	__u32 warps;
	__u64 launch;   /* bpf_gpu_launch_id(): the launch table's id, 0 none */
};

#endif
