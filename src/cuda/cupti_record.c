/* SPDX-License-Identifier: MIT */
/*
 * cupti_record.c - CUPTI's activity records (the layouts of the CUPTI major
 * version gpuext is built with, checked at load) into gpuext's stable
 * records (include/bpf/gpuext_cupti.h), and the join of GPU records with
 * the API call that issued them.
 *
 * The join keeps the last CUPTI_API_SLOTS calls in a table indexed by
 * correlation id modulo its size.  cupti.c reads the calls of every buffer
 * a flush returned before their GPU records; a call CUPTI returns only in
 * a later flush leaves its GPU record unjoined (counted).  When a
 * runtime call and the driver call inside it share a correlation id, the
 * outer one (earliest start) is kept.  Only the delivery thread touches
 * the table (cupti.c's lock).
 */
#include <string.h>

#include "cupti_impl.h"

enum { CUPTI_API_SLOTS = 1 << 16 };

struct api_call {
	uint32_t correlation_id; /* 0: empty (CUPTI's ids start at 1) */
	uint32_t tid;
	uint64_t start, end;
};

static struct api_call calls[CUPTI_API_SLOTS];

/* A CUPTI timestamp on CLOCK_MONOTONIC (0 stays 0: "not recorded"). */
static uint64_t ts(uint64_t t)
{
	return t ? t + (uint64_t)cupti_ts_offset : 0;
}

void cupti_record_reset(void)
{
	memset(calls, 0, sizeof(calls));
	memset(&cupti_counters, 0, sizeof(cupti_counters));
}

static void remember_call(const CUpti_ActivityAPI *a)
{
	struct api_call *c = &calls[a->correlationId % CUPTI_API_SLOTS];

	if (c->correlation_id == a->correlationId && c->start <= ts(a->start))
		return; /* the outer call is already there */
	*c = (struct api_call){a->correlationId, a->threadId, ts(a->start), ts(a->end)};
}

/* Fill the api_* fields of a GPU record: 1 if the call was found. */
static int join(uint32_t corr, __u64 *start, __u64 *end, __u32 *tid)
{
	const struct api_call *c = &calls[corr % CUPTI_API_SLOTS];

	if (!corr || c->correlation_id != corr) {
		atomic_fetch_add_explicit(&cupti_counters.unjoined, 1, memory_order_relaxed);
		return 0;
	}
	*start = c->start;
	*end = c->end;
	*tid = c->tid;
	return 1;
}

static void kernel(const CUpti_ActivityKernel10 *k, const struct cupti_sink *s)
{
	struct gpuext_cupti_kernel r = {
		.start = ts(k->start), .end = ts(k->end), .graph_node = k->graphNodeId,
		.correlation_id = k->correlationId, .device = k->deviceId,
		.context = k->contextId, .stream = k->streamId,
		.grid_x = (uint32_t)k->gridX, .grid_y = (uint32_t)k->gridY,
		.grid_z = (uint32_t)k->gridZ, .block_x = (uint32_t)k->blockX,
		.block_y = (uint32_t)k->blockY, .block_z = (uint32_t)k->blockZ,
		.registers = k->registersPerThread,
		.static_shared = (uint32_t)k->staticSharedMemory,
		.dynamic_shared = (uint32_t)k->dynamicSharedMemory,
		.local_per_thread = k->localMemoryPerThread,
	};
	const char *name = k->name ? k->name : "";
	size_t len = strlen(name), sfx = s->kernel_name_suffix ? strlen(s->kernel_name_suffix) : 0;

	if (sfx && len > sfx && !strcmp(name + len - sfx, s->kernel_name_suffix))
		len -= sfx;
	r.name_hash = cupti_name_hash_len(name, len);
	r.name_len = (uint32_t)len;
	if (len >= sizeof(r.name)) {
		len = sizeof(r.name) - 1;
		r.flags |= GPUEXT_CUPTI_KERNEL_NAME_TRUNCATED;
	}
	memcpy(r.name, name, len);
	if (k->graphNodeId)
		r.flags |= GPUEXT_CUPTI_KERNEL_GRAPH;
	if (k->isDeviceLaunched)
		r.flags |= GPUEXT_CUPTI_KERNEL_DEVICE_LAUNCHED;
	join(r.correlation_id, &r.api_start, &r.api_end, &r.api_tid);
	atomic_fetch_add_explicit(&cupti_counters.kernels, 1, memory_order_relaxed);
	if (s->kernel)
		s->kernel(s->arg, &r);
}

static void copy(const CUpti_ActivityMemcpy6 *m, const struct cupti_sink *s)
{
	struct gpuext_cupti_memcpy r = {
		.start = ts(m->start), .end = ts(m->end), .bytes = m->bytes,
		.graph_node = m->graphNodeId, .correlation_id = m->correlationId,
		.device = m->deviceId, .context = m->contextId, .stream = m->streamId,
		.kind = m->copyKind, .src_kind = m->srcKind, .dst_kind = m->dstKind,
		.flags = (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? GPUEXT_CUPTI_COPY_ASYNC : 0,
	};
	join(r.correlation_id, &r.api_start, &r.api_end, &r.api_tid);
	atomic_fetch_add_explicit(&cupti_counters.memcpys, 1, memory_order_relaxed);
	if (s->memcpy)
		s->memcpy(s->arg, &r);
}

static void set(const CUpti_ActivityMemset4 *m, const struct cupti_sink *s)
{
	struct gpuext_cupti_memcpy r = {
		.start = ts(m->start), .end = ts(m->end), .bytes = m->bytes,
		.graph_node = m->graphNodeId, .correlation_id = m->correlationId,
		.device = m->deviceId, .context = m->contextId, .stream = m->streamId,
		.kind = GPUEXT_CUPTI_MEMSET, .dst_kind = m->memoryKind, .value = m->value,
		.flags = (m->flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) ? GPUEXT_CUPTI_COPY_ASYNC : 0,
	};
	join(r.correlation_id, &r.api_start, &r.api_end, &r.api_tid);
	atomic_fetch_add_explicit(&cupti_counters.memsets, 1, memory_order_relaxed);
	if (s->memcpy)
		s->memcpy(s->arg, &r);
}

static void uvm(const CUpti_ActivityUnifiedMemoryCounter3 *u, const struct cupti_sink *s)
{
	struct gpuext_cupti_uvm r = {
		.start = ts(u->start), .end = ts(u->end ? u->end : u->start), .address = u->address,
		.count = 1, .kind = u->counterKind, .src = u->srcId, .dst = u->dstId,
		.stream = u->streamId, .flags = u->flags, .pid = u->processId,
	};

	switch (u->counterKind) {
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT:
		r.src = r.dst = GPUEXT_CUPTI_UVM_CPU;
		break;
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT:
		r.count = u->value;
		break;
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD:
		r.bytes = u->value;
		r.src = GPUEXT_CUPTI_UVM_CPU;
		break;
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH:
		r.bytes = u->value;
		r.dst = GPUEXT_CUPTI_UVM_CPU;
		break;
	default: /* DTOD, thrashing, remote map: CUPTI's value is bytes */
		r.bytes = u->value;
		break;
	}
	atomic_fetch_add_explicit(&cupti_counters.uvm, 1, memory_order_relaxed);
	if (s->uvm)
		s->uvm(s->arg, &r);
}

void cupti_record_deliver(const CUpti_Activity *rec, const struct cupti_sink *s, int pass)
{
	int is_call = rec->kind == CUPTI_ACTIVITY_KIND_DRIVER ||
		      rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
	if (is_call != (pass == 0))
		return;
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL:
		kernel((const CUpti_ActivityKernel10 *)rec, s);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		copy((const CUpti_ActivityMemcpy6 *)rec, s);
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		set((const CUpti_ActivityMemset4 *)rec, s);
		break;
	case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER:
		uvm((const CUpti_ActivityUnifiedMemoryCounter3 *)rec, s);
		break;
	case CUPTI_ACTIVITY_KIND_DRIVER:
	case CUPTI_ACTIVITY_KIND_RUNTIME:
		remember_call((const CUpti_ActivityAPI *)rec);
		atomic_fetch_add_explicit(&cupti_counters.api, 1, memory_order_relaxed);
		break;
	default:
		atomic_fetch_add_explicit(&cupti_counters.other, 1, memory_order_relaxed);
		break;
	}
}
