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
 * Every warp of every kernel runs this, so nothing here may be a word that
 * all of them update: the counters are per-SM maps (each SM adds to its own
 * cache lines, spread over SPREAD_SLOTS copies: spread.h; the host sums
 * them), the adds are fire-and-forget
 * reductions, and a region's slot is its number modulo the slots, with bits
 * that say whose it is ORed in (memtrace.h): nothing is loaded, so the warp
 * never waits for the probe's memory before its own access.
 * The traffic of a whole warp is one add to a counter of its size class
 * (memtrace.h): bytes and thread accesses are multiples of it the host
 * works out, exactly.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "memtrace.h"

/* What to count: both, unless a measuring program (bench/progs/memcost_*)
 * includes this file to time one part alone; MT_HEAT_COPIES (memtrace.h)
 * and MT_TRAFFIC_COPIES: the counters' copies per SM (a measuring program
 * tries others); MT_HEAT_NO_BITS: measuring only, the heat map's count
 * without its bits. */
#ifndef MT_PARTS
#define MT_PARTS (MT_PART_TRAFFIC | MT_PART_HEAT)
#endif
#ifndef MT_TRAFFIC_COPIES
#define MT_TRAFFIC_COPIES SPREAD_SLOTS
#endif

/* Kind (GPUEXT_MEM_LOAD, _STORE, _ATOMIC; a fourth row unused: the key
 * kind & 3, which the translator proves in range, so the lookup has no
 * bounds test) x SPREAD_SLOTS + spread copy -> traffic (memtrace.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4 * SPREAD_SLOTS);
	__type(key, __u32);
	__type(value, struct mt_traffic);
} traffic SEC(".maps");

/* Region slot (+ spread copy x MT_COUNT_STRIDE) -> thread accesses and the
 * bits of the regions counted there (memtrace.h); slot MT_MAX_REGIONS:
 * untracked regions. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MT_HEAT_COPIES * MT_COUNT_STRIDE);
	__type(key, __u32);
	__type(value, struct mt_heat_slot);
} region_heat SEC(".maps");

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

/* One warp instruction of lanes accessing size bytes each. */
static __always_inline void mt_count(struct mt_traffic *t, __u32 size, __u64 lanes)
{
	int c = mt_size_class(size);

	if (c < 0) {
		__sync_fetch_and_add(&t->other_bytes, (__u64)size * lanes);
		__sync_fetch_and_add(&t->other_lanes, lanes);
		__sync_fetch_and_add(&t->other_instrs, 1);
	} else if (lanes == 32) {
		__sync_fetch_and_add(&t->full[c], 1);
	} else {
		__sync_fetch_and_add(&t->part_lanes[c], lanes);
		__sync_fetch_and_add(&t->part_instrs, 1);
	}
}

SEC("gpu/mem/*")
int mt_access(struct gpuext_mem_ctx *ctx)
{
	__u64 lanes = bpf_gpu_lane_count();
#if MT_TRAFFIC_COPIES > 1 || MT_HEAT_COPIES > 1 || defined(MT_HEAT_SAMPLE)
	/* read once: a helper call is not merged by the compiler, and ptxas
	 * does not merge the special-register reads across the branches
	 * between two (bench/sass_size.sh: 7 instructions an access) */
	__u32 warp = bpf_gpu_warp_id();
#endif
#if MT_TRAFFIC_COPIES > 1
	__u32 copy = warp & (MT_TRAFFIC_COPIES - 1);
#else
	__u32 copy = 0;
#endif
	__u32 key = (ctx->kind & 3) * SPREAD_SLOTS + copy;

	if (MT_PARTS & MT_PART_TRAFFIC) {
		struct mt_traffic *t = bpf_map_lookup_elem(&traffic, &key);
		if (t)
			mt_count(t, ctx->size, lanes);
	}
#ifdef MT_HEAT_SAMPLE /* measuring only: bench/progs/memcost_heat_sampled */
	if (((warp ^ (bpf_gpu_block_idx(0) << 3)) & (MT_HEAT_SAMPLE - 1)) != 0)
		return 0;
#endif
	if (MT_PARTS & MT_PART_HEAT) {
		__u64 tag = (ctx->addr >> MT_REGION_SHIFT) + 1;
		__u32 slot = (tag >> 32) ? MT_MAX_REGIONS : (tag - 1) & (MT_MAX_REGIONS - 1);
#if MT_HEAT_COPIES > 1
		/* (warp ^ block x 8) % copies: the warp's index for SPREAD_SLOTS */
		slot += ((warp ^ (bpf_gpu_block_idx(0) << 3)) & (MT_HEAT_COPIES - 1)) *
			MT_COUNT_STRIDE;
#endif
		struct mt_heat_slot *h = bpf_map_lookup_elem(&region_heat, &slot);
		if (h) {
			__sync_fetch_and_add(&h->accesses, lanes);
#ifndef MT_HEAT_NO_BITS
			/* t | ~t << 32 of the tag's 32 bits, made of 32-bit halves */
			__u32 t = tag;
			__sync_fetch_and_or(&h->bits, (__u64)(__u32)~t << 32 | t);
#endif
		}
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
