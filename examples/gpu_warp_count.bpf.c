/* SPDX-License-Identifier: MIT */
/*
 * gpu_warp_count: at the entry of every kernel matching vec*, count the
 * threads that start (aggregated per warp: one map update per warp, adding
 * the warp's lane count), the warps per SM, and log the first warp of each
 * block to a ring buffer with its start time.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} warps_per_sm SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} blocks SEC(".maps");

struct block_start {
	__u64 ns;
	__u32 block, sm;
};

SEC("gpu/entry/vec*")
int count_entry(void *ctx)
{
	__u32 zero = 0, sm = bpf_gpu_sm_id();
	__u64 one = 1, *v;

	v = bpf_map_lookup_elem(&threads, &zero);
	if (v)
		__sync_fetch_and_add(v, bpf_gpu_lane_count());
	v = bpf_map_lookup_elem(&warps_per_sm, &sm);
	if (v)
		__sync_fetch_and_add(v, 1);
	else
		bpf_map_update_elem(&warps_per_sm, &sm, &one, BPF_NOEXIST);
	if (bpf_gpu_warp_id() == 0) {
		struct block_start b = {bpf_gpu_globaltimer(), bpf_gpu_block_idx(0), sm};
		bpf_ringbuf_output(&blocks, &b, sizeof(b), 0);
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
