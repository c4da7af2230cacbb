/* SPDX-License-Identifier: MIT */
/*
 * mem_big.bpf.c - a gpu/mem program whose pasted block is large (~14 KiB
 * of PTX: an unrolled chain of per-SM counter updates), as memtrace's was
 * before the translator's code shrank: for tests that need a mem probe
 * predicted slow to compile (test_agent's tiers, agent_tier.c).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#ifndef BIG_UPDATES
#define BIG_UPDATES 16
#endif

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} big_counts SEC(".maps");

SEC("gpu/mem/*")
int mem_big(struct gpuext_mem_ctx *ctx)
{
#pragma unroll
	for (__u32 i = 0; i < BIG_UPDATES; i++) {
		__u32 k = (ctx->addr >> i) & 63;
		__u64 *c = bpf_map_lookup_elem(&big_counts, &k);
		if (c)
			__sync_fetch_and_add(c, 1);
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
