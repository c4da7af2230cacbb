/* SPDX-License-Identifier: MIT */
/*
 * kernelretsnoop: for every block index of every kernel, when its last run
 * started and when its last warp exited, on which SM, and which launch that
 * was.  Two programs share `blocks` (a 32-byte record at the block's linear
 * index modulo KRS_MAX_BLOCKS, tools/kernelretsnoop.h):
 *
 * - a block_entry program (once per block, thread (0,0,0)) stores the start
 *   time, the launch id (bpf_gpu_launch_id()) and the block's linear index
 *   and SM: three 8-byte stores.  The injector runs it once thread
 *   (0,0,0)'s first global loads are issued (docs/ptx-inject.md, "Block
 *   probes"), where its writes wait with those loads, off the block's path;
 *   it reads %globaltimer there itself (bpf_gpu_globaltimer(), not
 *   ctx->start_ns, which the injector would read at the kernel's entry, in
 *   front of the loads).  So the start is when thread (0,0,0) has issued
 *   its first global loads, not the kernel's entry: a thread (0,0,0) that
 *   skips those loads runs it on its way past them, and where the injector
 *   cannot sink it (the loads in a loop, an `exit` in a function) it runs
 *   at the kernel's entry.
 * - an exit program (once per warp, at its exit) takes the maximum of the
 *   block's end word and its own exit time with one fire-and-forget
 *   `red.max` (bpf_gpu_atomic_max, its result unused): the block's end is
 *   its last warp's exit, with no exit barrier, so no warp waits for the
 *   others.  Its slot is the block index masked (bpf_gpu_block_index(),
 *   which the kernel computes once per thread past its first loads).
 *
 * Why a maximum is sound across launches: a slot's end word keeps the end
 * of the last block of that index to run, and a block that runs later (a
 * later launch of a kernel, in stream order) exits later on the GPU's one
 * %globaltimer, so the maximum is this block's end as soon as one of its
 * warps has exited.  It is not where two launches run at once on different
 * streams and a slot's blocks overlap in time, nor within a launch of more
 * than KRS_MAX_BLOCKS blocks: the end word then holds the latest exit of
 * the blocks sharing the slot, the other words the last one to start.  A
 * map read while a launch runs may pair a block's start with the previous
 * block's end (the CLI counts an end before its start as 0 ns).
 *
 * Why so little on the device: on grids of many short blocks (vecadd -n
 * 16M: 65,536 blocks in 64 us) every instruction on a block's path is the
 * kernel's time.  One block_exit program storing a 48-byte record after
 * the exit barrier cost vecadd 1.080x, this form 1.064-1.067x
 * (bench/results/2026-11-22-h200-kernelretsnoop-s8.md;
 * bench/progs/blockv_krs7.bpf.c is the measuring copy).  The CLI joins each
 * record with the agent's launch table (gpuext_launches: kernel, grid and
 * block per launch id) for the block's (x, y, z), threads and warps, groups
 * the records by launch and makes the duration histograms.  Per launch
 * records of every block through pinned host memory: blockretsnoop; per
 * warp: warpretsnoop (a record per warp, much dearer).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "kernelretsnoop.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KRS_MAX_BLOCKS);
	__type(key, __u32);
	__type(value, struct krs_block);
} blocks SEC(".maps");

/* The agent's row per launch (kernel, grid, block), joined by id in the CLI. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} gpuext_launches SEC(".maps");

SEC("gpu/block_entry/*")
int krs_block_start(struct gpuext_block_ctx *ctx)
{
	__u64 now = bpf_gpu_globaltimer();
	__u32 slot = ctx->block & (KRS_MAX_BLOCKS - 1);
	struct krs_block *b = bpf_map_lookup_elem(&blocks, &slot);
	if (!b)
		return 0;
	b->start_ns = now;
	b->launch = bpf_gpu_launch_id();
	b->block_sm = (__u32)ctx->block | bpf_gpu_sm_id() << 32;
	return 0;
}

SEC("gpu/exit/*")
int krs_warp_end(void *ctx)
{
	__u32 slot = bpf_gpu_block_index() & (KRS_MAX_BLOCKS - 1);
	struct krs_block *b = bpf_map_lookup_elem(&blocks, &slot);
	if (b)
		bpf_gpu_atomic_max(&b->end_ns, bpf_gpu_globaltimer());
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
