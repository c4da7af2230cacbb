/* SPDX-License-Identifier: MIT */
/*
 * uvmtrace.h - maps and records of tools/uvmtrace.bpf.c.  The ring buffer
 * `events` carries each unified-memory event's CUPTI record as it is
 * (struct gpuext_cupti_uvm); the hash `blocks` counts per 2 MiB block
 * (key: address >> UT_BLOCK_SHIFT).
 */
#ifndef GPUEXT_TOOLS_UVMTRACE_H
#define GPUEXT_TOOLS_UVMTRACE_H

#include <bpf/gpuext_cupti.h>

#define UT_BLOCK_SHIFT 21
#define UT_MAX_BLOCKS 65536
#define UT_RINGBUF_BYTES (32 << 20)

/* Value of `blocks`: one 2 MiB block's events. */
struct ut_block {
	__u64 cpu_faults;
	__u64 gpu_faults;   /* faults serviced (records), not fault-buffer entries */
	__u64 htod_bytes;
	__u64 dtoh_bytes;
	__u64 htod_count;
	__u64 dtoh_count;
	__u64 first_ns;     /* earliest event start */
	__u64 last_ns;      /* latest event end */
};

#endif
