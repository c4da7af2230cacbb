/* SPDX-License-Identifier: MIT */
/* threadhist.h - maps of tools/threadhist.bpf.c. */
#ifndef GPUEXT_TOOLS_THREADHIST_H
#define GPUEXT_TOOLS_THREADHIST_H

#include <linux/types.h>

/* Max SM id + 1 the per-SM array holds (H100/H200 have 132 SMs). */
#define TH_MAX_SM 1024
/* Distinct blocks (linear index) per run that get their own counters. */
#define TH_MAX_BLOCKS 262144

/* Value of `per_block` (key: linear block index) and `per_sm` (key: SM id).
 */
struct th_count {
	__u64 threads;
	__u64 warps;
};

#endif
