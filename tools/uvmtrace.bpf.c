/* SPDX-License-Identifier: MIT */
/*
 * uvmtrace: unified-memory page faults (CPU and GPU) and migrations (host
 * to device, device to host) from CUPTI, per 2 MiB block: counts and bytes
 * in the hash `blocks` (an event is counted in the block of its first
 * address: the driver migrates within one 2 MiB VA block), and every event
 * in the ring buffer for the CLI's timeline (src/cli/tool_uvmtrace.c).
 * CUPTI's records arrive on one thread at a time, so plain adds suffice.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "uvmtrace.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, UT_RINGBUF_BYTES);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UT_MAX_BLOCKS);
	__type(key, __u64);
	__type(value, struct ut_block);
} blocks SEC(".maps");

SEC("cupti/uvm")
int ut_event(const struct gpuext_cupti_uvm *u)
{
	__u64 key = u->address >> UT_BLOCK_SHIFT;
	struct ut_block *b = bpf_map_lookup_elem(&blocks, &key);

	if (!b) {
		struct ut_block zero = {.first_ns = u->start};
		bpf_map_update_elem(&blocks, &key, &zero, BPF_NOEXIST);
		b = bpf_map_lookup_elem(&blocks, &key);
	}
	if (b) {
		switch (u->kind) {
		case GPUEXT_CUPTI_UVM_CPU_FAULT: b->cpu_faults++; break;
		case GPUEXT_CUPTI_UVM_GPU_FAULT: b->gpu_faults++; break;
		case GPUEXT_CUPTI_UVM_HTOD: b->htod_bytes += u->bytes; b->htod_count++; break;
		case GPUEXT_CUPTI_UVM_DTOH: b->dtoh_bytes += u->bytes; b->dtoh_count++; break;
		}
		if (u->start < b->first_ns)
			b->first_ns = u->start;
		if (u->end > b->last_ns)
			b->last_ns = u->end;
	}
	struct gpuext_cupti_uvm *rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (rec) {
		__builtin_memcpy(rec, u, sizeof(*rec));
		bpf_ringbuf_submit(rec, 0);
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
