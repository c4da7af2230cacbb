/* SPDX-License-Identifier: MIT */
/*
 * gpuext_helpers.h - GPU helpers for programs that run inside GPU kernels
 * (sections gpu/entry/KERNEL, gpu/exit/KERNEL, gpu/mem/KERNEL,
 * gpu/block_entry/KERNEL, gpu/block_exit/KERNEL).
 *
 * Declared the way libbpf's bpf_helper_defs.h declares the standard ones:
 * a call through a constant function pointer, which clang turns into
 * `call ID`.  Ids 500..599 are gpuext's (docs/gpu-helpers.md).  Policy
 * helpers: 600..619 memory (gpu_mem_ops.h), 620..629 scheduling
 * (gpu_sched_ops.h: SM share, stream priority, timeslice, interleave, delay).  The
 * standard helpers that also work on the GPU (map lookup/update/delete,
 * ring buffer output/reserve/submit/discard/query, bpf_ktime_get_ns,
 * bpf_get_prandom_u32, bpf_get_smp_processor_id = SM id, bpf_trace_printk)
 * come from <bpf/bpf_helpers.h> as usual.
 *
 * A probe runs once per warp by default, by the lowest active lane: use
 * bpf_gpu_lane_count() to account for the whole warp (a counter adds the
 * lane count, not 1).  In per-thread mode the lane count is 1.
 */
#ifndef GPUEXT_BPF_GPUEXT_HELPERS_H
#define GPUEXT_BPF_GPUEXT_HELPERS_H

#include <linux/types.h>

#include "gpuext_launch.h"

/* Threads of the warp that were active at the probe point (bit i = lane i). */
static __u64 (*bpf_gpu_active_mask)(void) = (void *)500;
/* Threads this invocation stands for: popcount of the mask, or 1 per thread. */
static __u64 (*bpf_gpu_lane_count)(void) = (void *)501;
/* Lane (0..31) of the thread running the program. */
static __u64 (*bpf_gpu_lane_id)(void) = (void *)502;
/* Warp index within the block (linear thread index / 32). */
static __u64 (*bpf_gpu_warp_id)(void) = (void *)503;
/* SM the warp runs on (%smid). */
static __u64 (*bpf_gpu_sm_id)(void) = (void *)504;
/* blockIdx / threadIdx / gridDim / blockDim: dim 0 = x, 1 = y, 2 = z. */
static __u64 (*bpf_gpu_block_idx)(__u32 dim) = (void *)505;
static __u64 (*bpf_gpu_thread_idx)(__u32 dim) = (void *)506;
static __u64 (*bpf_gpu_grid_dim)(__u32 dim) = (void *)507;
static __u64 (*bpf_gpu_block_dim)(__u32 dim) = (void *)508;
/* The GPU's global timer in ns (%globaltimer; same clock as bpf_ktime_get_ns). */
static __u64 (*bpf_gpu_globaltimer)(void) = (void *)509;
/* The SM's cycle counter (clock64). */
static __u64 (*bpf_gpu_clock)(void) = (void *)510;
/* 1 when the probe runs in per-thread mode, 0 once per warp. */
static __u64 (*bpf_gpu_per_thread)(void) = (void *)511;
/*
 * The id of the kernel launch the probe runs in: a sequence number of the
 * process, from 1, one per launch of an instrumented kernel (a graph
 * kernel node gets one when it is made or set; every replay of the graph,
 * and of a stream capture, repeats it).  0 when the kernel could not take
 * the id (its parameter space is full: the agent says so once).  The
 * agent writes each id's kernel, grid, block and stream to the ring
 * buffer GPUEXT_LAUNCHES_MAP when the object defines one (struct
 * gpuext_launch).  Entry, exit and block programs, in their main function
 * (bpf-to-bpf callees and gpu/mem programs are refused); 0 in standalone
 * runs (gpuext run-gpu).
 */
static __u64 (*bpf_gpu_launch_id)(void) = (void *)512;
/*
 * *dst = max(*dst, val) as unsigned 64-bit numbers, atomically; returns the
 * old *dst.  dst: an 8-byte aligned word of a writable map value (the
 * verifier checks it).  eBPF's atomic instructions have no maximum.  On the
 * GPU one `red.max` (fire-and-forget: nothing waits for it) where the
 * result is not used, else `atom.max`; on the host a compare-and-swap loop.
 * What it is for: a time that many warps report and only the latest counts
 * (bench/progs/blockv_krs7.bpf.c: a block's end, each warp's exit time).
 */
static __u64 (*bpf_gpu_atomic_max)(__u64 *dst, __u64 val) = (void *)513;
/*
 * The block's linear index, blockIdx.x + gridDim.x * (blockIdx.y +
 * gridDim.y * blockIdx.z) (what a block program's ctx->block holds).  In
 * the main function of an entry, exit or block program the kernel
 * computes it once per thread, past its first global loads where only
 * exit code reads it: a warp's exit then reads no special register on its
 * way out (docs/gpu-helpers.md); elsewhere from special registers.
 */
static __u64 (*bpf_gpu_block_index)(void) = (void *)514;

/* What a gpu/mem program receives in r1. */
struct gpuext_mem_ctx {
	__u64 addr; /* global address accessed (by the running lane) */
	__u32 size; /* bytes */
	__u32 kind; /* GPUEXT_MEM_LOAD, _STORE, _ATOMIC */
};

enum { GPUEXT_MEM_LOAD = 0, GPUEXT_MEM_STORE = 1, GPUEXT_MEM_ATOMIC = 2 };

/*
 * What gpu/block_entry and gpu/block_exit programs receive in r1: the
 * block's record, kept in the block's shared memory (read-only).  A block
 * program runs once per block, by one thread: block_entry by thread
 * (0,0,0) when it starts (the block's warps are all on the SM by then),
 * block_exit once every thread of the block has reached the kernel's exit
 * (docs/ptx-inject.md, "Block probes").  The warp helpers (lane count,
 * mask) describe that thread's warp, not the block: per-block quantities
 * are here.
 */
struct gpuext_block_ctx {
	__u64 start_ns;     /* %globaltimer when thread (0,0,0) entered */
	__u64 end_ns;       /* block_exit: %globaltimer at the last exit; block_entry: 0 */
	__u64 block;        /* linear block index: x + gridDim.x * (y + gridDim.y * z) */
	__u32 sm;           /* SM the block runs on (%smid) */
	__u32 threads;      /* threads of the block (blockDim.x * y * z) */
	__u32 warps;        /* warps of the block ((threads + 31) / 32) */
	__u32 reserved;     /* the exits' counter, while the block runs (counted exits) */
	__u32 exit_threads; /* block_exit: threads counted at the exits (= threads); entry: 0 */
	__u32 exit_warps;   /* block_exit: warp exits counted (= warps; with the counted
			     * exit a warp whose lanes leave apart counts once per
			     * part); entry: 0 */
};

/*
 * Host helpers (programs that run in the agent: uprobe/FUNC, uretprobe/FUNC).
 *
 * bpf_cuda_kernel_name: the mangled name of the kernel behind a CUfunction
 * or CUkernel handle (what cuLaunchKernel's first argument is), as the agent
 * saw it loaded (cuModuleGetFunction, cuLibraryGetKernel...), else as the
 * driver's cuFuncGetName / cuKernelGetName give it.  Writes a NUL-terminated
 * name into buf (truncated to size - 1 bytes); returns the name's full
 * length, or a negative errno ("" written) when the handle is unknown.
 * It may call the driver: call it once per handle and keep the name in a
 * map (tools/cudatrace.bpf.c does), not on every launch.
 */
static long (*bpf_cuda_kernel_name)(char *buf, __u32 size, __u64 handle) = (void *)640;

#endif /* GPUEXT_BPF_GPUEXT_HELPERS_H */
