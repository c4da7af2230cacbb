/* SPDX-License-Identifier: MIT */
/*
 * mem_signal.h - the maps of policies/mem-signal.bpf.c, the device half of
 * the memory-policy runtime's access signal, shared with the agent that
 * reads them (src/agent/agent_mem_signal.c; docs/policies.md "The device
 * access signal").
 *
 * The tracked window is MS_MAX_BLOCKS 2 MiB blocks of the address space
 * from block number `base` (the agent sets it over the managed
 * allocations).  Every page of the window has a 16-bit epoch: the kernel
 * that touches the page writes the current epoch there (a load per warp
 * access, a store only when it differs: no atomics).  The agent advances
 * the epoch at each snapshot, so a page whose value is the previous epoch
 * was touched since the last snapshot.
 */
#ifndef GPUEXT_POLICIES_MEM_SIGNAL_H
#define GPUEXT_POLICIES_MEM_SIGNAL_H

#include <linux/types.h>

#define MS_BLOCK_SHIFT 21
#define MS_PAGE_SHIFT 12
#define MS_PAGES 512         /* 4 KiB pages per 2 MiB block */
#define MS_MAX_BLOCKS 2048   /* 4 GiB of managed memory */
#define MS_PAGES_PER_VALUE 4 /* four u16 epochs in each 8-byte array value */
#define MS_VALUES (MS_MAX_BLOCKS * MS_PAGES / MS_PAGES_PER_VALUE)

/* Key 0 of map `ms_ctl`: written by the agent only. */
struct ms_ctl {
	__u64 base;   /* first block number (address >> 21) of the window */
	__u32 blocks; /* blocks of the window in use (<= MS_MAX_BLOCKS; 0: off) */
	__u32 epoch;  /* what a touch writes (low 16 bits); never 0 */
};

#endif
