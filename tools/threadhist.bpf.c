/* SPDX-License-Identifier: MIT */
/*
 * threadhist: threads and warps that entered kernels, per block, per SM and
 * in total.  The entry probe runs once per warp: it adds the warp's lane
 * count to the thread counters and 1 to the warp counters.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "threadhist.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TH_MAX_BLOCKS);
	__type(key, __u32);
	__type(value, struct th_count);
} per_block SEC(".maps");

/* A plain array keyed by SM id, not a per-CPU one: the session mirrors
 * per-SM arrays into per-CPU host maps, which have fewer slots than a GPU
 * has SMs (docs/session.md). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TH_MAX_SM);
	__type(key, __u32);
	__type(value, struct th_count);
} per_sm SEC(".maps");

static __always_inline void th_add(struct th_count *c, __u64 lanes)
{
	__sync_fetch_and_add(&c->threads, lanes);
	__sync_fetch_and_add(&c->warps, 1);
}

SEC("gpu/entry/*")
int th_entry(void *ctx)
{
	__u64 lanes = bpf_gpu_lane_count();
	__u32 block = bpf_gpu_block_idx(0) +
		      bpf_gpu_grid_dim(0) * (bpf_gpu_block_idx(1) +
					     bpf_gpu_grid_dim(1) * bpf_gpu_block_idx(2));
	__u32 sm = bpf_gpu_sm_id();
	struct th_count *c, init = {0, 0};

	/* No grand total here: one word that every warp of the grid adds to
	 * serialises them all (14x on a short kernel); the summary adds the
	 * per-SM counts instead. */
	c = bpf_map_lookup_elem(&per_sm, &sm);
	if (c)
		th_add(c, lanes);
	c = bpf_map_lookup_elem(&per_block, &block);
	if (!c) {
		/* first warp of the block (or a racing one: NOEXIST keeps the winner) */
		bpf_map_update_elem(&per_block, &block, &init, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&per_block, &block);
	}
	if (c)
		th_add(c, lanes);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
