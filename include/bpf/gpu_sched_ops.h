/* SPDX-License-Identifier: MIT */
/*
 * gpu_sched_ops.h - scheduling policies for tenants sharing one GPU
 * (struct_ops).
 *
 * A policy is a .bpf.c with programs in SEC("struct_ops/OP") sections and
 * one variable of type struct gpu_sched_ops in SEC(".struct_ops"):
 *
 *     SEC("struct_ops/gpu_task_init")
 *     int lcbe_init(struct gpu_sched_task_ctx *ctx) { ... }
 *
 *     SEC(".struct_ops")
 *     struct gpu_sched_ops lc_be = { .gpu_task_init = (void *)lcbe_init };
 *
 * The shapes follow gpu_ext's scheduling ops (task init with timeslice and
 * interleave level, bind with admission, task destroy) plus a per-launch
 * admission hook.  Tenants are processes started by
 * `gpuext run --session NAME --class lc|be --policy FILE.bpf.o -- CMD`
 * (docs/scheduling.md): every tenant of a session runs the same policy.
 *
 *   gpu_task_init   a tenant joins, before its process starts: the program
 *                   chooses its settings with the helpers below (they take
 *                   effect through the process's environment, which CUDA
 *                   reads at initialisation).  Runs in the tenant's gpuext.
 *   gpu_bind        after task_init: return 0 to admit the tenant, a
 *                   negative value to refuse it (gpuext run then exits 1
 *                   without starting CMD).
 *   gpu_task_destroy the tenant left (or was found dead).
 *   gpu_launch_admit before each kernel launch of the tenant, in its agent
 *                   (JIT): return GPU_SCHED_ADMIT, GPU_SCHED_HOLD (the agent
 *                   asks again every ~50 us) or GPU_SCHED_DELAY (wait the
 *                   time set with bpf_gpu_sched_delay).  Waiting is bounded:
 *                   a launch is never held longer than the session's hold
 *                   limit (10 ms by default), so a dead tenant or a bad
 *                   policy cannot wedge anyone.
 *
 * r1 is the op's ctx struct itself: read-only, 8-byte-aligned fields.
 * Ops left NULL: the tenant keeps the driver's defaults, launches go
 * straight through (one branch in the launch wrapper).
 */
#ifndef GPUEXT_BPF_GPU_SCHED_OPS_H
#define GPUEXT_BPF_GPU_SCHED_OPS_H

#include <linux/types.h>

#define GPU_SCHED_MAX_TENANTS 64

enum gpu_sched_class {
	GPU_SCHED_LC = 0, /* latency-critical */
	GPU_SCHED_BE = 1, /* best-effort */
	GPU_SCHED_NR_CLASSES = 2,
};

/* What gpu_launch_admit returns. */
enum gpu_sched_decision {
	GPU_SCHED_ADMIT = 0,
	GPU_SCHED_HOLD = 1,  /* ask again shortly, up to the hold limit */
	GPU_SCHED_DELAY = 2, /* wait bpf_gpu_sched_delay's time (capped), then launch */
};

/* gpu_task_init, gpu_bind, gpu_task_destroy. */
struct gpu_sched_task_ctx {
	__u32 pid;          /* the tenant's gpuext process (CMD's parent) */
	__u32 tenant;       /* slot in the session, 0..GPU_SCHED_MAX_TENANTS-1 */
	__u32 klass;        /* enum gpu_sched_class */
	__u32 nr_tenants;   /* live tenants of the session, this one included */
	__u32 nr_class[GPU_SCHED_NR_CLASSES]; /* of them, per class */
	__u32 mps;          /* 1: the session's MPS server runs (SM shares honoured) */
	__u32 pad;
	char comm[16];      /* CMD's base name, NUL-terminated */
};

/* gpu_launch_admit. */
struct gpu_sched_launch_ctx {
	__u32 tenant;
	__u32 klass;
	__u32 grid[3];      /* grid x, y, z */
	__u32 block[3];     /* block x, y, z */
	__u64 inflight[GPU_SCHED_NR_CLASSES]; /* launches in flight per class, session-wide */
	__u64 tenant_inflight; /* this tenant's */
	__u64 now_ns;       /* CLOCK_MONOTONIC, same as bpf_ktime_get_ns */
	__u64 waited_ns;    /* how long this launch has been held so far */
	__u32 pid;          /* the process launching */
	__u32 nr_tenants;
};

struct gpu_sched_ops {
	int (*gpu_task_init)(struct gpu_sched_task_ctx *ctx);
	int (*gpu_bind)(struct gpu_sched_task_ctx *ctx);
	int (*gpu_task_destroy)(struct gpu_sched_task_ctx *ctx);
	int (*gpu_launch_admit)(struct gpu_sched_launch_ctx *ctx);
};

enum gpu_sched_interleave { GPU_SCHED_IL_LOW = 0, GPU_SCHED_IL_MEDIUM = 1, GPU_SCHED_IL_HIGH = 2 };

/*
 * Helpers, ids 620..629 (scheduling policy helpers; 600..619 are the memory
 * policy's, see gpu_mem_ops.h; GPU helpers 500..599, gpuext_helpers.h).
 * Each returns 0 or a negative errno (-EINVAL: out of range, or called from
 * an op it does not belong to).  What the stock driver does with them, as
 * measured on an H200, driver 580 (bench/results/2026-11-22-h200-sched.md):
 *
 *   bpf_gpu_set_sm_share      HONOURED: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE of
 *                             the tenant's MPS client (needs the session's
 *                             MPS server; without it, ignored with a notice).
 *                             BE tenants at 25%: LC p99 88x lower.
 *   bpf_gpu_set_stream_priority  the agent creates the tenant's streams with
 *                             this priority (0 = default, higher = more
 *                             urgent; clamped to the device's range).  Orders
 *                             work inside one context (one MPS server).
 *   bpf_gpu_set_timeslice     ACCEPTED BUT NO EFFECT: the RM control on the
 *                             tenant's channel groups returns NV_OK, the value
 *                             reads back, time slicing between processes
 *                             does not change.
 *   bpf_gpu_set_interleave    ACCEPTED BUT NO EFFECT (likewise).
 *   bpf_gpu_sched_delay       gpu_launch_admit only: the wait of GPU_SCHED_DELAY.
 * Preemption is not offered: NVA06C_CTRL_CMD_PREEMPT timed out and stalled
 * the process on the H200.
 */
#ifdef __bpf__
/* gpu_task_init: percent of the SMs the tenant's kernels may use (1..100). */
static long (*bpf_gpu_set_sm_share)(void *ctx, __u32 percent) = (void *)620;
/* gpu_task_init: channel-group timeslice in us (1..10,000,000). */
static long (*bpf_gpu_set_timeslice)(void *ctx, __u64 us) = (void *)621;
/* gpu_task_init: interleave level (enum gpu_sched_interleave). */
static long (*bpf_gpu_set_interleave)(void *ctx, __u32 level) = (void *)622;
/* gpu_task_init: stream priority level, 0 (default) .. 5 (most urgent). */
static long (*bpf_gpu_set_stream_priority)(void *ctx, __u32 level) = (void *)623;
/* gpu_launch_admit: how long GPU_SCHED_DELAY waits, us (capped by the hold limit). */
static long (*bpf_gpu_sched_delay)(void *ctx, __u64 us) = (void *)624;
#endif /* __bpf__: the host includes this header for the structs only */

#endif /* GPUEXT_BPF_GPU_SCHED_OPS_H */
