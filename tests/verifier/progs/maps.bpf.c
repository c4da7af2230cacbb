/* SPDX-License-Identifier: MIT */
/*
 * Map idioms of real tools: a per-CPU array as scratch space for an event
 * too large for the 512-byte stack (then bpf_ringbuf_output), an LRU hash
 * of per-thread statistics filled with the lookup-or-init pattern, and a
 * reserved record discarded on one path and submitted on the other.
 */
#include "common.h"

#define MAX_ARGS 8

struct big_event {
	u64 ts;
	u32 pid;
	u32 nargs;
	u64 args[MAX_ARGS];
	char comm[16];
	char payload[512];
};

struct thread_stat {
	u64 calls;
	u64 bytes;
	u64 last_ts;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct big_event);
} heap SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, u32);
	__type(value, struct thread_stat);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} events SEC(".maps");

SEC("uprobe/cuMemcpyHtoD_v2")
int BPF_KPROBE(copy_event, u64 dst, const void *src, size_t bytes)
{
	u32 zero = 0;
	struct big_event *e = bpf_map_lookup_elem(&heap, &zero);

	if (!e)
		return 0;
	e->ts = bpf_ktime_get_ns();
	e->pid = bpf_get_current_pid_tgid() >> 32;
	e->nargs = 3;
	e->args[0] = dst;
	e->args[1] = (u64)src;
	e->args[2] = bytes;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_probe_read_user(e->payload, sizeof(e->payload), src);
	bpf_ringbuf_output(&events, e, sizeof(*e), 0);
	return 0;
}

static struct thread_stat *stat_of(u32 tid)
{
	static const struct thread_stat zero;
	struct thread_stat *st = bpf_map_lookup_elem(&stats, &tid);

	if (st)
		return st;
	bpf_map_update_elem(&stats, &tid, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&stats, &tid);
}

SEC("uprobe/cuMemcpyDtoH_v2")
int BPF_KPROBE(count_copy, void *dst, u64 src, size_t bytes)
{
	struct thread_stat *st = stat_of((u32)bpf_get_current_pid_tgid());

	if (!st)
		return 0;
	__sync_fetch_and_add(&st->calls, 1);
	__sync_fetch_and_add(&st->bytes, bytes);
	st->last_ts = bpf_ktime_get_ns();
	return 0;
}

struct small_event {
	u32 pid;
	int ret;
	u64 bytes;
};

SEC("uretprobe/cuMemcpyDtoH_v2")
int BPF_KRETPROBE(copy_ret, int ret)
{
	struct small_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	struct thread_stat *st;

	if (!e)
		return 0;
	e->pid = bpf_get_current_pid_tgid() >> 32;
	e->ret = ret;
	st = bpf_map_lookup_elem(&stats, &e->pid);
	if (!st) {
		bpf_ringbuf_discard(e, 0);
		return 0;
	}
	e->bytes = st->bytes;
	bpf_ringbuf_submit(e, ret ? BPF_RB_FORCE_WAKEUP : 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
