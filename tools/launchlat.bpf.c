/* SPDX-License-Identifier: MIT */
/*
 * launchlat: launch latency of every kernel, SASS-only ones included (cuBLAS,
 * PyTorch's own): from the start of the host call that launched it to its
 * start on the GPU.  The GPU side is CUPTI's kernel record; the agent joins
 * it by correlation id with CUPTI's record of the launching driver/runtime
 * call and puts that call's start in api_start, on the same clock
 * (CLOCK_MONOTONIC: include/bpf/gpuext_cupti.h).  API probes on the launch
 * calls count the launches the host made, so that the summary can say how
 * many of them CUPTI reported.
 */
#include "cuda_probe.h"
#include "launchlat.h"

#include <bpf/gpuext_cupti.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LT_STAT_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LT_BUCKETS);
	__type(key, __u32);
	__type(value, __u64);
} hist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_MAX_KERNELS);
	__type(key, __u32);
	__type(value, struct lt_kernel);
} kernels SEC(".maps");

static __always_inline void stat_add(__u32 key, __u64 v)
{
	__u64 *c = bpf_map_lookup_elem(&stats, &key);

	if (c)
		__sync_fetch_and_add(c, v);
}

/* The kernel's entry in `kernels`, made at its first record. */
static __always_inline struct lt_kernel *lt_entry(const struct gpuext_cupti_kernel *k)
{
	__u32 hash = k->name_hash;
	struct lt_kernel *e = bpf_map_lookup_elem(&kernels, &hash);

	if (!e) {
		struct lt_kernel n = {};

		bpf_probe_read_kernel(n.name, sizeof(n.name), k->name);
		n.name[LT_NAME_LEN - 1] = 0;
		bpf_map_update_elem(&kernels, &hash, &n, BPF_NOEXIST);
		e = bpf_map_lookup_elem(&kernels, &hash);
		if (!e)
			stat_add(LT_NAMES_LOST, 1);
	}
	return e;
}

SEC("cupti/kernel")
int lt_kernel(const struct gpuext_cupti_kernel *k)
{
	__u64 start = k->start, api = k->api_start;
	struct lt_kernel *e = lt_entry(k);

	stat_add(LT_KERNELS, 1);
	if (e)
		__sync_fetch_and_add(&e->records, 1);
	if (!api)
		return 0;
	stat_add(LT_JOINED, 1);
	__u64 ns = 0;
	if (start < api)
		stat_add(LT_NEGATIVE, 1);
	else
		ns = start - api;
	__u32 b = log2_bucket(ns);
	__u64 *h = bpf_map_lookup_elem(&hist, &b);
	if (h)
		__sync_fetch_and_add(h, 1);
	if (!e)
		return 0;
	__sync_fetch_and_add(&e->count, 1);
	__sync_fetch_and_add(&e->ns, ns);
	if (ns > e->max_ns)
		e->max_ns = ns; /* CUPTI delivers from one thread: no race */
	return 0;
}

#define LT_PROBE(name)                                                                 \
	SEC("uprobe/" #name) int name##_enter(struct pt_regs *ctx)                     \
	{                                                                              \
		stat_add(LT_API_LAUNCHES, 1);                                          \
		return 0;                                                              \
	}
#define LT_GEN_CC_LAUNCH(name) LT_PROBE(name)
#define LT_GEN_CC_ALLOC(name)
#define LT_GEN_CC_ALLOC_PITCH(name)
#define LT_GEN_CC_FREE(name)
#define LT_GEN_CC_COPY(name)
#define LT_GEN_CC_COPY_2D(name)
#define LT_GEN_CC_MEMSET(name)
#define LT_GEN_CC_SYNC(name)
#define LT_GEN(name, cls, detail, arg, blk) LT_GEN_##cls(name)
CUDA_CALLS(LT_GEN)

char LICENSE[] SEC("license") = "GPL";
