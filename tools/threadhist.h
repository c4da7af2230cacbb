/* SPDX-License-Identifier: MIT */
/* threadhist.h - maps of tools/threadhist.bpf.c. */
#ifndef GPUEXT_TOOLS_THREADHIST_H
#define GPUEXT_TOOLS_THREADHIST_H

#include <linux/types.h>

#include "spread.h"

/* Max SM id + 1 the per-SM array holds (H100/H200 have 132 SMs). */
#define TH_MAX_SM 1024
/* log2 buckets of threads per block, as the CLI's histograms count them
 * (bucket b >= 1 holds [2^(b-1), 2^b)): a block has at most 1024 threads,
 * bucket 11. */
#define TH_SIZE_BUCKETS 12

/* Value of `sm_threads` (key: SM id x SPREAD_SLOTS + spread slot, the slot
 * chosen by block index): one 128-byte line, everything a block adds, so
 * that a block touches one line and the SMs' counters, which every block
 * of the grid updates, never share one (spread.h). */
struct th_sm_count {
	__u64 threads;
	__u64 warps;
	__u64 blocks_by_size[TH_SIZE_BUCKETS]; /* blocks, by log2 bucket of threads */
	__u64 pad[2];
};

#endif
