/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes-s5.md: blockretsnoop's ring
 * buffer mechanics alone, per block at its last exit: reserve 48 bytes (two
 * device atomics, the header in pinned host memory) and discard them (the
 * header again, by a system-scope release store), no data written */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

SEC("gpu/block_exit/*")
int rb_discard(struct gpuext_block_ctx *ctx)
{
	void *ev = bpf_ringbuf_reserve(&events, 48, 0);
	if (ev)
		bpf_ringbuf_discard(ev, 0);
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
