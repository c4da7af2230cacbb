/* SPDX-License-Identifier: MIT */
/*
 * percpu_hash: bytes copied per memcpy kind (CUPTI memcpy records) in a
 * per-CPU hash.  Returns this CPU's running total for the kind.
 */
#include "progs.h"

struct memcpy_rec {
	__u64 bytes;
	__u32 kind; /* 1 HtoD, 2 DtoH, ... */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} bytes_by_kind SEC(".maps");

SEC("cupti/memcpy")
int memcpy_bytes(struct memcpy_rec *rec)
{
	__u32 kind = rec->kind;
	__u64 *total = bpf_map_lookup_elem(&bytes_by_kind, &kind);

	if (!total) {
		__u64 zero = 0;
		bpf_map_update_elem(&bytes_by_kind, &kind, &zero, BPF_NOEXIST);
		total = bpf_map_lookup_elem(&bytes_by_kind, &kind);
		if (!total)
			return -1;
	}
	*total += rec->bytes;
	return *total;
}

char LICENSE[] SEC("license") = "GPL";
