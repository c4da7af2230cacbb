/* SPDX-License-Identifier: MIT */
/*
 * memcost_merged.bpf.c - memtrace's counts in one map, to measure what two
 * reductions per warp access cost against memtrace's three (timing only:
 * the CLI has no summary of this layout): a region slot (memtrace.h's
 * r % MT_MAX_REGIONS, one copy per SM) holds the bits that name its region
 * and the lanes per kind and size class, so a whole-warp access of a
 * power-of-two size is one add (lanes) and one or (bits); bytes, thread
 * accesses and regions' accesses are sums of those; a partial warp or
 * another size also counts its warp instruction apart (rare), so that
 * warp instructions = (lanes of whole warps) / 32 + those.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "../../tools/memtrace.h"

struct mt_merged_slot {
	__u64 bits;
	__u64 lanes[4 * MT_SIZE_CLASSES]; /* kind & 3, size class */
	__u64 other_bytes, other_lanes;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MT_COUNT_STRIDE);
	__type(key, __u32);
	__type(value, struct mt_merged_slot);
} region_counts SEC(".maps");

/* Kind & 3 -> warp instructions of partial warps or other sizes. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} odd_instrs SEC(".maps");

SEC("gpu/mem/*")
int mt_merged(struct gpuext_mem_ctx *ctx)
{
	__u64 lanes = bpf_gpu_lane_count();
	__u64 tag = (ctx->addr >> MT_REGION_SHIFT) + 1;
	__u32 slot = (tag >> 32) ? MT_MAX_REGIONS : (tag - 1) & (MT_MAX_REGIONS - 1);
	__u32 kind = ctx->kind & 3, size = ctx->size;
	int c = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : size == 8 ? 3 : size == 16 ? 4
		: size == 32 ? 5 : -1;
	struct mt_merged_slot *h = bpf_map_lookup_elem(&region_counts, &slot);

	if (!h)
		return 0;
	if (c >= 0) {
		__sync_fetch_and_add(&h->lanes[kind * MT_SIZE_CLASSES + c], lanes);
	} else {
		__sync_fetch_and_add(&h->other_bytes, (__u64)size * lanes);
		__sync_fetch_and_add(&h->other_lanes, lanes);
	}
	__u32 t = tag;
	__sync_fetch_and_or(&h->bits, (__u64)(__u32)~t << 32 | t);
	if (lanes != 32 || c < 0) {
		__u64 *n = bpf_map_lookup_elem(&odd_instrs, &kind);
		if (n)
			__sync_fetch_and_add(n, 1);
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
