/* SPDX-License-Identifier: MIT */
/*
 * memtrace_block: memtrace (tools/memtrace.bpf.c: the same output) with the
 * counts gathered per block.  Global memory traffic of kernels.  Runs at every global load,
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
 * once per block, with reductions only (the device never waits for a
 * global map: the end of a block is on the path of the next one).  The
 * global maps are per-SM (each SM adds to its own cache lines, the traffic
 * spread over SPREAD_SLOTS copies: spread.h; the host sums them); a
 * region's global slot is its number modulo MTB_MAX_REGIONS, with bits the
 * host reads the region from (memtrace.h).  The traffic of a
 * whole warp is one add to a counter of its size class (memtrace.h): bytes
 * and thread accesses are multiples of it the host works out, exactly.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "memtrace.h"

/* What to count: both, unless a measuring program
 * (bench/progs/memcost_block_*) includes this file to time one part alone. */
#ifndef MT_PARTS
#define MT_PARTS (MT_PART_TRAFFIC | MT_PART_HEAT)
#endif

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 3 * SPREAD_SLOTS);
	__type(key, __u32);
	__type(value, struct mt_traffic);
} traffic SEC(".maps");

/* Region slot (r % MTB_MAX_REGIONS) -> thread accesses, per SM. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MTB_MAX_REGIONS);
	__type(key, __u32);
	__type(value, __u64);
} region_accesses SEC(".maps");

/* Region slot -> the regions counted there, as bits (memtrace.h), per SM. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MTB_MAX_REGIONS);
	__type(key, __u32);
	__type(value, struct mt_region_bits);
} region_bits SEC(".maps");

/* The block's counts (memtrace.h): one value, found by one lookup. */
struct {
	__uint(type, BPF_MAP_TYPE_GPU_BLOCK_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mt_block);
} block SEC(".maps");

/* n thread accesses to region in the global heat map: reductions only. */
static __always_inline void mt_heat_global(__u64 region, __u64 n)
{
	__u32 slot = region & (MTB_MAX_REGIONS - 1);
	__u64 *c = bpf_map_lookup_elem(&region_accesses, &slot);
	struct mt_region_bits *b = bpf_map_lookup_elem(&region_bits, &slot);

	if (!c || !b)
		return;
	__sync_fetch_and_add(c, n);
	__sync_fetch_and_or(&b->ones, region + 1);
	__sync_fetch_and_or(&b->zeros, ~(region + 1));
}

/*
 * Access sizes with a class (memtrace.h): bit size of MT_CLASS_SIZES; the
 * class, log2 of the size, is the 3-bit field of MT_CLASS_TABLE at bit
 * 3 x size mod 64 (3, 6, 12, 24, 48, 32).  Tables rather than a switch:
 * the program's text is pasted at every access (ptxas folds either, the
 * size being a constant there), and its length decides whether it is
 * pasted at all (docs/ptx-inject.md).
 */
#define MT_CLASS_SIZES (1ull << 1 | 1ull << 2 | 1ull << 4 | 1ull << 8 | 1ull << 16 | 1ull << 32)
#define MT_CLASS_TABLE (1ull << 6 | 2ull << 12 | 3ull << 24 | 4ull << 48 | 5ull << 32)

/* What the fast path of an access left to mt_slow. */
#define MT_SLOW_TRAFFIC 1 /* an access size outside the classes */
#define MT_SLOW_HEAT 2    /* the region not in its first slot of the cache */

/* Region r's first slot in the block's cache (memtrace.h). */
static __always_inline __u32 mt_block_slot(__u64 region)
{
	return (region ^ region >> MT_BLOCK_SLOT_BITS) & (MT_BLOCK_SLOTS - 1);
}

/*
 * lanes thread accesses to region whose tag was not in its first slot:
 * claim a slot for it in the block's cache r, or find it in one of the
 * others, or (no slot left for it there) count it in the global heat map.
 * Once per block and region in the common case.
 */
static __always_inline void mt_heat_claim(struct mt_block_regions *r, __u64 region, __u64 lanes)
{
	__u32 s0 = mt_block_slot(region);
	__u64 tag = region + 1;

#pragma unroll
	for (int i = 0; i < MT_BLOCK_PROBES; i++) {
		__u32 s = (s0 + i) & (MT_BLOCK_SLOTS - 1);
		__u64 cur = r->slot[s].tag;
		if (cur == 0 && !(cur = __sync_val_compare_and_swap(&r->slot[s].tag, 0, tag))) {
			__sync_fetch_and_or(&r->claimed, 1ull << s);
			cur = tag;
		}
		if (cur == tag) {
			__sync_fetch_and_add(&r->slot[s].accesses, (__u32)lanes);
			return;
		}
	}
	mt_heat_global(region, lanes);
}

/*
 * What the fast path left (what: MT_SLOW_*): an access size outside the
 * classes, straight to the global counters (rare); a region to claim a
 * slot for.  Out of line (a function of its own, called from one place):
 * the program's body is pasted at every access of a kernel, and the pasted
 * text decides whether it is pasted at all (docs/ptx-inject.md: past
 * 16 KiB more than the called form, a kernel runs its probes called until
 * the pasted form has compiled).
 */
static __noinline int mt_slow(__u32 what, __u32 kind, __u32 size, __u64 region, __u64 lanes)
{
	__u32 zero = 0;
	struct mt_block *b = bpf_map_lookup_elem(&block, &zero);

	if ((MT_PARTS & MT_PART_TRAFFIC) && (what & MT_SLOW_TRAFFIC)) {
		__u32 key = (kind & 3) * SPREAD_SLOTS + (bpf_gpu_warp_id() & (SPREAD_SLOTS - 1));
		struct mt_traffic *t = bpf_map_lookup_elem(&traffic, &key);
		if (t) {
			__sync_fetch_and_add(&t->other_bytes, (__u64)size * lanes);
			__sync_fetch_and_add(&t->other_lanes, lanes);
			__sync_fetch_and_add(&t->other_instrs, 1);
		}
	}
	if ((MT_PARTS & MT_PART_HEAT) && (what & MT_SLOW_HEAT) && b)
		mt_heat_claim(&b->regions, region, lanes);
	return 0;
}

/*
 * One warp instruction of lanes accessing size bytes each, counted in b
 * (its kind's): one shared add for a whole warp, to the counter of its
 * size's class; MT_SLOW_TRAFFIC for a size without one.
 */
static __always_inline __u32 mt_count(struct mt_block_traffic *b, __u32 size, __u64 lanes)
{
	if (size >= 64 || !((MT_CLASS_SIZES >> size) & 1))
		return MT_SLOW_TRAFFIC;
	__u32 *full = &b->full[(MT_CLASS_TABLE >> ((size * 3) & 63)) & 7];
	if (lanes == 32) {
		__sync_fetch_and_add(full, 1);
	} else { /* part_lanes[class] */
		__sync_fetch_and_add(full + MT_SIZE_CLASSES, (__u32)lanes);
		__sync_fetch_and_add(&b->part_instrs, 1);
	}
	return 0;
}

/* lanes thread accesses to region: in its first slot of the block's cache
 * r where it is there (one shared load and add), else MT_SLOW_HEAT. */
static __always_inline __u32 mt_heat(struct mt_block_regions *r, __u64 region, __u64 lanes)
{
	__u32 s = mt_block_slot(region);

	if (r->slot[s].tag != region + 1)
		return MT_SLOW_HEAT;
	__sync_fetch_and_add(&r->slot[s].accesses, (__u32)lanes);
	return 0;
}

SEC("gpu/mem/*")
int mt_access(struct gpuext_mem_ctx *ctx)
{
	__u64 lanes = bpf_gpu_lane_count(), region = ctx->addr >> MT_REGION_SHIFT;
	__u32 zero = 0, slow = 0;
	struct mt_block *b = bpf_map_lookup_elem(&block, &zero);

	if (!b)
		return 0;
	if (MT_PARTS & MT_PART_TRAFFIC)
		slow |= mt_count(&b->traffic[ctx->kind & 3], ctx->size, lanes);
	if (MT_PARTS & MT_PART_HEAT)
		slow |= mt_heat(&b->regions, region, lanes);
	if (slow)
		mt_slow(slow, ctx->kind, ctx->size, region, lanes);
	return 0;
}

/* Add the two 32-bit counts of w (low, high) to a[0], a[1]: a word that
 * is 0 (most are: a block uses few size classes) costs one test. */
static __always_inline void mt_add_pair(__u64 *a, __u64 w)
{
	if (!w)
		return;
	if ((__u32)w)
		__sync_fetch_and_add(&a[0], (__u64)(__u32)w);
	if (w >> 32)
		__sync_fetch_and_add(&a[1], w >> 32);
}

/*
 * The block's traffic of kind (b) into the global counters (this SM's copy
 * 0: a block adds once, so spreading over SPREAD_SLOTS copies saves no
 * contention worth the block index it reads).  The block's 32-bit
 * counters are at the indices of struct mt_traffic's 64-bit ones (full,
 * part_lanes, part_instrs: memtrace.h), read as 7 words loaded first, one
 * after the other with nothing between them (so the loads overlap).
 */
static __always_inline void mt_flush_traffic(const struct mt_block_traffic *b, __u32 kind)
{
	__u32 key = kind * SPREAD_SLOTS;
	struct mt_traffic *t = bpf_map_lookup_elem(&traffic, &key);

	if (!t)
		return;
	const __u64 *w = (const __u64 *)b;
	__u64 *g = (__u64 *)t;
	__u64 w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5], w6 = w[6];
	mt_add_pair(&g[0], w0);
	mt_add_pair(&g[2], w1);
	mt_add_pair(&g[4], w2);
	mt_add_pair(&g[6], w3);
	mt_add_pair(&g[8], w4);
	mt_add_pair(&g[10], w5);
	if ((__u32)w6) /* part_instrs; its other half is padding */
		__sync_fetch_and_add(&g[12], (__u64)(__u32)w6);
}

SEC("gpu/block_exit/*")
int mt_block_flush(struct gpuext_block_ctx *ctx)
{
	__u32 zero = 0;
	struct mt_block *b = bpf_map_lookup_elem(&block, &zero);

	if (!b)
		return 0;
	if (MT_PARTS & MT_PART_TRAFFIC) {
		/* GPUEXT_MEM_LOAD, _STORE, _ATOMIC: a loop, not 3 copies of the
		 * body (code every kernel carries) */
#pragma clang loop unroll(disable)
		for (__u32 kind = 0; kind < 3; kind++)
			mt_flush_traffic(&b->traffic[kind], kind);
	}
	if (MT_PARTS & MT_PART_HEAT) {
		/* each claimed slot's count and its region into the global map:
		 * one load tells which (a block touches few regions); a loop, as
		 * above */
		__u64 claimed = b->regions.claimed;
#pragma clang loop unroll(disable)
		for (int s = 0; s < MT_BLOCK_SLOTS; s++)
			if (claimed & (1ull << s))
				mt_heat_global(b->regions.slot[s].tag - 1,
					       b->regions.slot[s].accesses);
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
