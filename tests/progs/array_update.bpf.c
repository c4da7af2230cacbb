/* SPDX-License-Identifier: MIT */
/*
 * array_update: bpf_map_update_elem on an array and a per-SM array, which
 * the PTX translator writes inline (no runtime call): values of 8 and 12
 * bytes from the stack, a value from another map's memory, and each error
 * (flags > BPF_EXIST, a key past max_entries, BPF_NOEXIST on an element
 * that always exists).  Returns a checksum of what it reads back and of the
 * results, the same on every backend (tests/gpu/devmem.sh compares run-gpu
 * with test-run).
 */
#include "progs.h"

struct pair {
	__u64 a;
	__u32 b;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct pair);
} pairs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} per_sm SEC(".maps");

SEC("gpu/entry/array_update")
int update(void *ctx)
{
	struct pair v = {.a = 0x1122334455667788ull, .b = 0x99aabbcc};
	__u64 x = 41, sum = 0;
	__u32 k = 1;
	long r;

	r = bpf_map_update_elem(&pairs, &k, &v, BPF_ANY);
	sum += r;
	v.a += 1; /* a later store to the value's slot: not seen by key 1 */
	k = 2;
	r = bpf_map_update_elem(&pairs, &k, &v, BPF_EXIST);
	sum += r;
	/* errors: each leaves the map as it was */
	sum = sum * 3 + (__u64)bpf_map_update_elem(&pairs, &k, &v, 4);
	sum = sum * 3 + (__u64)bpf_map_update_elem(&pairs, &k, &v, BPF_NOEXIST);
	k = 4;
	sum = sum * 3 + (__u64)bpf_map_update_elem(&pairs, &k, &v, BPF_ANY);
	/* a value from map memory: element 1 copied to element 3 */
	k = 1;
	struct pair *p1 = bpf_map_lookup_elem(&pairs, &k);
	if (!p1)
		return 1;
	k = 3;
	sum += bpf_map_update_elem(&pairs, &k, p1, BPF_ANY);
	k = 0;
	sum += bpf_map_update_elem(&per_sm, &k, &x, BPF_ANY);
	for (__u32 i = 0; i < 4; i++) {
		struct pair *p = bpf_map_lookup_elem(&pairs, &i);
		if (!p)
			return 2;
		sum = sum * 31 + p->a + p->b;
	}
	k = 0;
	__u64 *s = bpf_map_lookup_elem(&per_sm, &k);
	if (!s)
		return 3;
	return (int)(sum + *s);
}

char LICENSE[] SEC("license") = "GPL";
