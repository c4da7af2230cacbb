/* SPDX-License-Identifier: MIT */
/*
 * memtrace: global memory traffic of kernels.  Runs at every global load,
 * store and atomic, once per warp: bytes = access size x active lanes (the
 * lanes of a warp access the same width), counted per kind; and thread
 * accesses per 2 MiB region of the address space for the heat map: one
 * update per warp and memory instruction, in the region of the running
 * (lowest active) lane's address, which stands for the warp's (the common
 * case: a warp's lanes access neighbouring addresses).
 *
 * Every warp of every kernel runs this at every access, and a global atomic
 * per access cost ~1.5x of a memory-bound kernel's time each
 * (bench/results/2026-11-22-h200-memtrace.md), so the accesses are counted
 * in the block's shared memory (block-local arrays: SM-local atomics) and
 * the gpu/block_exit program adds the block's counts to the global maps,
 * once per block.  The global maps are per-SM (each SM adds to its own
 * cache lines, spread over SPREAD_SLOTS copies: spread.h; the host sums
 * them); a region's global slot is found by its address (an array index)
 * and a tag that is written once and then only read.  The traffic of a
 * whole warp is one add to a counter of its size class (memtrace.h): bytes
 * and thread accesses are multiples of it the host works out, exactly.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "memtrace.h"

/* What to count: both, unless a measuring program (bench/progs/memcost_*)
 * includes this file to time one part alone; MT_HEAT_COPIES: the global heat
 * counters' copies per SM. */
#ifndef MT_PARTS
#define MT_PARTS (MT_PART_TRAFFIC | MT_PART_HEAT)
#endif
#ifndef MT_HEAT_COPIES
#define MT_HEAT_COPIES SPREAD_SLOTS
#endif

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 3 * SPREAD_SLOTS);
	__type(key, __u32);
	__type(value, struct mt_traffic);
} traffic SEC(".maps");

/* Region slot -> region number + 1 (0: free), claimed by compare-and-swap. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MT_MAX_REGIONS);
	__type(key, __u32);
	__type(value, __u64);
} region_tag SEC(".maps");

/* Region slot (+ spread copy x MT_COUNT_STRIDE) -> thread accesses; slot
 * MT_MAX_REGIONS: untracked regions. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MT_HEAT_COPIES * MT_COUNT_STRIDE);
	__type(key, __u32);
	__type(value, __u64);
} region_accesses SEC(".maps");

/* The block's traffic per kind, and its region cache (memtrace.h). */
struct {
	__uint(type, BPF_MAP_TYPE_GPU_BLOCK_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, struct mt_block_traffic);
} block_traffic SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_GPU_BLOCK_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mt_block_regions);
} block_regions SEC(".maps");

/* The global slot of region (claiming a free one), or MT_MAX_REGIONS. */
static __always_inline __u32 mt_slot(__u64 region)
{
	__u64 tag = region + 1;
	__u32 slot = region & (MT_MAX_REGIONS - 1);

#pragma unroll
	for (int i = 0; i < MT_PROBES; i++) {
		__u64 *t = bpf_map_lookup_elem(&region_tag, &slot);
		if (!t)
			break;
		__u64 cur = *t; /* a tag never changes once set: a cached copy is
				 * either it or a stale 0, which the CAS corrects */
		if (cur == 0)
			cur = __sync_val_compare_and_swap(t, 0, tag) ?: tag;
		if (cur == tag)
			return slot;
		slot = (slot + 1) & (MT_MAX_REGIONS - 1);
	}
	return MT_MAX_REGIONS;
}

/* Add n thread accesses to global slot gslot's counter (copy hc of this
 * SM's). */
static __always_inline void mt_heat_add_slot(__u32 gslot, __u32 hc, __u64 n)
{
	__u32 key = (hc & (MT_HEAT_COPIES - 1)) * MT_COUNT_STRIDE + gslot;
	__u64 *c = bpf_map_lookup_elem(&region_accesses, &key);
	if (c)
		__sync_fetch_and_add(c, n);
}

/* The class of an access of size bytes (memtrace.h), -1 for other sizes. */
static __always_inline int mt_size_class(__u32 size)
{
	switch (size) {
	case 1: return 0;
	case 2: return 1;
	case 4: return 2;
	case 8: return 3;
	case 16: return 4;
	case 32: return 5;
	default: return -1;
	}
}

/* One warp instruction of lanes accessing size bytes each, of kind. */
static __always_inline void mt_count(__u32 kind, __u32 size, __u64 lanes)
{
	int c = mt_size_class(size);

	if (c < 0) { /* rare: straight to the global counters */
		__u32 key = kind * SPREAD_SLOTS + (bpf_gpu_warp_id() & (SPREAD_SLOTS - 1));
		struct mt_traffic *t = bpf_map_lookup_elem(&traffic, &key);
		if (!t)
			return;
		__sync_fetch_and_add(&t->other_bytes, (__u64)size * lanes);
		__sync_fetch_and_add(&t->other_lanes, lanes);
		__sync_fetch_and_add(&t->other_instrs, 1);
		return;
	}
	struct mt_block_traffic *b = bpf_map_lookup_elem(&block_traffic, &kind);
	if (!b)
		return;
	if (lanes == 32) {
		__sync_fetch_and_add(&b->full[c], 1);
	} else {
		__sync_fetch_and_add(&b->part_lanes[c], (__u32)lanes);
		__sync_fetch_and_add(&b->part_instrs, 1);
	}
}

/* lanes thread accesses to region: into the block's cache, or (no slot
 * left for it there) the global heat map. */
static __always_inline void mt_heat(__u64 region, __u64 lanes)
{
	__u32 zero = 0;
	__u64 tag = region + 1;
	struct mt_block_regions *r = bpf_map_lookup_elem(&block_regions, &zero);

	if (!r)
		return;
	__u32 claimed = MT_BLOCK_SLOTS;

#pragma unroll
	for (int i = 0; i < MT_BLOCK_PROBES; i++) {
		__u32 s = (region + i) & (MT_BLOCK_SLOTS - 1);
		__u64 cur = r->tag[s];
		if (cur == 0 && !(cur = __sync_val_compare_and_swap(&r->tag[s], 0, tag))) {
			claimed = s;
			break;
		}
		if (cur == tag) {
			__sync_fetch_and_add(&r->slot[s].accesses, (__u32)lanes);
			return;
		}
	}
	/* the first access of the region in this block (it claimed a slot) or
	 * one that found none: its global slot */
	__u32 g = mt_slot(region);
	if (claimed < MT_BLOCK_SLOTS) {
		r->slot[claimed].gslot = g + 1;
		__sync_fetch_and_add(&r->slot[claimed].accesses, (__u32)lanes);
		return;
	}
	mt_heat_add_slot(g, bpf_gpu_warp_id() ^ (bpf_gpu_block_idx(0) << 3), lanes);
}

SEC("gpu/mem/*")
int mt_access(struct gpuext_mem_ctx *ctx)
{
	__u64 lanes = bpf_gpu_lane_count();

	if (MT_PARTS & MT_PART_TRAFFIC)
		mt_count(ctx->kind, ctx->size, lanes);
	if (MT_PARTS & MT_PART_HEAT)
		mt_heat(ctx->addr >> MT_REGION_SHIFT, lanes);
	return 0;
}

/* Add the two 32-bit counts of w (low, high) to a[0], a[1]. */
static __always_inline void mt_add_pair(__u64 *a, __u64 w)
{
	if ((__u32)w)
		__sync_fetch_and_add(&a[0], (__u64)(__u32)w);
	if (w >> 32)
		__sync_fetch_and_add(&a[1], w >> 32);
}

/* The block's traffic of kind into the global counters (copy of this SM's
 * chosen by the block index): its counters read two at a time, and only
 * what is not 0 added (a block uses few size classes). */
static __always_inline void mt_flush_traffic(__u32 kind, __u32 copy)
{
	__u32 key = kind * SPREAD_SLOTS + copy;
	struct mt_block_traffic *b = bpf_map_lookup_elem(&block_traffic, &kind);
	struct mt_traffic *t = bpf_map_lookup_elem(&traffic, &key);

	if (!b || !t)
		return;
	const __u64 *w = (const __u64 *)b;
#pragma unroll
	for (int i = 0; i < MT_SIZE_CLASSES / 2; i++) {
		if (w[i])
			mt_add_pair(&t->full[2 * i], w[i]);
		if (w[MT_SIZE_CLASSES / 2 + i])
			mt_add_pair(&t->part_lanes[2 * i], w[MT_SIZE_CLASSES / 2 + i]);
	}
	if (b->part_instrs)
		__sync_fetch_and_add(&t->part_instrs, (__u64)b->part_instrs);
}

SEC("gpu/block_exit/*")
int mt_block_flush(struct gpuext_block_ctx *ctx)
{
	__u32 copy = ctx->block & (SPREAD_SLOTS - 1), zero = 0;

	if (MT_PARTS & MT_PART_TRAFFIC) {
		mt_flush_traffic(GPUEXT_MEM_LOAD, copy);
		mt_flush_traffic(GPUEXT_MEM_STORE, copy);
		mt_flush_traffic(GPUEXT_MEM_ATOMIC, copy);
	}
	if (MT_PARTS & MT_PART_HEAT) {
		struct mt_block_regions *r = bpf_map_lookup_elem(&block_regions, &zero);
		if (!r)
			return 0;
		/* each slot's {gslot, accesses} in one load, independent of the
		 * others; a slot whose claimer never stored its global slot (it
		 * left by a trap) is counted as untracked */
#pragma unroll
		for (int s = 0; s < MT_BLOCK_SLOTS; s++) {
			__u64 w = *(const __u64 *)&r->slot[s];
			if (w >> 32)
				mt_heat_add_slot((__u32)w ? (__u32)w - 1 : MT_MAX_REGIONS, ctx->block,
						 w >> 32);
		}
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
