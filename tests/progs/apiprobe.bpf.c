/* SPDX-License-Identifier: MIT */
/*
 * apiprobe.bpf.c - programs for the in-process API probe tests
 * (tests/unit/test_apiprobe.c): libbpf's BPF_KPROBE/BPF_KRETPROBE macros
 * read the trampoline's struct pt_regs exactly as they would a kernel's.
 */
#include "progs.h"

/* args[i] = PARMi+1 of the last call of apiprobe_fn6, args[6] = its sp. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} args SEC(".maps");

/* 0: entries, 1: returns, 2: sum of return values (atomics: many threads). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

static void add(__u32 key, __u64 v)
{
	__u64 *c = bpf_map_lookup_elem(&counts, &key);
	if (c)
		__sync_fetch_and_add(c, v);
}

static void store(__u32 key, __u64 v)
{
	bpf_map_update_elem(&args, &key, &v, BPF_ANY);
}

SEC("uprobe/apiprobe_fn6")
int BPF_KPROBE(fn6_enter, long a1, long a2, long a3, long a4, long a5)
{
	/* Debian 12's libbpf stops at PT_REGS_PARM5: the sixth is r9. */
	long a6 = ctx->r9;

	store(0, a1);
	store(1, a2);
	store(2, a3);
	store(3, a4);
	store(4, a5);
	store(5, a6);
	store(6, PT_REGS_SP(ctx));
	add(0, 1);
	return 0;
}

SEC("uretprobe/apiprobe_fn6")
int BPF_KRETPROBE(fn6_return, long ret)
{
	store(7, ret);
	add(1, 1);
	add(2, ret);
	return 0;
}

/* Calls bpf_get_current_pid_tgid, which the recursion test rebinds to a
 * function that calls a probed function again. */
SEC("uprobe/apiprobe_reenter")
int BPF_KPROBE(reenter_enter)
{
	add(0, 1);
	return bpf_get_current_pid_tgid() == 0;
}
