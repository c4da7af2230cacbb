/* SPDX-License-Identifier: MIT */
/*
 * kuprobe_launch.bpf.c - cuLaunchKernel calls counted through a kernel
 * uprobe on the driver library (tests/gpu/attach.sh: `gpuext attach -p PID`
 * on a running CUDA program, `gpuext run --kernel-uprobes`).
 */
#include "progs.h"

/* 0: cuLaunchKernel entries, 1: returns with CUDA_SUCCESS. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} launches SEC(".maps");

static void add(__u32 key)
{
	__u64 *c = bpf_map_lookup_elem(&launches, &key);
	if (c)
		__sync_fetch_and_add(c, 1);
}

SEC("uprobe/libcuda.so.1:cuLaunchKernel")
int BPF_KPROBE(launch_enter)
{
	add(0);
	return 0;
}

SEC("uretprobe/libcuda.so.1:cuLaunchKernel")
int BPF_KRETPROBE(launch_return, int ret)
{
	if (ret == 0)
		add(1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
