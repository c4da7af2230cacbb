/* SPDX-License-Identifier: MIT */
/*
 * kuprobe.bpf.c - the kernel-uprobe backend's test program (src/host/):
 * the three target forms on the fake driver's cuDriverGetVersion
 * (tests/unit/test_host.c, `gpuext attach`, `gpuext run --kernel-uprobes`)
 * and an event per call through a ring buffer.
 */
#include "progs.h"

/* 0: entries (uprobe/FUNC), 1: returns with CUDA_SUCCESS (LIB:FUNC),
 * 2: entries with a non-NULL argument (uprobe/LIB:FUNC). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u64);
} kcalls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} kevents SEC(".maps");

static void add(__u32 key)
{
	__u64 *c = bpf_map_lookup_elem(&kcalls, &key);
	if (c)
		__sync_fetch_and_add(c, 1);
}

SEC("uprobe/cuDriverGetVersion")
int BPF_KPROBE(version_enter, int *out)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	add(0);
	bpf_ringbuf_output(&kevents, &pid, sizeof(pid), 0);
	return 0;
}

SEC("uprobe/libcuda.so.1:cuDriverGetVersion")
int BPF_KPROBE(version_enter_lib, int *out)
{
	if (out)
		add(2);
	return 0;
}

SEC("uretprobe/libcuda.so.1:cuDriverGetVersion")
int BPF_KRETPROBE(version_return, int ret)
{
	if (ret == 0)
		add(1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
