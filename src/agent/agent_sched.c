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
 * Settings (until scheduling policies drive them):
 *   GPUEXT_SCHED_TIMESLICE_US=N    timeslice of every channel group, us
 *   GPUEXT_SCHED_INTERLEAVE=L      low | medium | high (privileged clients)
 * None set: the wrapper is one branch on top of the real ioctl.  A
 * control the driver refuses is named once on stderr with its NV status;
 * the application runs on with the driver's defaults (fail-open).
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

static uint64_t sched_timeslice_us;  /* 0: leave the driver's */
static int sched_interleave = -1;    /* -1: leave the driver's */
static int sched_active;
static nvrm_ioctl_fn sched_real_ioctl;

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
