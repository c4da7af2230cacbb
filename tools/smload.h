/* SPDX-License-Identifier: MIT */
/* smload.h - maps of tools/smload.bpf.c. */
#ifndef GPUEXT_TOOLS_SMLOAD_H
#define GPUEXT_TOOLS_SMLOAD_H

#include <linux/types.h>

#include "spread.h"

#define SL_MAX_SM 1024

/*
 * Value of `per_sm` (key: SM id x SPREAD_SLOTS + spread slot, chosen by
 * block index), a 128-byte line of its own (spread.h).  Added to once per
 * block, when the block's last warp has left (a block still running is not
 * counted yet).
 */
struct sl_load {
	__u64 blocks;  /* blocks that ran to their end */
	__u64 warps;   /* their warps */
	__u64 threads; /* their threads */
	__u64 warp_ns; /* sum over the blocks of warps x (last exit - entry) */
	__u64 pad[12];
};

#endif
