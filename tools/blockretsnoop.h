/* SPDX-License-Identifier: MIT */
/* blockretsnoop.h - records of tools/blockretsnoop.bpf.c (one per block). */
#ifndef GPUEXT_TOOLS_BLOCKRETSNOOP_H
#define GPUEXT_TOOLS_BLOCKRETSNOOP_H

#include <linux/types.h>

/*
 * A block's start time and its count of exited threads are kept at its
 * linear block index modulo BRS_MAX_BLOCKS: two blocks share a slot only if
 * one is still running when the other, BRS_MAX_BLOCKS blocks later in the
 * grid (or in a kernel running at the same time), starts; their records are
 * then wrong or missing.
 */
#define BRS_MAX_BLOCKS (1 << 16)

/* Value of `blocks`. */
struct brs_slot {
	__u64 start_ns; /* %globaltimer at warp 0's entry probe */
	__u64 exited;   /* threads of the block that reached an exit */
};

/* One block's run, sent to the ring buffer `events` by its last exit. */
struct brs_event {
	__u64 start_ns; /* %globaltimer at warp 0's entry */
	__u64 end_ns;   /* %globaltimer at the block's last exit */
	__u32 block[3];
	__u32 sm;
	__u32 threads;  /* threads of the block (all reached an exit) */
	__u32 pad;
};

#endif
