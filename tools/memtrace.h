/* SPDX-License-Identifier: MIT */
/* memtrace.h - maps of tools/memtrace.bpf.c. */
#ifndef GPUEXT_TOOLS_MEMTRACE_H
#define GPUEXT_TOOLS_MEMTRACE_H

#include <linux/types.h>

/* Heat map granularity: accesses are counted per 2 MiB region. */
#define MT_REGION_SHIFT 21
#define MT_MAX_REGIONS 65536

/* Value of `traffic`, key = GPUEXT_MEM_LOAD, _STORE or _ATOMIC. */
struct mt_traffic {
	__u64 bytes;    /* size x active lanes */
	__u64 accesses; /* thread accesses (active lanes) */
	__u64 instrs;   /* warp-level memory instructions (probe calls) */
};

#endif
