/* SPDX-License-Identifier: MIT */
/*
 * gpu_count: at the entry and every exit of every kernel, count warps (one
 * per probe call) and threads (the warp's lane count).  Key 0: entry warps,
 * 1: entry threads, 2: exit probe calls, 3: exit threads.  Threads at entry
 * and at exit both equal grid x block; entry warps equal the launched warps.
 * Used by the agent's GPU batch (tests/gpu/agent.sh).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

static __always_inline void add(__u32 key, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&counts, &key);
	if (v)
		__sync_fetch_and_add(v, n);
}

SEC("gpu/entry/*")
int count_entry(void *ctx)
{
	add(0, 1);
	add(1, bpf_gpu_lane_count());
	return 0;
}

SEC("gpu/exit/*")
int count_exit(void *ctx)
{
	add(2, 1);
	add(3, bpf_gpu_lane_count());
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
