/* SPDX-License-Identifier: MIT */
/*
 * sched_evil: a scheduling policy that asks for what it may not have
 * (tests/unit/test_sched.c): an SM share of 200%, a timeslice of 0, a
 * settings helper from the launch hook, an unknown decision.  Each refused
 * call returns -EINVAL and changes nothing; what the program sets after a
 * refusal (SM share 7%) shows the refusal was seen.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpu_sched_ops.h>

SEC("struct_ops/gpu_task_init")
int evil_init(struct gpu_sched_task_ctx *ctx)
{
	if (bpf_gpu_set_sm_share(ctx, 200) == -22 && bpf_gpu_set_timeslice(ctx, 0) == -22 &&
	    bpf_gpu_sched_delay(ctx, 5) == -22)
		bpf_gpu_set_sm_share(ctx, 7);
	return 0;
}

SEC("struct_ops/gpu_bind")
int evil_bind(struct gpu_sched_task_ctx *ctx)
{
	return ctx->comm[0] == 'x' ? -1 : 0; /* refuses tenants named x... */
}

SEC("struct_ops/gpu_launch_admit")
int evil_admit(struct gpu_sched_launch_ctx *ctx)
{
	if (bpf_gpu_set_sm_share(ctx, 50) != -22)
		return GPU_SCHED_HOLD;
	return 99;
}

SEC(".struct_ops")
struct gpu_sched_ops evil = {
	.gpu_task_init = (void *)evil_init,
	.gpu_bind = (void *)evil_bind,
	.gpu_launch_admit = (void *)evil_admit,
};
