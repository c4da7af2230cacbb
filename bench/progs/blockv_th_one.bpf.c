/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes-s6.md, threadhist variant: one
 * add of 1 a block at entry, keyed by (SM, exact block size): an SM's
 * counters 8 KiB apart, one per size (the host multiplies by the size) */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024 * 1024);
	__type(key, __u32);
	__type(value, __u64);
} sm_size SEC(".maps");
SEC("gpu/block_entry/*")
int th_one(struct gpuext_block_ctx *ctx)
{
	__u32 k = ctx->sm * 1024 + ((ctx->threads - 1) & 1023);
	__u64 *n = bpf_map_lookup_elem(&sm_size, &k);
	if (n)
		__sync_fetch_and_add(n, 1);
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
