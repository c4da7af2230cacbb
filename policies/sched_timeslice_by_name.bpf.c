/* SPDX-License-Identifier: MIT */
/*
 * sched_timeslice_by_name: the channel-group timeslice and interleave level
 * by process name, through the driver's RM controls on the tenant's own
 * channel groups (what gpu_ext sets at task init in a patched driver):
 * processes whose name starts with "infer" or "lc" get a long timeslice and
 * the high interleave level, every other one a short timeslice.
 *
 * NOTE: on the H200 with driver 580 the driver accepts these controls
 * (NV_OK, the value reads back) but did not honour them: time slicing
 * between processes did not change (LC p99 ~8.4 ms with or without;
 * bench/results/2026-11-22-h200-sched.md).  Shipped as the gpu_ext-shaped
 * policy and to measure again on other drivers; use sched_lc_be to protect
 * latency on this one.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpu_sched_ops.h>

SEC("struct_ops/gpu_task_init")
int tsn_init(struct gpu_sched_task_ctx *ctx)
{
	int urgent = (ctx->comm[0] == 'i' && ctx->comm[1] == 'n' && ctx->comm[2] == 'f' &&
		      ctx->comm[3] == 'e' && ctx->comm[4] == 'r') ||
		     (ctx->comm[0] == 'l' && ctx->comm[1] == 'c');

	if (urgent) {
		bpf_gpu_set_timeslice(ctx, 8000);
		bpf_gpu_set_interleave(ctx, GPU_SCHED_IL_HIGH);
	} else {
		bpf_gpu_set_timeslice(ctx, 250);
	}
	return 0;
}

SEC(".struct_ops")
struct gpu_sched_ops timeslice_by_name = {
	.gpu_task_init = (void *)tsn_init,
};
