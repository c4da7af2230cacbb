/* SPDX-License-Identifier: MIT */
/*
 * smload: the work every SM did: warps, threads and warp-time (sum over the
 * warps that ran on it of exit - entry).  The CLI shows the imbalance
 * (max / mean over the SMs that ran something) and a bar per SM.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "smload.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct sl_key);
	__type(value, __u64);
} starts SEC(".maps");

/* Plain array keyed by SM id (see threadhist.bpf.c for why not per-SM). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SL_MAX_SM);
	__type(key, __u32);
	__type(value, struct sl_load);
} per_sm SEC(".maps");

static __always_inline void sl_where(struct sl_key *k)
{
	k->block[0] = bpf_gpu_block_idx(0);
	k->block[1] = bpf_gpu_block_idx(1);
	k->block[2] = bpf_gpu_block_idx(2);
	k->warp = bpf_gpu_warp_id();
}

SEC("gpu/entry/*")
int sl_entry(void *ctx)
{
	struct sl_key k;
	__u64 now = bpf_gpu_globaltimer();

	sl_where(&k);
	bpf_map_update_elem(&starts, &k, &now, BPF_ANY);
	return 0;
}

SEC("gpu/exit/*")
int sl_exit(void *ctx)
{
	struct sl_key k;
	__u64 now = bpf_gpu_globaltimer();
	__u32 sm = bpf_gpu_sm_id();

	sl_where(&k);
	struct sl_load *l = bpf_map_lookup_elem(&per_sm, &sm);
	if (!l)
		return 0;
	__sync_fetch_and_add(&l->threads, bpf_gpu_lane_count());
	/* A warp whose lanes leave by different exits runs this more than once:
	 * the first call, which finds the start, counts the warp and its time. */
	__u64 *start = bpf_map_lookup_elem(&starts, &k);
	if (!start)
		return 0;
	__sync_fetch_and_add(&l->warps, 1);
	if (now > *start)
		__sync_fetch_and_add(&l->busy_ns, now - *start);
	bpf_map_delete_elem(&starts, &k);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
