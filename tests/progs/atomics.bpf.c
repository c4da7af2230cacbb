/* SPDX-License-Identifier: MIT */
/*
 * atomics: every atomic the C compiler emits for eBPF, on a map value and a
 * .bss global.  Input: one __u64 x.  Returns the old value of cas (from the
 * compare-and-swap).
 */
#include "progs.h"

struct counters {
	__u64 add;
	__u64 fetch_add_sum; /* sum of values returned by fetch_add */
	__u64 or_bits;
	__u64 and_bits;
	__u64 xor_bits;
	__u64 cas;
	__u64 xchg_old;
	__u32 add32;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct counters);
} ctrs SEC(".maps");

__u64 swapped;

SEC("struct_ops/evict_prepare")
int atomic_ops(__u64 *in)
{
	__u32 zero = 0;
	__u64 x = *in;
	struct counters *c = bpf_map_lookup_elem(&ctrs, &zero);

	if (!c)
		return -1;
	__sync_fetch_and_add(&c->add, x);
	c->fetch_add_sum += __sync_fetch_and_add(&c->add, 1);
	__sync_fetch_and_or(&c->or_bits, x);
	__sync_fetch_and_and(&c->and_bits, ~x);
	__sync_fetch_and_xor(&c->xor_bits, x);
	__sync_fetch_and_add(&c->add32, 2);
	c->xchg_old = __sync_lock_test_and_set(&swapped, x);
	return __sync_val_compare_and_swap(&c->cas, 0, x);
}

char LICENSE[] SEC("license") = "GPL";
