/* SPDX-License-Identifier: MIT */
/*
 * blockv_krs7.h - the record of bench/progs/blockv_krs7.bpf.c (session 7's
 * kernelretsnoop without the exit barrier, which tools/kernelretsnoop.h now
 * is): only what the host cannot derive from the launch table; 32 bytes at
 * the block's linear index modulo KRS7_MAX_BLOCKS
 * (bench/results/2026-11-22-h200-block-probes-s7.md).
 */
#ifndef GPUEXT_BENCH_BLOCKV_KRS7_H
#define GPUEXT_BENCH_BLOCKV_KRS7_H

#include <linux/types.h>

#define KRS7_MAX_BLOCKS (1 << 16)

struct krs7_block {
	__u64 start_ns; /* %globaltimer in thread (0,0,0) once its first global
			 * loads are issued */
	__u64 end_ns;   /* the latest of its warps' exits (red.max) */
	__u64 launch;   /* bpf_gpu_launch_id() */
	__u64 block_sm; /* the linear block index in bits 0..31, the SM above */
};

#endif
