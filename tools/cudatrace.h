/* SPDX-License-Identifier: MIT */
/* cudatrace.h - maps of tools/cudatrace.bpf.c. */
#ifndef GPUEXT_TOOLS_CUDATRACE_H
#define GPUEXT_TOOLS_CUDATRACE_H

#include <linux/types.h>

#include "cuda_calls.h"
#include "trace.h"

#define CT_MAX_ALLOCS 262144  /* live allocations tracked at once */
#define CT_MAX_KERNELS 16384  /* distinct kernel handles */
#define CT_MAX_THREADS 4096   /* threads inside a probed call at once */

/* Keys of the `stats` array (__u64 each).  Counts are of successful calls;
 * failed ones are CT_FAILED. */
enum {
	CT_ALLOCS = 0,                          /* + CM_* */
	CT_ALLOC_BYTES = CT_ALLOCS + CM_COUNT,  /* + CM_* */
	CT_FREES = CT_ALLOC_BYTES + CM_COUNT,   /* + CM_*: frees of tracked allocations */
	CT_FREE_BYTES = CT_FREES + CM_COUNT,    /* + CM_* */
	CT_COPIES = CT_FREE_BYTES + CM_COUNT,   /* + CD_* */
	CT_COPY_BYTES = CT_COPIES + CD_COUNT,   /* + CD_* */
	CT_MEMSETS = CT_COPY_BYTES + CD_COUNT,
	CT_MEMSET_BYTES,
	CT_LAUNCHES,
	CT_FAILED,          /* probed calls that returned an error */
	CT_FREE_UNTRACKED,  /* frees of pointers allocated before the probes or elsewhere */
	CT_ALLOCS_LOST,     /* allocations not tracked: table full */
	CT_KERNELS_LOST,    /* launches of kernels not tracked: table full */
	CT_UNPAIRED,        /* returns without their entry (entry table full) */
	CT_STAT_COUNT,
};

/* Value of `allocs` (key: the allocated address). */
struct ct_alloc {
	__u64 size;
	__u64 site;  /* return address of the allocating call */
	__u32 kind;  /* CM_* */
	__u32 tid;
};

/* Value of `pending` (key: thread id): a probed call between entry and return. */
struct ct_pending {
	__u64 start;
	__u64 arg[5];
	__u64 site;
	__u32 call;
	__u32 pad;
};

#endif
