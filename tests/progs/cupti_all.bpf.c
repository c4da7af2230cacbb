/* SPDX-License-Identifier: MIT */
/*
 * One program per CUPTI section, summing what a tool would: kernels and
 * their GPU time; bytes per copy kind (memsets under GPUEXT_CUPTI_MEMSET,
 * kept in the last slot); faults and migrated bytes per unified-memory
 * kind.  tests/unit/test_cupti_tools.c runs it under `gpuext run` with the
 * fake libcupti and compares the maps with the fake's generators.
 */
#include "progs.h"
#include <bpf/gpuext_cupti.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} kernel_stats SEC(".maps"); /* [0] kernels, [1] GPU ns */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 12);
	__type(key, __u32);
	__type(value, __u64);
} copy_bytes SEC(".maps"); /* by copy kind; [11] memsets */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 9);
	__type(key, __u32);
	__type(value, __u64);
} uvm_amount SEC(".maps"); /* by unified-memory kind: bytes, or faults */

static void add(void *map, __u32 key, __u64 v)
{
	__u64 *p = bpf_map_lookup_elem(map, &key);
	if (p)
		__sync_fetch_and_add(p, v);
}

SEC("cupti/kernel")
int count_kernel(const struct gpuext_cupti_kernel *k)
{
	add(&kernel_stats, 0, 1);
	add(&kernel_stats, 1, k->end - k->start);
	return 0;
}

SEC("cupti/memcpy")
int count_copy(const struct gpuext_cupti_memcpy *m)
{
	add(&copy_bytes, m->kind == GPUEXT_CUPTI_MEMSET ? 11 : m->kind, m->bytes);
	return 0;
}

SEC("cupti/uvm")
int count_uvm(const struct gpuext_cupti_uvm *u)
{
	add(&uvm_amount, u->kind, u->bytes ? u->bytes : u->count);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
