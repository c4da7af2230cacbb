/* SPDX-License-Identifier: MIT */
/*
 * sched.h - scheduling sessions: tenants of one GPU that join one policy
 * (include/bpf/gpu_sched_ops.h, docs/scheduling.md).
 *
 * Three parts, prefixes:
 *   sched_policy_  the policy object: struct gpu_sched_ops members bound to
 *                  ops, verified with the scheduling helper profile, JIT
 *                  compiled, called (sched_policy.c, sched_helpers.c);
 *   sched_         the session: a named shared-memory segment per user and
 *                  name with the tenant table (class, pids, settings,
 *                  launches in flight), a robust process-shared lock, the
 *                  MPS server's state and the name of the policy's object
 *                  session (bpf/session.h: the policy's maps are shared by
 *                  every tenant); join and leave with liveness cleanup
 *                  (sched_session.c), the per-launch admission
 *                  (sched_admit.c);
 *   sched_mps_     the session's MPS control daemon (sched_mps.c).
 *
 * Nobody holds the policy for the others: every tenant's gpuext and agent
 * open the same object from the session and run it themselves, so killing
 * any one process leaves the rest of the session working.
 */
#ifndef GPUEXT_POLICY_SCHED_H
#define GPUEXT_POLICY_SCHED_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/err.h"
#include "bpf/gpu_sched_ops.h"
#include "bpf/helpers.h"
#include "bpf/object.h"

/* ---- policy ------------------------------------------------------------ */

enum sched_op {
	SCHED_OP_TASK_INIT,
	SCHED_OP_BIND,
	SCHED_OP_TASK_DESTROY,
	SCHED_OP_LAUNCH_ADMIT,
	SCHED_OP_CNT,
};

/* What a tenant's gpu_task_init chose; 0 / -1 fields: the driver's default. */
struct sched_settings {
	uint32_t sm_pct;        /* 1..100, 0: uncapped */
	uint32_t stream_prio;   /* 0..5, 0: default */
	int32_t interleave;     /* enum gpu_sched_interleave, -1: default */
	uint32_t pad;
	uint64_t timeslice_us;  /* 0: default */
};

struct sched_policy;
/* Bind and verify the gpu_sched_ops of obj (maps created; obj stays the
 * caller's and must outlive the policy). */
int sched_policy_from_object(struct object *obj, struct sched_policy **out, struct err *e);
/* Open path (maps private to the caller) and bind it; the policy owns the object. */
int sched_policy_open(const char *path, struct sched_policy **out, struct err *e);
void sched_policy_free(struct sched_policy *pol);
int sched_policy_has(const struct sched_policy *pol, enum sched_op op);
const char *sched_op_name(enum sched_op op);
/* task_init / bind / task_destroy: r0 as a signed value; settings updated
 * by the helpers (task_init only).  0, or -1 when the op could not run. */
int sched_policy_task(struct sched_policy *pol, enum sched_op op,
		      const struct gpu_sched_task_ctx *ctx, struct sched_settings *set,
		      int64_t *r0);
/* gpu_launch_admit: the decision (GPU_SCHED_*; anything else, or a failed
 * run, admits) and, for GPU_SCHED_DELAY, the wait in us. */
enum gpu_sched_decision sched_policy_admit(struct sched_policy *pol,
					   const struct gpu_sched_launch_ctx *ctx,
					   uint64_t *delay_us);
/* The verifier's helper profile of scheduling programs, and an op's ctx
 * size by name (0: not a scheduling op). */
const struct helper_proto *sched_policy_helper_proto(uint32_t id);
uint32_t sched_policy_ctx_size(const char *op);

/* ---- session ------------------------------------------------------------ */

/* In the environment of a tenant's process (read by the agent). */
#define SCHED_SESSION_ENV "GPUEXT_SCHED_SESSION"
#define SCHED_TENANT_ENV "GPUEXT_SCHED_TENANT"
#define SCHED_STREAM_PRIO_ENV "GPUEXT_SCHED_STREAM_PRIORITY"
enum { SCHED_HOLD_LIMIT_US = 10000, SCHED_HOLD_POLL_US = 50 };

struct sched_opts {
	const char *name;        /* session name: [A-Za-z0-9_.-], 1..40 */
	enum gpu_sched_class klass;
	const char *policy;      /* FILE.bpf.o, or NULL */
	const char *comm;        /* CMD's base name */
	const char *mps_control; /* NULL: nvidia-cuda-mps-control on PATH */
	int no_mps;              /* never start an MPS server */
	uint64_t hold_limit_us;  /* 0: SCHED_HOLD_LIMIT_US (the first joiner's counts) */
	/* One-line notices (NULL: stderr with a "gpuext: sched: " prefix). */
	void (*notice)(const char *msg);
};

struct sched_member;

/* What a tenant's agents counted (sched_member_stats). */
struct sched_stats {
	uint64_t launches;  /* through admission */
	uint64_t held;      /* of them, held or delayed */
	uint64_t held_ns;   /* time they waited */
	uint64_t capped;    /* waits cut by the hold limit */
};

/* gpuext run: join (create the session and start its MPS server when
 * first), run task_init and bind for this tenant.  A refusal by gpu_bind is
 * -EPERM with the policy's value in the message. */
int sched_join(const struct sched_opts *o, struct sched_member **out, struct err *e);
/* The tenant's process, once forked. */
void sched_set_child(struct sched_member *m, pid_t child);
/* In the child, before exec: the environment of the tenant (MPS pipe and
 * SM share, the agent's settings, the session and slot). */
int sched_export_env(const struct sched_member *m);
/* Settings and slot (for reports). */
const struct sched_settings *sched_member_settings(const struct sched_member *m);
int sched_member_tenant(const struct sched_member *m);
int sched_member_mps(const struct sched_member *m);
void sched_member_stats(const struct sched_member *m, struct sched_stats *out);
/* Leave: task_destroy, free the slot, and when no other tenant's gpuext
 * lives, wait for orphaned tenant processes (their gpuext was killed) and
 * stop the MPS server and remove the session. */
void sched_leave(struct sched_member *m);

/* The agent: the session and slot named by the environment; its
 * gpu_launch_admit, when the policy has one, JIT-compiled. */
int sched_attach(const char *shm_name, int tenant, struct sched_member **out,
		 struct err *e);
/* 1 when the member's launches go through admission. */
int sched_admitting(const struct sched_member *m);
/* Before a launch: ask the policy, hold or delay (bounded by the
 * session's hold limit); returns the nanoseconds waited. */
uint64_t sched_admit(struct sched_member *m, const uint32_t grid[3], const uint32_t block[3]);
/* A launch was queued / completed (launches in flight of this tenant). */
void sched_launch_queued(struct sched_member *m);
void sched_launch_completed(struct sched_member *m);
void sched_detach(struct sched_member *m);

/* Liveness of a process: alive and started at start_ticks (pid reuse). */
int sched_pid_alive(uint32_t pid, uint64_t start_ticks);
uint64_t sched_pid_start(uint32_t pid);

/* ---- MPS ------------------------------------------------------------ */

/* Start the control daemon (control -d) with pipe and log directories
 * under dir (created mode 0700); stop it (quit on its pipe). */
int sched_mps_start(const char *control, const char *dir, struct err *e);
int sched_mps_stop(const char *control, const char *dir, struct err *e);
/* dir/pipe and dir/log. */
void sched_mps_paths(const char *dir, char *pipe, char *log, size_t len);

#endif /* GPUEXT_POLICY_SCHED_H */
