/* SPDX-License-Identifier: MIT */
/*
 * gpuext_launch.h - the launch table's records (bpf_gpu_launch_id(),
 * docs/gpu-helpers.md): shared by programs, the agent and the CLI.
 */
#ifndef GPUEXT_BPF_GPUEXT_LAUNCH_H
#define GPUEXT_BPF_GPUEXT_LAUNCH_H

#include <linux/types.h>

/*
 * The launch table: an object that defines a ring buffer of this name
 *   struct { __uint(type, BPF_MAP_TYPE_RINGBUF); __uint(max_entries, 1 << 20); }
 *           gpuext_launches SEC(".maps");
 * gets one record per launch of an instrumented kernel from the agent (on
 * the host, at the launch call), which `gpuext run` prints or the tool's
 * formatter joins with the device records by id.  Programs do not write it.
 */
#define GPUEXT_LAUNCHES_MAP "gpuext_launches"

enum gpuext_launch_kind {
	GPUEXT_LAUNCH_KERNEL = 0,      /* cuLaunchKernel(_ptsz) */
	GPUEXT_LAUNCH_COOPERATIVE = 1, /* cuLaunchCooperativeKernel(_ptsz) */
	GPUEXT_LAUNCH_EX = 2,          /* cuLaunchKernelEx(_ptsz) */
	GPUEXT_LAUNCH_GRAPH_NODE = 3,  /* a graph kernel node made or set */
};

/* A record of GPUEXT_LAUNCHES_MAP: the fixed part, then the kernel's mangled
 * name, NUL-terminated (the record is 8-byte padded). */
struct gpuext_launch {
	__u64 id;      /* what bpf_gpu_launch_id() returns in that launch */
	__u64 host_ns; /* CLOCK_MONOTONIC at the launch call (node: when made) */
	__u64 stream;  /* the CUstream handle (0: the legacy default stream, or a node) */
	__u32 grid[3];
	__u32 block[3];
	__u32 shmem;   /* dynamic shared memory bytes */
	__u32 kind;    /* enum gpuext_launch_kind */
	/* char kernel[]; follows */
};

#endif /* GPUEXT_BPF_GPUEXT_LAUNCH_H */
