/* SPDX-License-Identifier: MIT */
/*
 * blockv_krs7: session 7's kernelretsnoop without the exit barrier
 * (bench/results/2026-11-22-h200-block-probes-s7.md), the candidate that
 * tools/kernelretsnoop.bpf.c now is (session 8: with the emitter of then,
 * 1.064-1.067x on vecadd against 1.080-1.081x for the one block_exit
 * program; session 7 had measured it no cheaper, 1.088-1.089x against
 * 1.077-1.105x); kept as the measuring copy whose parts
 * blockv_krs7_*.bpf.c build apart.  For every block index of
 * every kernel, when its last run started and when its last warp exited,
 * on which SM, and which launch that was.  Two programs share `blocks` (a
 * record at the block's linear index modulo KRS7_MAX_BLOCKS):
 *
 * - a block_entry program (once per block, thread (0,0,0)) stores the start
 *   time, the launch id and the block's linear index and SM: three 8-byte
 *   stores.  The injector runs it once thread (0,0,0)'s first global loads
 *   are issued (docs/ptx-inject.md, "Block probes"), where its writes wait
 *   with those loads, off the block's path; it reads %globaltimer there
 *   itself (bpf_gpu_globaltimer(), not ctx->start_ns, which the injector
 *   would read at the kernel's entry, in front of the loads).
 * - an exit program (once per warp, at its exit) takes the maximum of the
 *   block's end word and its own exit time with one fire-and-forget
 *   `red.max` (bpf_gpu_atomic_max, its result unused): the block's end is
 *   its last warp's exit, with no exit barrier.  Its slot is the block
 *   index masked (bpf_gpu_block_index(), which the kernel computes once
 *   per thread past its first loads: reading %ctaid.y/z on every warp's
 *   tail cost vecadd 4% by hand, a 64-bit modulo there 9%).
 *
 * Why a maximum is sound across launches: a slot's end word keeps the end
 * of the last block of that index to run, and a block that runs later
 * (a later launch of a kernel, in stream order) exits later on the GPU's
 * one %globaltimer, so the maximum is this block's end as soon as one of
 * its warps has exited.  It is not where two launches run at once on
 * different streams and a slot's blocks overlap in time, nor within a
 * launch of more than KRS7_MAX_BLOCKS blocks: the end word then holds the
 * latest exit of the blocks sharing the slot, the other words the last
 * one to start.
 *
 * A host would join each record with the launch table (gpuext_launches:
 * kernel, grid and block per launch id) for the block's (x, y, z), threads
 * and warps; `gpuext run` prints the map at the end.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "blockv_krs7.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KRS7_MAX_BLOCKS);
	__type(key, __u32);
	__type(value, struct krs7_block);
} blocks SEC(".maps");

/* The agent's row per launch (kernel, grid, block). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} gpuext_launches SEC(".maps");

/* blockv_krs7_*.bpf.c build this file with one program left out, the
 * start time read at the kernel's entry, or the block index computed on
 * the warp's tail, to measure each part. */
#ifndef KRS_START_NS
#define KRS_START_NS(ctx) bpf_gpu_globaltimer()
#endif
/* the linear block index, x + gridDim.x * (y + gridDim.y * z) */
#ifndef KRS_WARP_BLOCK
#define KRS_WARP_BLOCK() bpf_gpu_block_index()
#endif

#ifndef KRS_NO_BLOCK_ENTRY
SEC("gpu/block_entry/*")
int krs_block_start(struct gpuext_block_ctx *ctx)
{
	__u64 now = KRS_START_NS(ctx);
	__u32 slot = ctx->block & (KRS7_MAX_BLOCKS - 1);
	struct krs7_block *b = bpf_map_lookup_elem(&blocks, &slot);
	if (!b)
		return 0;
	b->start_ns = now;
	b->launch = bpf_gpu_launch_id();
	b->block_sm = (__u32)ctx->block | bpf_gpu_sm_id() << 32;
	return 0;
}
#endif

#ifndef KRS_NO_WARP_EXIT
SEC("gpu/exit/*")
int krs_warp_end(void *ctx)
{
	__u32 slot = KRS_WARP_BLOCK() & (KRS7_MAX_BLOCKS - 1);
	struct krs7_block *b = bpf_map_lookup_elem(&blocks, &slot);
	if (b)
		bpf_gpu_atomic_max(&b->end_ns, bpf_gpu_globaltimer());
	return 0;
}
#endif

#ifdef KRS_BLOCK_EXIT_END
/* the barrier form's end: once per block after its exit barrier, the end
 * time the injector read there (blockv_krs7_barrier.bpf.c) */
SEC("gpu/block_exit/*")
int krs_block_end(struct gpuext_block_ctx *ctx)
{
	__u32 slot = ctx->block & (KRS7_MAX_BLOCKS - 1);
	struct krs7_block *b = bpf_map_lookup_elem(&blocks, &slot);
	if (b)
		b->end_ns = ctx->end_ns;
	return 0;
}
#endif

char LICENSE[] SEC("license") = "GPL";
