/* SPDX-License-Identifier: MIT */
/*
 * syncsnoop: time a host thread spends blocked in the driver waiting for
 * the GPU: cuCtxSynchronize, cuStreamSynchronize, cuEventSynchronize,
 * cuStreamWaitEvent and the synchronous copies (cuda_calls.h's blocking
 * calls), from entry to return of each call on its thread.  Per call: a
 * log2 histogram of the ns blocked, count, total and max; per call site
 * (the call's return address) count and total: the top callers.
 */
#include "cuda_probe.h"
#include "syncsnoop.h"

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH); /* threads that exited age out */
	__uint(max_entries, SS_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct ss_pending);
} pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CALL_COUNT * SS_BUCKETS);
	__type(key, __u32);
	__type(value, __u64);
} hist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CALL_COUNT);
	__type(key, __u32);
	__type(value, struct ss_total);
} totals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SS_MAX_CALLERS);
	__type(key, struct ss_caller_key);
	__type(value, struct ss_caller);
} callers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} trace SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} trace_on SEC(".maps");

static __always_inline int ss_enter(struct pt_regs *ctx, __u32 call)
{
	__u32 tid = current_tid();
	struct ss_pending p = {.site = call_site(ctx), .call = call};

	p.start = bpf_ktime_get_ns(); /* last: the site read is not blocked time */
	bpf_map_update_elem(&pending, &tid, &p, BPF_ANY);
	return 0;
}

static __always_inline int ss_leave(struct pt_regs *ctx, __u32 call)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 tid = current_tid(), zero = 0;
	struct ss_pending *pp = bpf_map_lookup_elem(&pending, &tid);
	int ret = (int)PT_REGS_RC(ctx);

	if (!pp || pp->call != call)
		return 0;
	struct ss_pending p = *pp;
	pp->call = CALL_NONE; /* taken */
	__u64 ns = now - p.start;
	struct ss_total *t = bpf_map_lookup_elem(&totals, &call);

	if (t) {
		__sync_fetch_and_add(&t->count, 1);
		__sync_fetch_and_add(&t->ns, ns);
		if (ns > t->max_ns)
			t->max_ns = ns; /* racy max: a lost update only under a tie of threads */
		if (ret)
			__sync_fetch_and_add(&t->failed, 1);
	}
	__u32 key = call * SS_BUCKETS + log2_bucket(ns);
	__u64 *h = bpf_map_lookup_elem(&hist, &key);
	if (h)
		__sync_fetch_and_add(h, 1);

	struct ss_caller_key ck = {.site = p.site, .call = call};
	struct ss_caller *c = bpf_map_lookup_elem(&callers, &ck);
	if (!c) {
		struct ss_caller nc = {};

		bpf_map_update_elem(&callers, &ck, &nc, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&callers, &ck);
	}
	if (c) {
		__sync_fetch_and_add(&c->count, 1);
		__sync_fetch_and_add(&c->ns, ns);
	}

	__u32 *on = bpf_map_lookup_elem(&trace_on, &zero);
	if (on && *on) {
		struct trace_rec r = {.start = p.start, .end = now, .corr = p.site,
				      .kind = TRACE_API, .track = tid, .call = call, .ret = ret};

		bpf_ringbuf_output(&trace, &r, sizeof(r), 0);
	}
	return 0;
}

/* One entry and one return program per blocking call of cuda_calls.h. */
#define SS_PAIR(name) CUDA_PROBE_PAIR(name, ss_enter, ss_leave)
#define SS_GEN_Y(name) SS_PAIR(name)
#define SS_GEN_N(name)
#define SS_GEN(name, cls, detail, arg, blk) SS_GEN_##blk(name)
CUDA_CALLS(SS_GEN)

char LICENSE[] SEC("license") = "GPL";
