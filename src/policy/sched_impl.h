/* SPDX-License-Identifier: MIT */
/*
 * sched_impl.h - what the scheduling files share (not sched.h's interface).
 */
#ifndef GPUEXT_POLICY_SCHED_IMPL_H
#define GPUEXT_POLICY_SCHED_IMPL_H

#include <pthread.h>

#include "sched.h"

/* The verifier's struct_ops ctx (12 u64) bounds every op's ctx. */
enum { SCHED_CTX_MAX = 96 };

/*
 * One call of an op.  The ctx comes first, so a helper given the ctx (the
 * verifier proves it is r1 unchanged) finds the call without global state.
 */
struct sched_call {
	union {
		struct gpu_sched_task_ctx task;
		struct gpu_sched_launch_ctx launch;
		uint8_t raw[SCHED_CTX_MAX];
	} ctx;
	enum sched_op op;
	struct sched_settings *set; /* task_init: what the helpers set */
	uint64_t delay_us;          /* launch_admit: bpf_gpu_sched_delay */
};

void sched_helpers_install(struct helper_table *t);

/* The session's segment (sched_session.c) and a process's handle on it. */
enum { SCHED_MPS_OFF = 0, SCHED_MPS_UP = 1, SCHED_MPS_FAILED = 2 };

struct sched_tenant {
	uint32_t used;
	uint32_t klass;
	uint32_t pid, child_pid;
	uint64_t pid_start, child_start;
	uint64_t inflight; /* atomic: launches of the tenant's processes in flight */
	struct sched_stats stats; /* atomics, written by the tenant's agents */
	struct sched_settings set;
	char comm[16];
};

struct sched_shm {
	uint32_t magic, version;
	uint32_t ready; /* set up (MPS started, policy stored) */
	uint32_t dead;  /* torn down: a joiner that still mapped it starts over */
	uint32_t mps;   /* SCHED_MPS_* */
	uint32_t pad;
	uint64_t hold_limit_us;
	pthread_mutex_t lock;
	char mps_dir[256];
	char mps_control[256];
	char policy_session[64]; /* bpf/session.h segment of the policy, "" none */
	struct sched_tenant t[GPU_SCHED_MAX_TENANTS];
};

struct sched_member {
	struct sched_shm *shm;
	char shm_name[96];
	int tenant;
	struct session *pol_session;
	struct sched_policy *pol;
	void (*notice)(const char *msg);
};

/* Under no lock: a tenant whose processes are gone has no launch in flight. */
int sched_slot_alive(const struct sched_tenant *t);

#endif /* GPUEXT_POLICY_SCHED_IMPL_H */
