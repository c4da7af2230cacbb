/* SPDX-License-Identifier: MIT */
/*
 * apiprobe_cuda.bpf.c - API probes on driver functions, run by the agent
 * under `gpuext run` with the fake driver (tests/unit/test_apiprobe_agent.c).
 */
#include "progs.h"

/* 0: cuLaunchKernel entries, 1: its returns with CUDA_SUCCESS,
 * 2: cuModuleGetFunction entries, 3: grid x summed over launches (PARM2). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} api_calls SEC(".maps");

static void add(__u32 key, __u64 v)
{
	__u64 *c = bpf_map_lookup_elem(&api_calls, &key);
	if (c)
		__sync_fetch_and_add(c, v);
}

SEC("uprobe/cuLaunchKernel")
int BPF_KPROBE(launch_enter, void *f, unsigned int grid_x)
{
	add(0, 1);
	add(3, grid_x);
	return 0;
}

SEC("uretprobe/cuLaunchKernel")
int BPF_KRETPROBE(launch_return, int ret)
{
	if (ret == 0)
		add(1, 1);
	return 0;
}

SEC("uprobe/cuModuleGetFunction")
int BPF_KPROBE(get_function_enter)
{
	add(2, 1);
	return 0;
}
