/* SPDX-License-Identifier: MIT */
/*
 * btf_maps: the other ways of writing a BTF-defined map, several in one
 * object: __uint(key_size)/__uint(value_size) instead of __type, a typedef
 * key, an array value type, an array-of-struct value, map_flags, pinning.
 * A raw program (a section gpuext gives no attach meaning to): r1 = memory,
 * r2 = its length.  It stores the first 16 bytes under key len in by_len,
 * the first 24 in names[len & 3], and counts calls in slots[0].
 * Returns len.
 */
#include "progs.h"

typedef __u32 slot_t;

struct name16 {
	char text[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8);
	__uint(key_size, sizeof(__u64));
	__uint(value_size, sizeof(struct name16));
	__uint(map_flags, BPF_F_NO_PREALLOC);
} by_len SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, slot_t);
	__type(value, char[24]);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} names SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct name16[2]);
} slots SEC(".maps");

SEC("raw/copy")
int copy_name(__u8 *mem, __u64 len)
{
	struct name16 v;
	slot_t slot = len & 3;
	__u32 zero = 0;

	if (len < 24)
		return -1;
	__builtin_memcpy(&v, mem, sizeof(v));
	bpf_map_update_elem(&by_len, &len, &v, BPF_ANY);
	char *n = bpf_map_lookup_elem(&names, &slot);
	if (n)
		__builtin_memcpy(n, mem, 24);
	struct name16 *s = bpf_map_lookup_elem(&slots, &zero);
	if (s)
		s[1].text[0]++;
	return len;
}

char LICENSE[] SEC("license") = "GPL";
