/* SPDX-License-Identifier: MIT */
/*
 * memcost_traffic64.bpf.c - memtrace's traffic half with its counters
 * spread over 64 copies per SM instead of 8 (the copy from the warp's
 * index and its block's: warps resident on one SM at once mostly take
 * different lines), to measure what contention on the counters' lines
 * costs (bench/memtrace_cost.sh).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "../../tools/memtrace.h"

#define COPIES 64

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 3 * COPIES);
	__type(key, __u32);
	__type(value, struct mt_traffic);
} traffic SEC(".maps");

SEC("gpu/mem/*")
int mt_traffic64(struct gpuext_mem_ctx *ctx)
{
	__u64 lanes = bpf_gpu_lane_count();
	__u32 copy = (bpf_gpu_warp_id() ^ (bpf_gpu_block_idx(0) << 3)) & (COPIES - 1);
	__u32 key = ctx->kind * COPIES + copy;
	struct mt_traffic *t = bpf_map_lookup_elem(&traffic, &key);

	if (t && lanes == 32 && ctx->size == 4)
		__sync_fetch_and_add(&t->full[2], 1);
	else if (t)
		__sync_fetch_and_add(&t->part_lanes[2], lanes);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
