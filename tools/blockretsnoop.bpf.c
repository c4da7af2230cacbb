/* SPDX-License-Identifier: MIT */
/*
 * blockretsnoop: a record for every block of every kernel launch, sent to a
 * ring buffer when the block's last warp exits: when it started, when it
 * ended, where it ran, in which launch (the agent's launch table names the
 * launch's kernel and grid).  A block probe (gpu/block_exit): the block's record
 * (struct gpuext_block_ctx) has the times, its SM and size; the program
 * runs once per block, so the only global traffic is the record itself.
 *
 * Every record crosses into pinned host memory through one ring buffer
 * whose reservation is an atomic on one word shared by the whole GPU:
 * grids of many short blocks (vecadd -n 16M: 65,536 blocks in 65 us) make
 * records faster than that word and PCIe take them.  kernelretsnoop keeps
 * the per-block view cheap there (aggregated on the device).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "blockretsnoop.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

/* The agent's row per launch (kernel, grid, block), joined by id in the CLI. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} gpuext_launches SEC(".maps");

SEC("gpu/block_exit/*")
int brs_block(struct gpuext_block_ctx *ctx)
{
	struct brs_event *ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev)
		return 0;
	ev->start_ns = ctx->start_ns;
	ev->end_ns = ctx->end_ns;
	ev->block[0] = bpf_gpu_block_idx(0);
	ev->block[1] = bpf_gpu_block_idx(1);
	ev->block[2] = bpf_gpu_block_idx(2);
	ev->sm = ctx->sm;
	ev->threads = ctx->exit_threads;
	ev->pad = 0;
	ev->launch = bpf_gpu_launch_id();
	bpf_ringbuf_submit(ev, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
