/* SPDX-License-Identifier: MIT */
/* smload.h - maps of tools/smload.bpf.c. */
#ifndef GPUEXT_TOOLS_SMLOAD_H
#define GPUEXT_TOOLS_SMLOAD_H

#include <linux/types.h>

#define SL_MAX_SM 1024

/* Where a warp runs (key of `starts`). */
struct sl_key {
	__u32 block[3];
	__u32 warp;
};

/* Value of `per_sm` (key: SM id). */
struct sl_load {
	__u64 warps;   /* warps that exited on this SM (counted at their first exit) */
	__u64 threads; /* lanes at every exit: each thread once */
	__u64 busy_ns; /* sum of warp run times (entry to exit, %globaltimer) */
};

#endif
