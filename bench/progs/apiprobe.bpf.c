/* SPDX-License-Identifier: MIT */
/*
 * apiprobe.bpf.c - the probe programs of bench/apiprobe_bench.c: what an
 * in-process API probe costs with nothing to do, with a counter, and with
 * a hash update keyed by the first argument.
 */
#define __TARGET_ARCH_x86
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, __u64);
} per_arg SEC(".maps");

static void count(__u32 key)
{
	__u64 *c = bpf_map_lookup_elem(&calls, &key);
	if (c)
		__sync_fetch_and_add(c, 1);
}

SEC("uprobe/bench_empty")
int BPF_KPROBE(probe_empty)
{
	return 0;
}

SEC("uprobe/bench_count")
int BPF_KPROBE(probe_count)
{
	count(0);
	return 0;
}

SEC("uprobe/bench_hash")
int BPF_KPROBE(probe_hash, __u64 arg)
{
	__u64 key = arg & 1023, one = 1;
	__u64 *v = bpf_map_lookup_elem(&per_arg, &key);
	if (v)
		__sync_fetch_and_add(v, 1);
	else
		bpf_map_update_elem(&per_arg, &key, &one, BPF_NOEXIST);
	return 0;
}

SEC("uprobe/bench_count_ret")
int BPF_KPROBE(probe_count_entry)
{
	count(0);
	return 0;
}

SEC("uretprobe/bench_count_ret")
int BPF_KRETPROBE(probe_count_ret)
{
	count(1);
	return 0;
}
