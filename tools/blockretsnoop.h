/* SPDX-License-Identifier: MIT */
/* blockretsnoop.h - records of tools/blockretsnoop.bpf.c (one per block). */
#ifndef GPUEXT_TOOLS_BLOCKRETSNOOP_H
#define GPUEXT_TOOLS_BLOCKRETSNOOP_H

#include <linux/types.h>

/* One block's run, sent to the ring buffer `events` by its last exit. */
struct brs_event {
	__u64 start_ns; /* %globaltimer at the block's entry */
	__u64 end_ns;   /* %globaltimer at the block's last exit */
	__u32 block[3];
	__u32 sm;
	__u32 threads;  /* threads of the block that reached an exit (all) */
	__u32 pad;
	__u64 launch;   /* bpf_gpu_launch_id(): the launch table's row */
};

#endif
