/* SPDX-License-Identifier: MIT */
/*
 * memcost_heat_or.bpf.c - a heat map without a load on the path, to compare
 * with memtrace's (bench/memtrace_cost.sh): region r is counted in slot
 * r % MT_MAX_REGIONS with no probing, and the slot's region is recorded by
 * two fire-and-forget ORs, of r + 1 and of ~(r + 1), in one of
 * SPREAD_SLOTS copies chosen by the SM (a plain array: the host ORs the
 * copies; a per-SM map's host view adds SMs): the host sees one region in a
 * slot when the first is the complement of the second, a collision
 * otherwise.  Three reductions, no load, versus memtrace's tag load (and
 * compare) and one reduction.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "../../tools/memtrace.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SPREAD_SLOTS * MT_COUNT_STRIDE);
	__type(key, __u32);
	__type(value, __u64);
} region_accesses SEC(".maps");

struct region_bits {
	__u64 ones, zeros; /* OR of r + 1, OR of ~(r + 1) */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SPREAD_SLOTS * MT_MAX_REGIONS);
	__type(key, __u32);
	__type(value, struct region_bits);
} region_or SEC(".maps");

SEC("gpu/mem/*")
int mt_heat_or(struct gpuext_mem_ctx *ctx)
{
	__u64 lanes = bpf_gpu_lane_count(), region = ctx->addr >> MT_REGION_SHIFT;
	__u32 slot = region & (MT_MAX_REGIONS - 1);
	__u32 key = (bpf_gpu_warp_id() & (SPREAD_SLOTS - 1)) * MT_COUNT_STRIDE + slot;

	__u64 *n = bpf_map_lookup_elem(&region_accesses, &key);
	if (n)
		__sync_fetch_and_add(n, lanes);
	key = (bpf_gpu_sm_id() & (SPREAD_SLOTS - 1)) * MT_MAX_REGIONS + slot;
	struct region_bits *t = bpf_map_lookup_elem(&region_or, &key);
	if (t) {
		__sync_fetch_and_or(&t->ones, region + 1);
		__sync_fetch_and_or(&t->zeros, ~(region + 1));
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
