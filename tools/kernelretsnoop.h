/* SPDX-License-Identifier: MIT */
/* kernelretsnoop.h - maps of tools/kernelretsnoop.bpf.c (per block). */
#ifndef GPUEXT_TOOLS_KERNELRETSNOOP_H
#define GPUEXT_TOOLS_KERNELRETSNOOP_H

#include <linux/types.h>

#include "spread.h"

/* Block indexes (linear, modulo this) with a record of their last run. */
#define KRS_MAX_BLOCKS (1 << 16)
/* Launch ids 1..KRS_MAX_LAUNCHES-1 (bpf_gpu_launch_id) have a histogram of
 * their own; slot 0 counts the blocks of later launches and of kernels
 * without an id. */
#define KRS_MAX_LAUNCHES 256
/* log2 buckets of durations in ns, as the CLI's histograms count them:
 * bucket 0 holds 0, bucket b >= 1 holds [2^(b-1), 2^b); the last one
 * everything above. */
#define KRS_BUCKETS 48

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
};

/* Value of `durations` (key: launch slot x SPREAD_SLOTS + spread slot,
 * chosen by block index): log2 histogram of the durations of the blocks of
 * that launch (slot 0: the others), on lines of their own (spread.h). */
struct krs_hist {
	__u64 count[KRS_BUCKETS];
};

#endif
