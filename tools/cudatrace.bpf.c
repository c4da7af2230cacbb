/* SPDX-License-Identifier: MIT */
/*
 * cudatrace: allocations, frees, copies, memsets and launches of the driver
 * API, counted exactly (successful calls; failed ones apart), from
 * in-process probes on every name cuda_calls.h lists (except the
 * synchronisation calls: syncsnoop's).
 *
 * Live allocations are kept by address with size, kind and call site (the
 * probed call's return address): what is left at exit is the leak report.
 * Launches are counted per kernel handle, the name looked up once per
 * handle (bpf_cuda_kernel_name).  With `gpuext run --trace`, every call is
 * also sent to the `trace` ring buffer (trace.h), and so is every kernel,
 * copy and memset CUPTI reports (GPU activity for the timeline; CUPTI's
 * clock is the probes' CLOCK_MONOTONIC: include/bpf/gpuext_cupti.h).
 */
#include "cuda_probe.h"
#include "cudatrace.h"

#include <bpf/gpuext_cupti.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CT_STAT_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH); /* threads that exited age out */
	__uint(max_entries, CT_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct ct_pending);
} pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CT_MAX_ALLOCS);
	__type(key, __u64);
	__type(value, struct ct_alloc);
} allocs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CT_MAX_KERNELS);
	__type(key, __u64);
	__type(value, struct trace_kernel);
} kernels SEC(".maps");

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

static __always_inline int ct_tracing(void)
{
	__u32 zero = 0, *on = bpf_map_lookup_elem(&trace_on, &zero);

	return on && *on;
}

static __always_inline void stat_add(__u32 key, __u64 v)
{
	__u64 *c = bpf_map_lookup_elem(&stats, &key);

	if (c)
		__sync_fetch_and_add(c, v);
}

static __always_inline int ct_enter(struct pt_regs *ctx, __u32 call)
{
	__u32 tid = current_tid();
	struct ct_pending p = {
		.start = bpf_ktime_get_ns(),
		.arg = {PT_REGS_PARM1(ctx), PT_REGS_PARM2(ctx), PT_REGS_PARM3(ctx),
			PT_REGS_PARM4(ctx), PT_REGS_PARM5(ctx)},
		.call = call,
	};

	if (call_class(call) == CC_ALLOC || call_class(call) == CC_ALLOC_PITCH)
		p.site = call_site(ctx);
	bpf_map_update_elem(&pending, &tid, &p, BPF_ANY);
	return 0;
}

/* Returns the allocated address (0 if it could not be read). */
static __always_inline __u64 ct_alloc(struct ct_pending *p, __u32 kind, __u64 size, __u32 tid)
{
	struct ct_alloc a = {.size = size, .site = p->site, .kind = kind, .tid = tid};
	__u64 addr = 0;

	bpf_probe_read_user(&addr, sizeof(addr), (void *)p->arg[0]);
	stat_add(CT_ALLOCS + kind, 1);
	stat_add(CT_ALLOC_BYTES + kind, size);
	if (addr && bpf_map_update_elem(&allocs, &addr, &a, BPF_ANY))
		stat_add(CT_ALLOCS_LOST, 1);
	return addr;
}

static __always_inline void ct_free(__u64 addr)
{
	struct ct_alloc *a = bpf_map_lookup_elem(&allocs, &addr);

	if (!addr)
		return; /* freeing NULL does nothing */
	if (!a) {
		stat_add(CT_FREE_UNTRACKED, 1);
		return;
	}
	__u32 kind = a->kind < CM_COUNT ? a->kind : CM_DEVICE;
	stat_add(CT_FREES + kind, 1);
	stat_add(CT_FREE_BYTES + kind, a->size);
	bpf_map_delete_elem(&allocs, &addr);
}

/* CUDA_MEMCPY2D's memory types (CU_MEMORYTYPE_HOST 1, DEVICE 2, ARRAY 3,
 * UNIFIED 4) to a direction: arrays live on the device, unified is the
 * driver's choice. */
static __always_inline __u32 ct_dir_2d(__u32 src, __u32 dst)
{
	if (src == 4 || dst == 4)
		return CD_DEFAULT;
	if (src == 1)
		return dst == 1 ? CD_HTOH : CD_HTOD;
	return dst == 1 ? CD_DTOH : CD_DTOD;
}

/* The 2D copy's bytes (WidthInBytes x Height) and direction, read from the
 * CUDA_MEMCPY2D the call got (offsets of cuda.h's struct on x86-64). */
static __always_inline __u64 ct_copy_2d(__u64 desc, __u32 *dir)
{
	__u32 src = 0, dst = 0;
	__u64 wh[2] = {0, 0};

	bpf_probe_read_user(&src, sizeof(src), (void *)(desc + 16));
	bpf_probe_read_user(&dst, sizeof(dst), (void *)(desc + 72));
	bpf_probe_read_user(wh, sizeof(wh), (void *)(desc + 112));
	*dir = ct_dir_2d(src, dst);
	return wh[0] * wh[1];
}

static __always_inline void ct_launch(__u64 f)
{
	struct trace_kernel *k = bpf_map_lookup_elem(&kernels, &f);

	stat_add(CT_LAUNCHES, 1);
	if (!k) {
		struct trace_kernel nk = {};

		bpf_cuda_kernel_name(nk.name, sizeof(nk.name), f);
		bpf_map_update_elem(&kernels, &f, &nk, BPF_NOEXIST);
		k = bpf_map_lookup_elem(&kernels, &f);
		if (!k) {
			stat_add(CT_KERNELS_LOST, 1);
			return;
		}
	}
	__sync_fetch_and_add(&k->launches, 1);
}

static __always_inline int ct_leave(struct pt_regs *ctx, __u32 call)
{
	__u32 tid = current_tid();
	struct ct_pending *pp = bpf_map_lookup_elem(&pending, &tid);
	int ret = (int)PT_REGS_RC(ctx);

	if (!pp || pp->call != call) {
		stat_add(CT_UNPAIRED, 1);
		return 0;
	}
	struct ct_pending p = *pp;
	pp->call = CALL_NONE; /* taken */
	__u32 cls = call_class(call), dir = call_detail(call);
	/* the trace's pointer: allocations set it once they succeeded */
	__u64 bytes = 0, addr = cls == CC_ALLOC || cls == CC_ALLOC_PITCH ? 0 : p.arg[0];

	if (cls == CC_COPY_2D) {
		bytes = ct_copy_2d(p.arg[0], &dir);
	} else if (cls == CC_ALLOC_PITCH) {
		__u64 pitch = 0;

		bpf_probe_read_user(&pitch, sizeof(pitch), (void *)p.arg[1]);
		bytes = pitch * p.arg[3];
	} else if (cls == CC_MEMSET) {
		bytes = p.arg[call_arg(call)] * call_detail(call);
	} else if (cls != CC_FREE && cls != CC_LAUNCH) {
		bytes = p.arg[call_arg(call)];
	}
	if (ret) {
		stat_add(CT_FAILED, 1);
	} else if (cls == CC_ALLOC || cls == CC_ALLOC_PITCH) {
		addr = ct_alloc(&p, call_detail(call), bytes, tid);
	} else if (cls == CC_FREE) {
		ct_free(p.arg[0]);
	} else if (cls == CC_COPY || cls == CC_COPY_2D) {
		stat_add(CT_COPIES + dir, 1);
		stat_add(CT_COPY_BYTES + dir, bytes);
	} else if (cls == CC_MEMSET) {
		stat_add(CT_MEMSETS, 1);
		stat_add(CT_MEMSET_BYTES, bytes);
	} else if (cls == CC_LAUNCH) {
		addr = p.arg[call_arg(call)];
		bytes = addr;
		ct_launch(addr);
	}

	if (ct_tracing()) {
		struct trace_rec r = {.start = p.start, .end = bpf_ktime_get_ns(), .arg = bytes,
				      .corr = addr, .kind = TRACE_API, .track = tid,
				      .call = call, .ret = ret};

		bpf_ringbuf_output(&trace, &r, sizeof(r), 0);
	}
	return 0;
}

SEC("cupti/kernel")
int ct_gpu_kernel(const struct gpuext_cupti_kernel *k)
{
	if (!ct_tracing())
		return 0;
	struct trace_named *t = bpf_ringbuf_reserve(&trace, sizeof(*t), 0);
	if (!t)
		return 0;
	t->r.start = k->start;
	t->r.end = k->end;
	t->r.arg = k->name_hash;
	t->r.corr = k->correlation_id;
	t->r.kind = TRACE_GPU_KERNEL;
	t->r.track = k->stream;
	t->r.call = 0;
	t->r.ret = 0;
	t->r.device = k->device;
	t->r.pad = 0;
	bpf_probe_read_kernel(t->name, sizeof(t->name), k->name);
	t->name[TRACE_NAME_LEN - 1] = 0;
	bpf_ringbuf_submit(t, 0);
	return 0;
}

/* CUPTI's copy kinds to cuda_calls.h's directions (arrays are device memory). */
static __always_inline __u32 ct_cupti_dir(__u32 kind)
{
	switch (kind) {
	case GPUEXT_CUPTI_COPY_HTOD:
	case GPUEXT_CUPTI_COPY_HTOA:
		return CD_HTOD;
	case GPUEXT_CUPTI_COPY_DTOH:
	case GPUEXT_CUPTI_COPY_ATOH:
		return CD_DTOH;
	case GPUEXT_CUPTI_COPY_HTOH:
		return CD_HTOH;
	case GPUEXT_CUPTI_COPY_PTOP:
		return CD_PEER;
	case GPUEXT_CUPTI_COPY_UNKNOWN:
		return CD_DEFAULT;
	default:
		return CD_DTOD;
	}
}

SEC("cupti/memcpy")
int ct_gpu_memcpy(const struct gpuext_cupti_memcpy *m)
{
	if (!ct_tracing())
		return 0;
	int set = m->kind == GPUEXT_CUPTI_MEMSET;
	struct trace_rec r = {.start = m->start, .end = m->end, .arg = m->bytes,
			      .corr = m->correlation_id,
			      .kind = set ? TRACE_GPU_MEMSET : TRACE_GPU_MEMCPY,
			      .track = m->stream, .call = set ? 0 : ct_cupti_dir(m->kind),
			      .device = m->device};

	bpf_ringbuf_output(&trace, &r, sizeof(r), 0);
	return 0;
}

/* One entry and one return program per call of cuda_calls.h but the
 * synchronisation calls. */
#define CT_PAIR(name) CUDA_PROBE_PAIR(name, ct_enter, ct_leave)
#define CT_GEN_CC_ALLOC(name) CT_PAIR(name)
#define CT_GEN_CC_ALLOC_PITCH(name) CT_PAIR(name)
#define CT_GEN_CC_FREE(name) CT_PAIR(name)
#define CT_GEN_CC_COPY(name) CT_PAIR(name)
#define CT_GEN_CC_COPY_2D(name) CT_PAIR(name)
#define CT_GEN_CC_MEMSET(name) CT_PAIR(name)
#define CT_GEN_CC_LAUNCH(name) CT_PAIR(name)
#define CT_GEN_CC_SYNC(name)
#define CT_GEN(name, cls, detail, arg, blk) CT_GEN_##cls(name)
CUDA_CALLS(CT_GEN)

char LICENSE[] SEC("license") = "GPL";
