/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes.md (krs_hist), kernelretsnoop variant: the duration histogram only (no per-block records) */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>
struct h { __u64 count[48]; };
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024 * 8);
	__type(key, __u32);
	__type(value, struct h);
} durations SEC(".maps");
SEC("gpu/block_exit/*")
int krs_hist(struct gpuext_block_ctx *ctx)
{
	__u64 d = ctx->end_ns > ctx->start_ns ? ctx->end_ns - ctx->start_ns : 0;
	__u32 sm = ctx->sm * 8 + (ctx->block & 7), b = 0;
	for (__u64 v = d; v && b < 47; v >>= 1)
		b++;
	struct h *p = bpf_map_lookup_elem(&durations, &sm);
	if (p)
		__sync_fetch_and_add(&p->count[b], 1);
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
