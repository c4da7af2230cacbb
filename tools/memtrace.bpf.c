/* SPDX-License-Identifier: MIT */
/*
 * memtrace: global memory traffic of kernels.  Runs at every global load,
 * store and atomic, once per warp: bytes = access size x active lanes (the
 * lanes of a warp access the same width), counted per kind; and thread
 * accesses per 2 MiB region of the address space (key addr >> 21, the
 * running lane's address stands for the warp's) for the heat map.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "memtrace.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, struct mt_traffic);
} traffic SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MT_MAX_REGIONS);
	__type(key, __u64);
	__type(value, __u64);
} regions SEC(".maps");

SEC("gpu/mem/*")
int mt_access(struct gpuext_mem_ctx *ctx)
{
	__u64 lanes = bpf_gpu_lane_count();
	__u32 kind = ctx->kind;
	__u64 region = ctx->addr >> MT_REGION_SHIFT;

	struct mt_traffic *t = bpf_map_lookup_elem(&traffic, &kind);
	if (t) {
		__sync_fetch_and_add(&t->bytes, (__u64)ctx->size * lanes);
		__sync_fetch_and_add(&t->accesses, lanes);
		__sync_fetch_and_add(&t->instrs, 1);
	}
	__u64 *n = bpf_map_lookup_elem(&regions, &region);
	if (!n) {
		__u64 zero = 0;
		bpf_map_update_elem(&regions, &region, &zero, BPF_NOEXIST);
		n = bpf_map_lookup_elem(&regions, &region);
	}
	if (n)
		__sync_fetch_and_add(n, lanes);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
