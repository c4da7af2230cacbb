/* SPDX-License-Identifier: MIT */
/* launchlat.h - maps of tools/launchlat.bpf.c. */
#ifndef GPUEXT_TOOLS_LAUNCHLAT_H
#define GPUEXT_TOOLS_LAUNCHLAT_H

#include <linux/types.h>

#define LT_BUCKETS 65        /* log2 buckets of hist.h */
#define LT_MAX_KERNELS 16384 /* distinct kernel names */
#define LT_NAME_LEN 128

/* Keys of `stats` (__u64 each). */
enum {
	LT_API_LAUNCHES = 0, /* launch calls seen by the API probes */
	LT_KERNELS,          /* kernel records from CUPTI */
	LT_JOINED,           /* ... with their launching call (api_start set) */
	LT_NEGATIVE,         /* joined, but GPU start before the call (clock error): bucket 0 */
	LT_NAMES_LOST,       /* kernels not in `kernels`: table full */
	LT_STAT_COUNT,
};

/* Value of `kernels` (key: the record's name_hash). */
struct lt_kernel {
	__u64 records; /* kernel records (joined or not) */
	__u64 count;   /* joined records */
	__u64 ns;      /* sum of latencies */
	__u64 max_ns;
	char name[LT_NAME_LEN];
};

/* `hist` (array of LT_BUCKETS __u64): log2 of the ns from the launch call's
 * start to the kernel's start on the GPU. */

#endif
