/* SPDX-License-Identifier: MIT */
/*
 * blockretsnoop: kernelretsnoop per block.  For every block of every kernel,
 * when it started (warp 0's entry) and when its last thread exited: one
 * record per block instead of one per warp (8 times fewer for blocks of 256
 * threads), for grids whose warps end faster than a record per warp can
 * reach the host.  Warp 0's entry probe stores %globaltimer in the block's
 * slot; every exit adds its lanes to the block's exited threads (a fetch and
 * add, so each warp learns the total so far); the exit that completes the
 * block sends the record and clears the slot for the next launch.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "blockretsnoop.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BRS_MAX_BLOCKS);
	__type(key, __u32);
	__type(value, struct brs_slot);
} blocks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

/* The block's slot in `blocks`: its linear index modulo BRS_MAX_BLOCKS. */
static __always_inline __u32 brs_slot(void)
{
	__u64 block = bpf_gpu_block_idx(0) +
		      bpf_gpu_grid_dim(0) * (bpf_gpu_block_idx(1) +
					     bpf_gpu_grid_dim(1) * bpf_gpu_block_idx(2));

	return block & (BRS_MAX_BLOCKS - 1);
}

SEC("gpu/entry/*")
int brs_entry(void *ctx)
{
	if (bpf_gpu_warp_id())
		return 0;
	__u64 now = bpf_gpu_globaltimer();
	__u32 slot = brs_slot();
	struct brs_slot *b = bpf_map_lookup_elem(&blocks, &slot);
	if (b)
		b->start_ns = now;
	return 0;
}

SEC("gpu/exit/*")
int brs_exit(void *ctx)
{
	__u64 now = bpf_gpu_globaltimer();
	__u64 lanes = bpf_gpu_lane_count();
	__u64 threads = bpf_gpu_block_dim(0) * bpf_gpu_block_dim(1) * bpf_gpu_block_dim(2);
	__u32 slot = brs_slot();

	struct brs_slot *b = bpf_map_lookup_elem(&blocks, &slot);
	if (!b)
		return 0;
	if (__sync_fetch_and_add(&b->exited, lanes) + lanes != threads)
		return 0; /* threads of the block still running */
	/* the block's last exit: the slot is this probe's alone now */
	__u64 start = b->start_ns;
	b->start_ns = 0;
	b->exited = 0;
	if (!start)
		return 0; /* warp 0's entry not seen */
	struct brs_event *ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev)
		return 0;
	ev->start_ns = start;
	ev->end_ns = now;
	ev->block[0] = bpf_gpu_block_idx(0);
	ev->block[1] = bpf_gpu_block_idx(1);
	ev->block[2] = bpf_gpu_block_idx(2);
	ev->sm = bpf_gpu_sm_id();
	ev->threads = threads;
	ev->pad = 0;
	bpf_ringbuf_submit(ev, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
