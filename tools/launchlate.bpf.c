/* SPDX-License-Identifier: MIT */
/*
 * launchlate: time from the host's cuLaunchKernel call to the kernel's first
 * block starting on the GPU.  Both ends write a timestamp record into the
 * same ring buffer: the host uprobe with bpf_ktime_get_ns (CLOCK_MONOTONIC),
 * the device entry probe of block (0,0,0) warp 0 with %globaltimer.  The CLI
 * pairs them in launch order and converts the GPU time to the host clock
 * (docs/tools.md: clock correlation and its error bound).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "launchlate.h"

struct pt_regs;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} events SEC(".maps");

SEC("uprobe/cuLaunchKernel")
int ll_launch(struct pt_regs *ctx)
{
	struct ll_event ev = {.ts = bpf_ktime_get_ns(), .kind = LL_HOST_LAUNCH};

	bpf_ringbuf_output(&events, &ev, sizeof(ev), 0);
	return 0;
}

SEC("gpu/entry/*")
int ll_first_block(void *ctx)
{
	if (bpf_gpu_block_idx(0) | bpf_gpu_block_idx(1) | bpf_gpu_block_idx(2) |
	    bpf_gpu_warp_id())
		return 0;
	struct ll_event ev = {.ts = bpf_gpu_globaltimer(), .kind = LL_DEVICE_ENTRY,
			      .sm = bpf_gpu_sm_id()};

	bpf_ringbuf_output(&events, &ev, sizeof(ev), 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
