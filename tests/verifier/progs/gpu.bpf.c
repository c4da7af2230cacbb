/* SPDX-License-Identifier: MIT */
/*
 * Device programs in the style of bpftime's GPU examples (kprobe/KERNEL
 * and kretprobe/KERNEL sections on a CUDA kernel's mangled name): a call
 * counter, a per-block histogram of entry times, and a per-SM first-seen
 * timestamp.
 */
#include "common.h"
#include <bpf/gpuext_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} call_count SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, u64);
	__type(value, u64);
} block_time SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 256);
	__type(key, u32);
	__type(value, u64);
} sm_first SEC(".maps");

SEC("kprobe/_Z9vectorAddPKfS0_Pf")
int probe__cuda(void *ctx)
{
	u32 zero = 0;
	u64 *cnt = bpf_map_lookup_elem(&call_count, &zero);

	if (cnt)
		__sync_fetch_and_add(cnt, 1);
	return 0;
}

SEC("kretprobe/_Z9vectorAddPKfS0_Pf")
int retprobe__cuda(void *ctx)
{
	u64 block = bpf_gpu_block_idx(0) | bpf_gpu_block_idx(1) << 32;
	u64 now = bpf_gpu_globaltimer();
	u32 sm = (u32)bpf_gpu_sm_id();
	u64 *first;

	bpf_map_update_elem(&block_time, &block, &now, BPF_ANY);
	if (sm >= 256)
		return 0;
	first = bpf_map_lookup_elem(&sm_first, &sm);
	if (first && !*first)
		*first = now;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
