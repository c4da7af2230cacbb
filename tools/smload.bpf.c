/* SPDX-License-Identifier: MIT */
/*
 * smload: the work every SM did: warps, threads and thread-time (the sum
 * over its threads of exit - entry time).  The CLI shows the imbalance
 * (max / mean over the SMs that ran something) and a bar per SM.
 *
 * Entry and exit each add to the SM's own counters (fire-and-forget
 * reductions on a line no other SM touches): the time is summed at both
 * ends instead of kept per warp (smload.h), which replaced a hash of start
 * times whose insert at entry and delete at exit cost thousands of cycles a
 * warp, and whose deleted slots, which stay bound to their key, filled the
 * table on grids of more warps than slots.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "smload.h"

/* Plain array keyed by SM id (see threadhist.bpf.c for why not per-SM). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SL_MAX_SM * SPREAD_SLOTS);
	__type(key, __u32);
	__type(value, struct sl_load);
} per_sm SEC(".maps");

/* The warp's copy of its SM's counters (spread.h). */
static __always_inline __u32 sl_key(void)
{
	return bpf_gpu_sm_id() * SPREAD_SLOTS + (bpf_gpu_warp_id() & (SPREAD_SLOTS - 1));
}

SEC("gpu/entry/*")
int sl_entry(void *ctx)
{
	__u64 lanes = bpf_gpu_lane_count();
	__u32 sm = sl_key();

	struct sl_load *l = bpf_map_lookup_elem(&per_sm, &sm);
	if (!l)
		return 0;
	__sync_fetch_and_add(&l->warps, 1);
	__sync_fetch_and_add(&l->threads, lanes);
	__sync_fetch_and_add(&l->entry_lane_ns, lanes * bpf_gpu_globaltimer());
	return 0;
}

/* Once per exit a warp's lanes take: each thread is counted once. */
SEC("gpu/exit/*")
int sl_exit(void *ctx)
{
	__u64 lanes = bpf_gpu_lane_count();
	__u32 sm = sl_key();

	struct sl_load *l = bpf_map_lookup_elem(&per_sm, &sm);
	if (!l)
		return 0;
	__sync_fetch_and_add(&l->exit_threads, lanes);
	__sync_fetch_and_add(&l->exit_lane_ns, lanes * bpf_gpu_globaltimer());
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
