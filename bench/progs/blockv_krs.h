/* SPDX-License-Identifier: MIT */
/*
 * blockv_krs.h - what the kernelretsnoop variants of bench/progs share
 * (bench/results/2026-11-22-h200-block-probes-s5.md): kernelretsnoop's map
 * of records at the block index as it was until session 7 (the whole
 * record, 48 bytes, stored after the exit barrier: struct blockv_krs_rec),
 * the block's record, and its words but the end time, stored field by
 * field or packed in 8-byte words.  tools/kernelretsnoop.bpf.c now stores
 * less (bench/results/2026-11-22-h200-block-probes-s7.md).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#define KRS_MAX_BLOCKS (1 << 16)

/* kernelretsnoop's record until session 7 (its tools/kernelretsnoop.h). */
struct blockv_krs_rec {
	__u64 start_ns;
	__u64 end_ns;
	__u32 block[3];
	__u32 sm;
	__u32 threads;
	__u32 warps;
	__u64 launch;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KRS_MAX_BLOCKS);
	__type(key, __u32);
	__type(value, struct blockv_krs_rec);
} blocks SEC(".maps");

/* The block's record (kernelretsnoop's slot). */
static __always_inline struct blockv_krs_rec *krs_record(struct gpuext_block_ctx *ctx)
{
	__u32 slot = ctx->block & (KRS_MAX_BLOCKS - 1);
	return bpf_map_lookup_elem(&blocks, &slot);
}

/* All of the record but the end time, field by field (kernelretsnoop's stores). */
static __always_inline void krs_store_but_end(struct blockv_krs_rec *b, struct gpuext_block_ctx *ctx)
{
	b->start_ns = ctx->start_ns;
	b->block[0] = bpf_gpu_block_idx(0);
	b->block[1] = bpf_gpu_block_idx(1);
	b->block[2] = bpf_gpu_block_idx(2);
	b->sm = ctx->sm;
	b->threads = ctx->threads;
	b->warps = ctx->warps;
	b->launch = bpf_gpu_launch_id();
}

/* The same as five 8-byte words (word 1, the end time, left). */
static __always_inline void krs_pack_but_end(__u64 *w, struct gpuext_block_ctx *ctx)
{
	w[0] = ctx->start_ns;
	w[2] = bpf_gpu_block_idx(0) | bpf_gpu_block_idx(1) << 32;
	w[3] = bpf_gpu_block_idx(2) | (__u64)ctx->sm << 32;
	w[4] = ctx->threads | (__u64)ctx->warps << 32;
	w[5] = bpf_gpu_launch_id();
}
