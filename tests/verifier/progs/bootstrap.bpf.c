/* SPDX-License-Identifier: MIT */
/*
 * In the style of libbpf-bootstrap's bootstrap.bpf.c: a process-lifetime
 * tracer moved onto CUDA calls.  Entry stores a timestamp per thread in a
 * hash map; the return looks it up, filters with a .rodata knob and sends
 * an event with the thread's comm through a ring buffer.
 */
#include "common.h"

#define TASK_COMM_LEN 16

struct event {
	int pid;
	int tid;
	unsigned long long duration_ns;
	long ret;
	char comm[TASK_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, pid_t);
	__type(value, u64);
} exec_start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} rb SEC(".maps");

const volatile unsigned long long min_duration_ns = 0;
const volatile int targ_tgid = 0;

SEC("uprobe/cuMemAlloc_v2")
int BPF_KPROBE(handle_alloc, void *dptr, size_t bytesize)
{
	u64 id = bpf_get_current_pid_tgid();
	pid_t tid = (pid_t)id;
	u64 ts;

	if (targ_tgid && (id >> 32) != (u64)targ_tgid)
		return 0;
	ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&exec_start, &tid, &ts, BPF_ANY);
	return 0;
}

SEC("uretprobe/cuMemAlloc_v2")
int BPF_KRETPROBE(handle_alloc_ret, long ret)
{
	u64 id = bpf_get_current_pid_tgid();
	pid_t tid = (pid_t)id;
	u64 *start_ts, duration_ns = 0;
	struct event *e;

	start_ts = bpf_map_lookup_elem(&exec_start, &tid);
	if (start_ts)
		duration_ns = bpf_ktime_get_ns() - *start_ts;
	else if (min_duration_ns)
		return 0;
	bpf_map_delete_elem(&exec_start, &tid);
	if (min_duration_ns && duration_ns < min_duration_ns)
		return 0;

	e = bpf_ringbuf_reserve(&rb, sizeof(*e), 0);
	if (!e)
		return 0;
	e->pid = id >> 32;
	e->tid = tid;
	e->duration_ns = duration_ns;
	e->ret = ret;
	bpf_get_current_comm(&e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
