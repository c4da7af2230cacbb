/* SPDX-License-Identifier: MIT */
/* smload.h - maps of tools/smload.bpf.c. */
#ifndef GPUEXT_TOOLS_SMLOAD_H
#define GPUEXT_TOOLS_SMLOAD_H

#include <linux/types.h>

#include "spread.h"

#define SL_MAX_SM 1024

/*
 * Value of `per_sm` (key: SM id x SPREAD_SLOTS + spread slot), a 128-byte
 * line of its own (spread.h).  A warp's
 * threads enter and exit on one SM, so the SM's thread-time, the sum over
 * its threads of (exit - entry), is exit_lane_ns - entry_lane_ns once every
 * thread has left (threads == exit_threads): no per-warp start time needs
 * to be kept anywhere.  The sums are taken modulo 2^64, which the
 * difference undoes.
 */
struct sl_load {
	__u64 warps;         /* warps that entered */
	__u64 threads;       /* lanes at entry */
	__u64 exit_threads;  /* lanes at the exits (a warp may leave by several) */
	__u64 entry_lane_ns; /* sum of lanes x %globaltimer at entry */
	__u64 exit_lane_ns;  /* sum of lanes x %globaltimer at each exit */
	__u64 pad[11];
};

#endif
