/* SPDX-License-Identifier: MIT */
/*
 * gpu_block_array: counting in a block-local array
 * (BPF_MAP_TYPE_GPU_BLOCK_ARRAY), the pattern of tools/memtrace_block.bpf.c: the
 * gpu/mem program counts warp accesses and lanes per kind in the block's
 * shared memory (shared atomics, no global traffic) and claims a tag word
 * once; the gpu/block_exit program adds the block's lanes to a global array,
 * once per block, and writes a value back with an update.  `total` holds
 * the threads' accesses per kind (tests/unit/test_block_array.c checks the
 * PTX it becomes).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

struct ba_val {
	__u32 instrs, lanes;
	__u64 tag;
};

struct {
	__uint(type, BPF_MAP_TYPE_GPU_BLOCK_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct ba_val);
} blk SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} total SEC(".maps");

SEC("gpu/mem/*")
int ba_access(struct gpuext_mem_ctx *ctx)
{
	__u32 k = ctx->kind & 3;
	struct ba_val *v = bpf_map_lookup_elem(&blk, &k);

	if (!v)
		return 0;
	__sync_fetch_and_add(&v->instrs, 1);
	__sync_fetch_and_add(&v->lanes, (__u32)bpf_gpu_lane_count());
	if (v->tag == 0)
		__sync_val_compare_and_swap(&v->tag, 0, (ctx->addr >> 21) + 1);
	return 0;
}

SEC("gpu/block_exit/*")
int ba_flush(struct gpuext_block_ctx *ctx)
{
	struct ba_val done = {.tag = ctx->block + 1};

#pragma unroll
	for (__u32 k = 0; k < 4; k++) {
		__u32 key = k;
		struct ba_val *v = bpf_map_lookup_elem(&blk, &key);
		__u64 *t = bpf_map_lookup_elem(&total, &key);
		if (v && t && v->lanes)
			__sync_fetch_and_add(t, v->lanes);
	}
	__u32 key = 3;
	bpf_map_update_elem(&blk, &key, &done, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
