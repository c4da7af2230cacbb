/* SPDX-License-Identifier: MIT */
/* launchlate.h - records of tools/launchlate.bpf.c. */
#ifndef GPUEXT_TOOLS_LAUNCHLATE_H
#define GPUEXT_TOOLS_LAUNCHLATE_H

#include <linux/types.h>

enum {
	LL_HOST_LAUNCH = 0,  /* cuLaunchKernel called: ts = CLOCK_MONOTONIC ns */
	LL_DEVICE_ENTRY = 1, /* block (0,0,0) warp 0 entered: ts = %globaltimer ns */
};

/* Record of the ring buffer `events`. */
struct ll_event {
	__u64 ts;
	__u32 kind;
	__u32 sm;   /* device records: the SM of block 0 */
};

#endif
