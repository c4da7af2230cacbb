/* SPDX-License-Identifier: MIT */
/*
 * kernelretsnoop: for every warp of every kernel, when it started and when it
 * exited.  The entry probe stores %globaltimer per (block, warp); the exit
 * probe sends one record (block, warp, SM, start, end) to the ring buffer
 * and frees the slot.  The CLI prints one line per record.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "kernelretsnoop.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct krs_key);
	__type(value, __u64);
} starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

static __always_inline void krs_where(struct krs_key *k)
{
	k->block[0] = bpf_gpu_block_idx(0);
	k->block[1] = bpf_gpu_block_idx(1);
	k->block[2] = bpf_gpu_block_idx(2);
	k->warp = bpf_gpu_warp_id();
}

SEC("gpu/entry/*")
int krs_entry(void *ctx)
{
	struct krs_key k;
	__u64 now = bpf_gpu_globaltimer();

	krs_where(&k);
	bpf_map_update_elem(&starts, &k, &now, BPF_ANY);
	return 0;
}

SEC("gpu/exit/*")
int krs_exit(void *ctx)
{
	struct krs_key k;
	__u64 now = bpf_gpu_globaltimer();

	krs_where(&k);
	__u64 *start = bpf_map_lookup_elem(&starts, &k);
	if (!start)
		return 0; /* entry not seen (the slot table was full) */
	struct krs_event *ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (ev) {
		ev->start_ns = *start;
		ev->end_ns = now;
		ev->block[0] = k.block[0];
		ev->block[1] = k.block[1];
		ev->block[2] = k.block[2];
		ev->warp = k.warp;
		ev->sm = bpf_gpu_sm_id();
		ev->lanes = bpf_gpu_lane_count();
		bpf_ringbuf_submit(ev, 0);
	}
	bpf_map_delete_elem(&starts, &k);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
