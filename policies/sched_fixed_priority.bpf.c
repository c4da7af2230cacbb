/* SPDX-License-Identifier: MIT */
/*
 * sched_fixed_priority: stream priority by class.  Latency-critical tenants
 * get the most urgent stream priority, best-effort ones the default; the
 * agent creates every stream of the tenant with it.  Priorities order work
 * inside one context: across processes they take effect through the
 * session's MPS server (all tenants are its clients); without MPS the
 * driver time-slices the processes and priorities do not reach across.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpu_sched_ops.h>

SEC("struct_ops/gpu_task_init")
int prio_init(struct gpu_sched_task_ctx *ctx)
{
	bpf_gpu_set_stream_priority(ctx, ctx->klass == GPU_SCHED_LC ? 5 : 0);
	return 0;
}

SEC(".struct_ops")
struct gpu_sched_ops fixed_priority = {
	.gpu_task_init = (void *)prio_init,
};
