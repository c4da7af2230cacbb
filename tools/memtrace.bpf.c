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
 * number modulo the slots, found from the address alone (memtrace.h).  Two
 * reductions a whole-warp access of a power-of-two size up to 16 bytes,
 * both to its region's slot, one line: the lanes, added to the word of the
 * access's kind and size, which counts traffic and heat at once (bytes,
 * thread accesses and warp instructions are sums and multiples of those
 * words the host works out, exactly), and the bits that say whose the slot
 * is, ORed.  Measured on an H200 (bench/results/2026-11-22-h200-mem-wrap-s6.md):
 * session 5's three reductions (traffic, the slot's count, its bits) on
 * two lines 1.64x vecadd, 1.47x gemm; the bits in a word of their own for
 * all SMs, ORed only where a load of it shows them missing (one reduction
 * and an L1 hit), 1.61x / 1.52x: the load waits on the runner's path; two
 * reductions to one line 1.41x / 1.35x.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "memtrace.h"

/* What to count: both parts, unless a measuring program
 * (bench/progs/memcost_*) includes this file to time one alone. */
#ifndef MT_PARTS
#define MT_PARTS (MT_PART_COUNTS | MT_PART_BITS)
#endif

/* Region slot -> its bits and lanes per kind and size class (memtrace.h). */
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
	struct mt_slot *s = bpf_map_lookup_elem(&region_lanes, &slot);

	if (!s || kind >= MT_KINDS)
		return 0;
	if (MT_PARTS & MT_PART_COUNTS)
		__sync_fetch_and_add(&s->w[c < 0 ? MT_WORD_OTHER : MT_WORD(kind, c)], lanes);
	if (MT_PARTS & MT_PART_BITS) {
		/* t | ~t << 32 of the tag's 32 bits, made of 32-bit halves */
		__u32 t = tag;
		__sync_fetch_and_or(&s->w[0], (__u64)(__u32)~t << 32 | t);
	}
	if ((MT_PARTS & MT_PART_COUNTS) && (c < 0 || lanes != 32)) {
		struct mt_odd *o = bpf_map_lookup_elem(&odd, &kind);
		if (o && c < 0) {
			__sync_fetch_and_add(&o->other_bytes, (__u64)size * lanes);
			__sync_fetch_and_add(&o->other_lanes, lanes);
			__sync_fetch_and_add(&o->other_instrs, 1);
		} else if (o) {
			__sync_fetch_and_add(&o->missing, 32 - lanes);
		}
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
