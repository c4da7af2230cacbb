/* SPDX-License-Identifier: MIT */
/*
 * ringbuf: one event per cuMemcpyHtoD_v2 return.  Even return values are
 * reserved and submitted, odd ones reserved and discarded; every call also
 * writes a 4-byte marker with bpf_ringbuf_output.  Returns the number of
 * bytes waiting in the buffer.
 */
#include "progs.h"

struct event {
	__u64 seq;
	__u64 ret;
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

__u64 seq;

SEC("uretprobe/cuMemcpyHtoD_v2")
int memcpy_ret(struct pt_regs *ctx)
{
	__u64 ret = PT_REGS_RC(ctx);
	struct event *ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	__u32 marker = 0xfeed0000 | (ret & 0xffff);

	if (!ev)
		return -1;
	ev->seq = ++seq;
	ev->ret = ret;
	if (ret & 1)
		bpf_ringbuf_discard(ev, 0);
	else
		bpf_ringbuf_submit(ev, 0);
	if (bpf_ringbuf_output(&events, &marker, sizeof(marker), 0))
		return -1;
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
}

char LICENSE[] SEC("license") = "GPL";
