/* SPDX-License-Identifier: MIT */
/*
 * Array indices as C code computes them: 32-bit unsigned and signed ints
 * bounded by a modulo, a mask, a signed range check or an unsigned
 * compare, then used on a map value, a .bss array and the stack.
 */
#include "common.h"

#define NR_BUCKETS 64
#define NR_CPUS 32

struct buckets {
	u64 count[NR_BUCKETS];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct buckets);
} buckets SEC(".maps");

u64 per_cpu_calls[NR_CPUS];
u32 ring[16];
u32 ring_head;

SEC("uprobe/cuStreamSynchronize")
int BPF_KPROBE(index_mod, void *stream)
{
	u32 zero = 0, idx;
	struct buckets *b = bpf_map_lookup_elem(&buckets, &zero);

	if (!b)
		return 0;
	idx = bpf_get_prandom_u32() % NR_BUCKETS;
	b->count[idx]++;
	idx = (u32)(unsigned long)stream & (NR_BUCKETS - 1);
	b->count[idx] += 2;
	return 0;
}

SEC("uprobe/cuCtxSynchronize")
int BPF_KPROBE(index_signed)
{
	int cpu = (int)bpf_get_smp_processor_id();
	int slot = (int)PT_REGS_PARM1(ctx);

	if (cpu < 0 || cpu >= NR_CPUS)
		return 0;
	per_cpu_calls[cpu]++;
	if (slot < 0 || slot >= 16)
		return 0;
	ring[slot] = cpu;
	return 0;
}

SEC("uprobe/cuEventRecord")
int BPF_KPROBE(index_unsigned32, void *event, void *stream)
{
	u32 head = ring_head;
	u32 vals[8] = {};
	u32 i = (u32)(unsigned long)event;

	if (i < 8)
		vals[i] = head;
	head++;
	if (head >= 16)
		head = 0;
	ring[head] = vals[(head + 3) & 7];
	ring_head = head;
	return vals[0];
}

char LICENSE[] SEC("license") = "GPL";
