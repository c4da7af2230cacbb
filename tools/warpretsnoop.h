/* SPDX-License-Identifier: MIT */
/* warpretsnoop.h - records of tools/warpretsnoop.bpf.c (one per warp). */
#ifndef GPUEXT_TOOLS_WARPRETSNOOP_H
#define GPUEXT_TOOLS_WARPRETSNOOP_H

#include <linux/types.h>

/*
 * Start times are kept per global warp id (block x warps per block + warp)
 * modulo WRS_MAX_WARPS: two warps share a slot only if one of them is still
 * running when the other, WRS_MAX_WARPS warps later in the grid, starts (a
 * GPU holds a few thousand warps at once); the later one then has no record.
 */
#define WRS_MAX_WARPS (1 << 18)

/* One warp's run, sent to the ring buffer `events` at its exit. */
struct wrs_event {
	__u64 start_ns; /* %globaltimer at the warp's entry probe */
	__u64 end_ns;   /* %globaltimer at its exit probe */
	__u32 block[3];
	__u32 warp;
	__u32 sm;
	__u32 lanes;    /* threads of the warp that reached the exit */
	__u64 launch;   /* bpf_gpu_launch_id(): the launch table's row */
};

#endif
