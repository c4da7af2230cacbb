/* SPDX-License-Identifier: MIT */
/*
 * bpf-to-bpf calls as libraries of helpers are written: __noinline
 * functions that fill a struct through a pointer to the caller's stack,
 * hash a buffer, return a map value (or NULL) the caller checks, and call
 * each other.
 */
#include "common.h"

struct key {
	u32 pid;
	u32 kind;
	u64 arg;
};

struct val {
	u64 count;
	u64 hash;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2048);
	__type(key, struct key);
	__type(value, struct val);
} calls SEC(".maps");

static __noinline void make_key(struct key *k, u32 kind, u64 arg)
{
	k->pid = bpf_get_current_pid_tgid() >> 32;
	k->kind = kind;
	k->arg = arg;
}

static __noinline u64 mix(u64 h, u64 v)
{
	h ^= v;
	h *= 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 31);
}

static __noinline u64 hash_key(const struct key *k)
{
	u64 h = mix(0, k->pid);

	h = mix(h, k->kind);
	return mix(h, k->arg);
}

static __noinline struct val *get_val(struct key *k)
{
	struct val zero = {}, *v = bpf_map_lookup_elem(&calls, k);

	if (v)
		return v;
	zero.hash = hash_key(k);
	if (bpf_map_update_elem(&calls, k, &zero, BPF_NOEXIST))
		return NULL;
	return bpf_map_lookup_elem(&calls, k);
}

SEC("uprobe/cuLaunchKernel")
int BPF_KPROBE(count_launch, void *f)
{
	struct key k = {};
	struct val *v;

	make_key(&k, 1, (u64)f);
	v = get_val(&k);
	if (!v)
		return 0;
	__sync_fetch_and_add(&v->count, 1);
	return 0;
}

SEC("uprobe/cuMemAlloc_v2")
int BPF_KPROBE(count_alloc, void *dptr, size_t bytes)
{
	struct key k = {};
	struct val *v;

	make_key(&k, 2, bytes);
	v = get_val(&k);
	if (v)
		v->count += bytes;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
