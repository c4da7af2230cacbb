/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes-s4.md (krs_store), kernelretsnoop variant: the per-block record only (plain stores at the block index, no histogram) */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>
struct rec { __u64 start_ns, end_ns; __u32 block[3], sm, threads, warps; };
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << 16);
	__type(key, __u32);
	__type(value, struct rec);
} blocks SEC(".maps");
SEC("gpu/block_exit/*")
int krs_store(struct gpuext_block_ctx *ctx)
{
	__u32 slot = ctx->block & ((1 << 16) - 1);
	struct rec *b = bpf_map_lookup_elem(&blocks, &slot);
	if (!b)
		return 0;
	b->start_ns = ctx->start_ns;
	b->end_ns = ctx->end_ns;
	b->block[0] = bpf_gpu_block_idx(0);
	b->block[1] = bpf_gpu_block_idx(1);
	b->block[2] = bpf_gpu_block_idx(2);
	b->sm = ctx->sm;
	b->threads = ctx->threads;
	b->warps = ctx->warps;
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
