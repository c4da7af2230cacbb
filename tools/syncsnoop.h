/* SPDX-License-Identifier: MIT */
/* syncsnoop.h - maps of tools/syncsnoop.bpf.c. */
#ifndef GPUEXT_TOOLS_SYNCSNOOP_H
#define GPUEXT_TOOLS_SYNCSNOOP_H

#include <linux/types.h>

#include "cuda_calls.h"
#include "trace.h"

#define SS_BUCKETS 65          /* log2 buckets of hist.h */
#define SS_MAX_CALLERS 16384   /* distinct (call site, call) pairs */
#define SS_MAX_THREADS 4096

/* Value of `totals` (key: enum cuda_call). */
struct ss_total {
	__u64 count;
	__u64 ns;
	__u64 max_ns;
	__u64 failed;
};

/* Key and value of `callers`. */
struct ss_caller_key {
	__u64 site;  /* return address of the blocking call */
	__u32 call;
	__u32 pad;
};
struct ss_caller {
	__u64 count;
	__u64 ns;
};

/* Value of `pending` (key: thread id). */
struct ss_pending {
	__u64 start;
	__u64 site;
	__u32 call;
	__u32 pad;
};

/* Key of `hist` (array): call * SS_BUCKETS + log2 bucket of the ns blocked. */

#endif
