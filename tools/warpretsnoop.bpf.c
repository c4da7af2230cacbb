/* SPDX-License-Identifier: MIT */
/*
 * warpretsnoop: for every warp of every kernel, when it started and when it
 * exited.  The entry probe stores %globaltimer in the warp's slot of an array
 * (indexed by its global warp id: a plain store, no hash insert); the first
 * exit probe of the warp takes it with an exchange (so a warp whose lanes
 * leave by several exits gives one record) and sends one record (block,
 * warp, SM, start, end, launch id) to the ring buffer; the agent's launch
 * table names each launch's kernel and grid.  The CLI prints one line per
 * record.
 *
 * kernelretsnoop's per-warp mode.  It costs a global exchange and a ring
 * buffer record per warp, which pinned host memory must take as fast as
 * warps end: on grids of many short warps (vecadd -n 16M: 524,288 warps in
 * 65 us, 25 MB of records a launch) most records are dropped and a launch
 * takes ~370 ms instead of 65 us (bench/results/2026-11-22-h200-device-tools.md).
 * kernelretsnoop (per block, aggregated on the device) is the cheap default.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "warpretsnoop.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WRS_MAX_WARPS);
	__type(key, __u32);
	__type(value, __u64);
} starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

/* The agent's row per launch (kernel, grid, block), joined by id in the CLI. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} gpuext_launches SEC(".maps");

/* The warp's slot in `starts`: its global warp id modulo WRS_MAX_WARPS. */
static __always_inline __u32 wrs_slot(void)
{
	__u64 block = bpf_gpu_block_idx(0) +
		      bpf_gpu_grid_dim(0) * (bpf_gpu_block_idx(1) +
					     bpf_gpu_grid_dim(1) * bpf_gpu_block_idx(2));
	__u64 warps = (bpf_gpu_block_dim(0) * bpf_gpu_block_dim(1) * bpf_gpu_block_dim(2) + 31) / 32;

	return (block * warps + bpf_gpu_warp_id()) & (WRS_MAX_WARPS - 1);
}

SEC("gpu/entry/*")
int wrs_entry(void *ctx)
{
	__u64 now = bpf_gpu_globaltimer();
	__u32 slot = wrs_slot();

	__u64 *start = bpf_map_lookup_elem(&starts, &slot);
	if (start)
		*start = now;
	return 0;
}

SEC("gpu/exit/*")
int wrs_exit(void *ctx)
{
	__u64 now = bpf_gpu_globaltimer();
	__u32 slot = wrs_slot();

	__u64 *start = bpf_map_lookup_elem(&starts, &slot);
	if (!start)
		return 0;
	__u64 t0 = __sync_lock_test_and_set(start, 0);
	if (!t0)
		return 0; /* another exit of this warp sent the record */
	struct wrs_event *ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev)
		return 0;
	ev->start_ns = t0;
	ev->end_ns = now;
	ev->block[0] = bpf_gpu_block_idx(0);
	ev->block[1] = bpf_gpu_block_idx(1);
	ev->block[2] = bpf_gpu_block_idx(2);
	ev->warp = bpf_gpu_warp_id();
	ev->sm = bpf_gpu_sm_id();
	ev->lanes = bpf_gpu_lane_count();
	ev->launch = bpf_gpu_launch_id();
	bpf_ringbuf_submit(ev, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
