/* SPDX-License-Identifier: MIT */
/*
 * agent_sched.c - the scheduling class of this process, applied to its GPU
 * channel groups as libcuda creates them.
 *
 * Every CUDA context runs its work in channel groups (TSGs) that the GPU's
 * scheduler time-slices against other processes' groups.  libcuda
 * allocates them with RM ioctls on /dev/nvidiactl; the agent interposes
 * libc's ioctl, recognises a successful channel-group allocation (nvrm.h)
 * and, with the group's own client handle, asks the driver for this
 * process's timeslice and interleave level: what gpu_ext sets at task init
 * inside a patched driver, reached here through the stock driver's controls.
 *
 * Settings (a session's policy sets them through `gpuext run --session`,
 * src/policy/sched.h; they can also be given by hand):
 *   GPUEXT_SCHED_TIMESLICE_US=N    timeslice of every channel group, us
 *   GPUEXT_SCHED_INTERLEAVE=L      low | medium | high (privileged clients)
 *   GPUEXT_SCHED_STREAM_PRIORITY=N 0..5: streams the application creates get
 *                                  priority -N (clamped by the driver)
 * None set: the wrapper is one branch on top of the real ioctl.  A
 * control the driver refuses is named once on stderr with its NV status;
 * the application runs on with the driver's defaults (fail-open).
 *
 * In a scheduling session whose policy has gpu_launch_admit, every launch
 * asks it first (agent_sched_admit, bounded waits) and is counted in flight
 * until a host function queued after it runs.  Without one the launch
 * wrappers test one pointer.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent.h"
#include "agent_impl.h"
#include "cuda/nvrm.h"
#include "policy/sched.h"

static uint64_t sched_timeslice_us;  /* 0: leave the driver's */
static int sched_interleave = -1;    /* -1: leave the driver's */
static int sched_active;
static nvrm_ioctl_fn sched_real_ioctl;
static int sched_stream_prio;        /* 0: leave the driver's */
struct sched_member *agent_sched_member; /* non-NULL: launches go through admission */

/* A decimal environment setting in 1..max, or 0 (unset, or ignored with a notice). */
static uint64_t sched_env_us(const char *name, uint64_t max)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return 0;
	char *end;
	unsigned long long n = strtoull(v, &end, 10);
	if (*end || n < 1 || n > max) {
		agent_notice("%s='%s' ignored (1..%llu us)", name, v, (unsigned long long)max);
		return 0;
	}
	return n;
}

__attribute__((constructor(101))) static void sched_init(void)
{
	const char *il = getenv("GPUEXT_SCHED_INTERLEAVE");

	sched_timeslice_us = sched_env_us("GPUEXT_SCHED_TIMESLICE_US", 10000000);
	if (il && *il) {
		static const char *levels[] = {"low", "medium", "high"};
		for (int i = 0; i < 3; i++)
			if (!strcmp(il, levels[i]))
				sched_interleave = i;
		if (sched_interleave < 0)
			agent_notice("GPUEXT_SCHED_INTERLEAVE='%s' ignored (low, medium or high)", il);
	}
	sched_active = sched_timeslice_us || sched_interleave >= 0;
	sched_stream_prio = (int)sched_env_us(SCHED_STREAM_PRIO_ENV, 5);
}

/* The scheduling session of this tenant (after sched_init: its settings). */
__attribute__((constructor(102))) static void sched_attach_session(void)
{
	const char *name = getenv(SCHED_SESSION_ENV), *tenant = getenv(SCHED_TENANT_ENV);
	struct sched_member *m;
	struct err e = {{0}};

	if (!name || !*name || !tenant)
		return;
	if (sched_attach(name, atoi(tenant), &m, &e)) {
		agent_notice("sched: launches run without admission: %s", e.msg);
		return;
	}
	if (!sched_admitting(m)) {
		sched_detach(m);
		return;
	}
	__atomic_store_n(&agent_sched_member, m, __ATOMIC_RELEASE);
}

/* ---- launch admission ---------------------------------------------------- */

typedef CUresult (*host_func_fn)(CUstream, CUhostFn, void *);
static host_func_fn real_host_func, real_host_func_ptsz;

void agent_sched_admit(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		       unsigned bz)
{
	const uint32_t grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
	sched_admit(agent_sched_member, grid, block);
}

static void CUDA_CB sched_completed(void *arg)
{
	sched_launch_completed(arg);
}

void agent_sched_queued(CUstream s, int ptsz)
{
	static int failed;
	host_func_fn *real = ptsz ? &real_host_func_ptsz : &real_host_func;
	struct sched_member *m = agent_sched_member;

	if (!*real)
		*(void **)real = agent_real_driver(ptsz ? "cuLaunchHostFunc_ptsz" : "cuLaunchHostFunc");
	sched_launch_queued(m);
	CUresult r = *real ? (*real)(s, sched_completed, m) : CUDA_ERROR_NOT_FOUND;
	if (r != CUDA_SUCCESS) {
		sched_launch_completed(m);
		if (!__atomic_exchange_n(&failed, 1, __ATOMIC_RELAXED))
			agent_notice("sched: cuLaunchHostFunc failed (%d): launches are not counted "
				     "in flight", (int)r);
	}
}

/* ---- stream priority ------------------------------------------------------ */

typedef CUresult (*stream_create_fn)(CUstream *, unsigned);
typedef CUresult (*stream_create_prio_fn)(CUstream *, unsigned, int);
static stream_create_fn real_stream_create;
static stream_create_prio_fn real_stream_create_prio;

AGENT_WRAP(agent_w_stream_create, "cuStreamCreate", (CUstream * s, unsigned flags))
CUresult agent_w_stream_create(CUstream *s, unsigned flags)
{
	AGENT_REAL(real_stream_create, "cuStreamCreate");
	if (sched_stream_prio) {
		if (!real_stream_create_prio)
			*(void **)&real_stream_create_prio =
				agent_real_driver("cuStreamCreateWithPriority");
		if (real_stream_create_prio)
			return real_stream_create_prio(s, flags, -sched_stream_prio);
	}
	return real_stream_create(s, flags);
}

AGENT_WRAP(agent_w_stream_create_prio, "cuStreamCreateWithPriority",
	   (CUstream * s, unsigned flags, int prio))
CUresult agent_w_stream_create_prio(CUstream *s, unsigned flags, int prio)
{
	AGENT_REAL(real_stream_create_prio, "cuStreamCreateWithPriority");
	/* the tenant's priority unless the application asked for a more urgent one */
	return real_stream_create_prio(s, flags,
				       sched_stream_prio && -sched_stream_prio < prio
					       ? -sched_stream_prio : prio);
}

static const struct agent_hooked sched_hooked[] = {
	{"cuStreamCreate", (void *)agent_w_stream_create, (void **)&real_stream_create},
	{"cuStreamCreateWithPriority", (void *)agent_w_stream_create_prio,
	 (void **)&real_stream_create_prio},
};

static void *sched_resolve(const char *name, void *real)
{
	const struct agent_hooked *h =
		agent_hooked_find(sched_hooked, sizeof(sched_hooked) / sizeof(sched_hooked[0]), name);
	return h ? agent_hooked_take(h, real) : NULL;
}

__attribute__((constructor(101))) static void sched_hook_init(void)
{
	agent_hook_register(sched_resolve);
}

/* Report a control's outcome: failures once per kind, successes when verbose. */
static void sched_report(const char *what, int status, const struct nvrm_object *tsg,
			 int *failed_once)
{
	char buf[64];
	const char *name = nvrm_status_name(status, buf, sizeof(buf));
	if (status) {
		if (!__atomic_exchange_n(failed_once, 1, __ATOMIC_RELAXED))
			agent_notice("sched: the driver refused %s on channel group 0x%x: %s; "
				     "the process keeps the driver's default",
				     what, tsg->handle, name);
	} else if (getenv("GPUEXT_AGENT_VERBOSE")) {
		agent_notice("sched: channel group 0x%x: %s (%s)", tsg->handle, what, name);
	}
}

static void sched_apply(int fd, const struct nvrm_object *tsg)
{
	static int timeslice_failed, interleave_failed;
	char what[96];

	if (sched_timeslice_us) {
		uint64_t old = 0, now = 0;
		if (nvrm_tsg_get_timeslice(sched_real_ioctl, fd, tsg, &old))
			old = 0;
		int st = nvrm_tsg_set_timeslice(sched_real_ioctl, fd, tsg, sched_timeslice_us);
		if (nvrm_tsg_get_timeslice(sched_real_ioctl, fd, tsg, &now))
			now = 0;
		snprintf(what, sizeof(what), "timeslice %llu -> %llu us (reads back %llu)",
			 (unsigned long long)old, (unsigned long long)sched_timeslice_us,
			 (unsigned long long)now);
		sched_report(what, st, tsg, &timeslice_failed);
	}
	if (sched_interleave >= 0) {
		snprintf(what, sizeof(what), "interleave level %d", sched_interleave);
		sched_report(what, nvrm_tsg_set_interleave(sched_real_ioctl, fd, tsg,
							   (enum nvrm_interleave)sched_interleave),
			     tsg, &interleave_failed);
	}
}

/* Where no libc ioctl follows the agent's (never seen; dlsym can fail). */
static int sched_syscall_ioctl(int fd, unsigned long request, void *arg)
{
	return (int)syscall(SYS_ioctl, fd, request, arg);
}

AGENT_EXPORT int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);

	nvrm_ioctl_fn real = __atomic_load_n(&sched_real_ioctl, __ATOMIC_ACQUIRE);
	if (!real) {
		*(void **)&real = dlsym(RTLD_NEXT, "ioctl");
		if (!real)
			real = sched_syscall_ioctl;
		__atomic_store_n(&sched_real_ioctl, real, __ATOMIC_RELEASE);
	}
	int rc = real(fd, request, arg);
	struct nvrm_object o;
	if (sched_active && rc == 0 && nvrm_decode_alloc(request, arg, &o) &&
	    o.klass == NVRM_CLASS_CHANNEL_GROUP)
		sched_apply(fd, &o);
	return rc;
}
