/* SPDX-License-Identifier: MIT */
/* threadhist.h - maps of tools/threadhist.bpf.c. */
#ifndef GPUEXT_TOOLS_THREADHIST_H
#define GPUEXT_TOOLS_THREADHIST_H

#include <linux/types.h>

#include "spread.h"

/* Max SM id + 1 the per-SM array holds (H100/H200 have 132 SMs). */
#define TH_MAX_SM 1024
/* Blocks (linear index) that get their own counters; blocks past it are
 * counted per SM only. */
#define TH_MAX_BLOCKS 262144

/* Value of `per_block` (key: linear block index). */
struct th_count {
	__u64 threads;
	__u64 warps;
};

/* Value of `per_sm` (key: SM id x SPREAD_SLOTS + spread slot, the slot
 * chosen by block index): a 128-byte line of its own, so that the SMs'
 * counters, which every block of the grid updates, never share one
 * (spread.h). */
struct th_sm_count {
	__u64 threads;
	__u64 warps;
	__u64 pad[14];
};

#endif
