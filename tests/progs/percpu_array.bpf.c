/* SPDX-License-Identifier: MIT */
/*
 * percpu_array: total kernel time from CUPTI kernel records, in a per-CPU
 * array.  Returns the record's duration.
 */
#include "progs.h"

struct kernel_rec {
	__u64 start_ns;
	__u64 end_ns;
	__u32 grid_x;
	__u32 block_x;
};

struct ktime_total {
	__u64 count;
	__u64 total_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ktime_total);
} ktime SEC(".maps");

SEC("cupti/kernel")
int kernel_time(struct kernel_rec *rec)
{
	__u32 zero = 0;
	struct ktime_total *t = bpf_map_lookup_elem(&ktime, &zero);
	__u64 d = rec->end_ns - rec->start_ns;

	if (!t)
		return -1;
	t->count++;
	t->total_ns += d;
	return d;
}

char LICENSE[] SEC("license") = "GPL";
