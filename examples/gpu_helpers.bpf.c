/* SPDX-License-Identifier: MIT */
/*
 * gpu_helpers: every GPU helper that the translator writes inline
 * (src/ptx/ptx_intrin.c), packed into r0, for `gpuext run-gpu` (one thread
 * of one block: `gpuext run-gpu build/bpf/examples/gpu_helpers.bpf.o helpers`
 * prints r0 = 0xf000100111).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

SEC("gpu/entry/gpu_helpers")
long helpers(void *ctx)
{
	__u64 r = bpf_gpu_block_dim(0);            /* 1 */
	r |= bpf_gpu_grid_dim(0) << 4;             /* 1 */
	r |= bpf_gpu_lane_count() << 8;            /* 1 */
	r |= bpf_gpu_warp_id() << 12;              /* 0 */
	r |= bpf_gpu_lane_id() << 16;              /* 0 */
	r |= bpf_gpu_active_mask() << 20;          /* 1 */
	r |= bpf_gpu_per_thread() << 24;           /* 0: once per warp */
	r |= bpf_gpu_block_idx(0) << 28;           /* 0 */
	r |= bpf_gpu_thread_idx(0) << 32;          /* 0 */
	r |= (__u64)(bpf_gpu_block_dim(3) == 0) << 36;
	r |= (__u64)(bpf_gpu_globaltimer() != 0) << 37;
	r |= (__u64)(bpf_gpu_clock() != 0) << 38;
	r |= (__u64)(bpf_gpu_sm_id() < 1024) << 39;
	return r;
}

char LICENSE[] SEC("license") = "GPL";
