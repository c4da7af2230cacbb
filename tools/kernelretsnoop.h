/* SPDX-License-Identifier: MIT */
/* kernelretsnoop.h - records of tools/kernelretsnoop.bpf.c (one per warp). */
#ifndef GPUEXT_TOOLS_KERNELRETSNOOP_H
#define GPUEXT_TOOLS_KERNELRETSNOOP_H

#include <linux/types.h>

/* Where a warp runs: its block and its warp index within the block. */
struct krs_key {
	__u32 block[3];
	__u32 warp;
};

/* One warp's run, sent to the ring buffer `events` at its exit. */
struct krs_event {
	__u64 start_ns; /* %globaltimer at the warp's entry probe */
	__u64 end_ns;   /* %globaltimer at its exit probe */
	__u32 block[3];
	__u32 warp;
	__u32 sm;
	__u32 lanes;    /* threads of the warp that reached the exit */
};

#endif
