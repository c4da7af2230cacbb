/* SPDX-License-Identifier: MIT */
/*
 * trace.h - the records of a tool's `trace` ring buffer, which
 * `gpuext run --trace FILE` turns into a Chrome trace-event file
 * (src/cli/trace.c, docs/tools.md).
 *
 * Contract for a tool that supports --trace: a ring buffer map `trace` of
 * struct trace_rec and an array map `trace_on` (one __u32) that the CLI sets
 * to 1 before the application starts; the programs send records only then.
 * Launch records name their kernel through the tool's `kernels` map (key:
 * the handle, value: struct trace_kernel) when it has one.
 */
#ifndef GPUEXT_TOOLS_TRACE_H
#define GPUEXT_TOOLS_TRACE_H

#include <linux/types.h>

enum trace_kind {
	TRACE_API = 1,     /* a host API call: start/end CLOCK_MONOTONIC ns */
	TRACE_GPU_KERNEL,  /* a kernel on the GPU (CUPTI): start/end in CUPTI's clock */
	TRACE_GPU_MEMCPY,  /* a copy on the GPU (CUPTI) */
	TRACE_GPU_MEMSET,  /* a memset on the GPU (CUPTI) */
};

#define TRACE_NAME_LEN 128

struct trace_rec {
	__u64 start, end;
	__u64 arg;     /* API: bytes (alloc, copy, memset) or kernel handle (launch);
			  GPU: bytes (memcpy, memset) or the kernel's name hash */
	__u64 corr;    /* API: the allocated or freed pointer, the copy's or memset's
			  destination, a sync's call site; GPU: correlation id */
	__u32 kind;    /* enum trace_kind */
	__u32 track;   /* API: thread id; GPU: stream id */
	__u32 call;    /* API: enum cuda_call; GPU memcpy: CD_* direction */
	__s32 ret;     /* API: CUresult */
	__u32 device;  /* GPU: device */
	__u32 pad;
};

/* A record that names what it describes (GPU kernels): the ring buffer
 * record is this size instead of sizeof(struct trace_rec). */
struct trace_named {
	struct trace_rec r;
	char name[TRACE_NAME_LEN];
};

/* Value of a tool's `kernels` map (key: the __u64 CUfunction/CUkernel). */
struct trace_kernel {
	__u64 launches;
	char name[TRACE_NAME_LEN];
};

#endif
