/* SPDX-License-Identifier: MIT */
/* kernelretsnoop.h - maps of tools/kernelretsnoop.bpf.c (per block). */
#ifndef GPUEXT_TOOLS_KERNELRETSNOOP_H
#define GPUEXT_TOOLS_KERNELRETSNOOP_H

#include <linux/types.h>

/* Block indexes (linear, modulo this) with a record of their last run. */
#define KRS_MAX_BLOCKS (1 << 16)

/* Value of `blocks` (key: linear block index % KRS_MAX_BLOCKS): the block
 * of that index that ran last (plain stores: a launch overwrites the
 * previous one's; end_ns 0 = no block of that index ended). */
struct krs_block {
	__u64 start_ns; /* %globaltimer at the block's entry */
	__u64 end_ns;   /* %globaltimer at its last exit */
	__u32 block[3];
	__u32 sm;
	__u32 threads;
	__u32 warps;
	__u64 launch;   /* bpf_gpu_launch_id(): the launch table's id, 0 none */
};

/* Its 8-byte words, as the block_entry program stores them (little-endian:
 * the first field of a pair in the low half). */
enum {
	KRS_W_START = 0,
	KRS_W_BLOCK01 = 2,       /* block[0], block[1] */
	KRS_W_BLOCK2_SM = 3,     /* block[2], sm */
	KRS_W_THREADS_WARPS = 4, /* threads, warps */
	KRS_W_LAUNCH = 5,
};
_Static_assert(__builtin_offsetof(struct krs_block, block) == 8 * KRS_W_BLOCK01 &&
		       __builtin_offsetof(struct krs_block, block[2]) == 8 * KRS_W_BLOCK2_SM &&
		       __builtin_offsetof(struct krs_block, threads) == 8 * KRS_W_THREADS_WARPS &&
		       __builtin_offsetof(struct krs_block, launch) == 8 * KRS_W_LAUNCH,
	       "krs_block's 8-byte words");

#endif
