/* SPDX-License-Identifier: MIT */
/* threadhist.h - maps of tools/threadhist.bpf.c. */
#ifndef GPUEXT_TOOLS_THREADHIST_H
#define GPUEXT_TOOLS_THREADHIST_H

#include <linux/types.h>

/* SM ids (%smid) the counters hold: 0 .. TH_MAX_SM - 1 (an H200 has 132
 * SMs; a block on a higher id is not counted). */
#define TH_MAX_SM 256
/* Block sizes the counters hold: 1 .. TH_SIZES threads (CUDA's limit is
 * 1024 threads a block). */
#define TH_SIZES 1024

/* `sm_blocks`: an array of __u64, key SM id x TH_SIZES + threads - 1, value
 * the blocks of exactly that many threads that ran on that SM.  The host
 * multiplies: threads = blocks x size, warps = blocks x ceil(size / 32), the
 * size histogram adds blocks by size; so one add a block, and an SM's
 * counters are 8 KiB apart from the next SM's (no two SMs share a line). */
static inline __u32 th_key(__u32 sm, __u32 threads)
{
	return sm * TH_SIZES + ((threads - 1) & (TH_SIZES - 1));
}

#endif
