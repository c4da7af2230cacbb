/* SPDX-License-Identifier: MIT */
/*
 * Latency histograms in the style of bcc's libbpf-tools (funclatency,
 * biolatency) and bpftrace's hist(): log2 buckets computed with the
 * branch-free log2 of bits.bpf.h, with a plain bounded loop, and counted
 * in an array map, a .bss array and a per-CPU array.
 */
#include "common.h"

#define MAX_SLOTS 27

struct hist {
	u32 slots[MAX_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, u64);
	__type(value, u64);
} starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct hist);
} hists SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 64);
	__type(key, u32);
	__type(value, u64);
} pcpu_hist SEC(".maps");

__u32 bss_hist[MAX_SLOTS] = {};
const volatile bool in_ms = false;

static __always_inline u64 log2(u32 v)
{
	u32 shift, r;

	r = (v > 0xFFFF) << 4; v >>= r;
	shift = (v > 0xFF) << 3; v >>= shift; r |= shift;
	shift = (v > 0xF) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	r |= (v >> 1);
	return r;
}

static __always_inline u64 log2l(u64 v)
{
	u32 hi = v >> 32;

	if (hi)
		return log2(hi) + 32;
	return log2(v);
}

SEC("uprobe/cuLaunchKernel")
int BPF_KPROBE(latency_entry)
{
	u64 pid_tgid = bpf_get_current_pid_tgid();
	u64 ts = bpf_ktime_get_ns();

	bpf_map_update_elem(&starts, &pid_tgid, &ts, BPF_ANY);
	return 0;
}

SEC("uretprobe/cuLaunchKernel")
int BPF_KRETPROBE(latency_exit)
{
	u64 pid_tgid = bpf_get_current_pid_tgid();
	u32 zero = 0;
	struct hist *h;
	u64 *tsp, slot, delta;

	tsp = bpf_map_lookup_elem(&starts, &pid_tgid);
	if (!tsp)
		return 0;
	delta = bpf_ktime_get_ns() - *tsp;
	bpf_map_delete_elem(&starts, &pid_tgid);
	if (in_ms)
		delta /= 1000000;
	else
		delta /= 1000;

	h = bpf_map_lookup_elem(&hists, &zero);
	if (!h)
		return 0;
	slot = log2l(delta);
	if (slot >= MAX_SLOTS)
		slot = MAX_SLOTS - 1;
	__sync_fetch_and_add(&h->slots[slot], 1);
	__sync_fetch_and_add(&bss_hist[slot], 1);
	return 0;
}

/* bpftrace's hist(): a loop that finds the highest set bit. */
SEC("uprobe/cuMemcpyHtoD_v2")
int BPF_KPROBE(size_hist, u64 dst, const void *src, size_t bytes)
{
	u32 bucket = 0;
	u64 *count;

	for (int i = 0; i < 64; i++) {
		if (bytes >> i)
			bucket = i;
		else
			break;
	}
	count = bpf_map_lookup_elem(&pcpu_hist, &bucket);
	if (count)
		*count += 1;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
