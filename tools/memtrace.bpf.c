/* SPDX-License-Identifier: MIT */
/*
 * memtrace: global memory traffic of kernels.  Runs at every global load,
 * store and atomic, once per warp: bytes = access size x active lanes (the
 * lanes of a warp access the same width), counted per kind; and thread
 * accesses per 2 MiB region of the address space for the heat map: one
 * update per warp and memory instruction, in the region of the running
 * lane's address, which stands for the warp's (the common case: a warp's
 * lanes access neighbouring addresses).
 *
 * Every warp of every kernel runs this, so nothing here may be a word that
 * all of them update, and the warp should not wait for the probe's memory:
 * one counter array per SM (each SM adds to its own cache lines; the host
 * sums them), fire-and-forget reductions, and a region's slot is its
 * number modulo the slots, found from the address alone (memtrace.h).  One
 * reduction a whole-warp access of a power-of-two size up to 16 bytes: the
 * lanes, added to the word of the access's kind and size in its region's
 * slot, which counts traffic and heat at once (bytes, thread accesses and
 * warp instructions are sums and multiples of those words the host works
 * out, exactly).  The bits that say whose a slot is are ORed only where a
 * load of them (one word for all SMs, in the SM's L1 after the first)
 * shows this region's are missing: once per region, not per access.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "memtrace.h"

/* What to count: both parts, unless a measuring program
 * (bench/progs/memcost_*) includes this file to time one alone;
 * MT_BITS_ALWAYS: measuring only, the bits per SM ORed at every access
 * (no load: two reductions an access). */
#ifndef MT_PARTS
#define MT_PARTS (MT_PART_COUNTS | MT_PART_BITS)
#endif

/* Region slot -> its lanes per kind and size class (memtrace.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MT_MAX_REGIONS + 1);
	__type(key, __u32);
	__type(value, struct mt_slot);
} region_lanes SEC(".maps");

/* Kind -> partial warps and other sizes (memtrace.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct mt_odd);
} odd SEC(".maps");

/* Region slot -> the bits of the regions counted there (memtrace.h). */
struct {
#ifdef MT_BITS_ALWAYS
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
#else
	__uint(type, BPF_MAP_TYPE_ARRAY);
#endif
	__uint(max_entries, MT_MAX_REGIONS + 1);
	__type(key, __u32);
	__type(value, __u64);
} region_bits SEC(".maps");

/* The class of an access of size bytes (memtrace.h), -1 for other sizes. */
static __always_inline int mt_size_class(__u32 size)
{
	switch (size) {
	case 1: return 0;
	case 2: return 1;
	case 4: return 2;
	case 8: return 3;
	case 16: return 4;
	default: return -1;
	}
}

SEC("gpu/mem/*")
int mt_access(struct gpuext_mem_ctx *ctx)
{
	__u64 lanes = bpf_gpu_lane_count();
	__u32 kind = ctx->kind, size = ctx->size;
	__u64 tag = (ctx->addr >> MT_REGION_SHIFT) + 1;
	__u32 slot = (tag >> 32) ? MT_MAX_REGIONS : (tag - 1) & (MT_MAX_REGIONS - 1);
	int c = mt_size_class(size);

	if (kind >= MT_KINDS)
		return 0;
	if (MT_PARTS & MT_PART_COUNTS) {
		struct mt_slot *s = bpf_map_lookup_elem(&region_lanes, &slot);
		if (s)
			__sync_fetch_and_add(&s->lanes[c < 0 ? MT_LANES_OTHER : kind * MT_CLASSES + c],
					     lanes);
		if (c < 0 || lanes != 32) {
			struct mt_odd *o = bpf_map_lookup_elem(&odd, &kind);
			if (o && c < 0) {
				__sync_fetch_and_add(&o->other_bytes, (__u64)size * lanes);
				__sync_fetch_and_add(&o->other_lanes, lanes);
				__sync_fetch_and_add(&o->other_instrs, 1);
			} else if (o) {
				__sync_fetch_and_add(&o->missing, 32 - lanes);
			}
		}
	}
	if (MT_PARTS & MT_PART_BITS) {
		__u64 *b = bpf_map_lookup_elem(&region_bits, &slot);
		/* t | ~t << 32 of the tag's 32 bits, made of 32-bit halves */
		__u32 t = tag;
		__u64 mine = (__u64)(__u32)~t << 32 | t;
#ifdef MT_BITS_ALWAYS
		if (b)
			__sync_fetch_and_or(b, mine);
#else
		if (b && (*b & mine) != mine)
			__sync_fetch_and_or(b, mine);
#endif
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
