/* SPDX-License-Identifier: MIT */
/*
 * freq-decay: LFU whose counts halve every FREQ_HALF_LIFE faults, so a
 * block that was hot long ago does not stay resident forever (phases of a
 * workload change the hot set: a new layer, a new batch of experts).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpu_mem_ops.h>

#include "policy_common.h"

#define FREQ_HALF_LIFE 4096 /* faults */

struct freq_state {
	__u64 count;
	__u64 stamp; /* ctx->now of the last update */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, POLICY_MAX_BLOCKS);
	__type(key, __u32);
	__type(value, struct freq_state);
} freq SEC(".maps");

static __always_inline __u64 freq_decayed(const struct freq_state *s, __u64 now)
{
	__u64 halvings = (now - s->stamp) / FREQ_HALF_LIFE;
	return halvings >= 63 ? 0 : s->count >> halvings;
}

static __always_inline void freq_bump(__u64 block, __u64 now)
{
	__u32 key = (__u32)block;
	struct freq_state *s = bpf_map_lookup_elem(&freq, &key);

	if (!s)
		return;
	s->count = freq_decayed(s, now) + 1;
	s->stamp = now;
}

SEC("struct_ops/gpu_block_activate")
int freq_activate(struct gpu_mem_block_ctx *ctx)
{
	freq_bump(ctx->block, ctx->now);
	return GPU_MEM_DEFAULT;
}

SEC("struct_ops/gpu_block_access")
int freq_access(struct gpu_mem_block_ctx *ctx)
{
	freq_bump(ctx->block, ctx->now);
	return GPU_MEM_DEFAULT;
}

SEC("struct_ops/gpu_evict_prepare")
int freq_evict(struct gpu_mem_evict_ctx *ctx)
{
	__u64 best = GPU_MEM_NO_BLOCK, best_count = ~0ull;

	for (__u32 i = 0; i < POLICY_SAMPLE && i < ctx->nr_candidates; i++) {
		__u64 b = bpf_gpu_evict_candidate(ctx, i);
		__u32 key = (__u32)b;
		struct freq_state *s = bpf_map_lookup_elem(&freq, &key);
		__u64 c = s ? freq_decayed(s, ctx->now) : 0;
		if (b != GPU_MEM_NO_BLOCK && c < best_count) {
			best = b;
			best_count = c;
		}
	}
	if (best != GPU_MEM_NO_BLOCK)
		bpf_gpu_block_move_head(ctx, best);
	return 0;
}

SEC(".struct_ops")
struct gpu_mem_ops freq_decay = {
	.gpu_block_activate = (void *)freq_activate,
	.gpu_block_access = (void *)freq_access,
	.gpu_evict_prepare = (void *)freq_evict,
};

char LICENSE[] SEC("license") = "GPL";
