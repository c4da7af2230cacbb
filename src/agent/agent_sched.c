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
 *   GPUEXT_SCHED_YIELD_US=N        every N us, preempt this process's
 *                                  channel groups (a short timeslice made
 *                                  from user space: the other processes'
 *                                  work gets the GPU at least that often)
 * None set: the wrapper is one branch on top of the real ioctl.  A
 * control the driver refuses is named once on stderr with its NV status;
 * the application runs on with the driver's defaults (fail-open).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "agent_impl.h"
#include "cuda/nvrm.h"

static uint64_t sched_timeslice_us;  /* 0: leave the driver's */
static int sched_interleave = -1;    /* -1: leave the driver's */
static uint64_t sched_yield_us;      /* 0: no yield thread */
static int sched_active;
static nvrm_ioctl_fn sched_real_ioctl;

/* This process's channel groups, for the yield thread: appended under the
 * lock, read by the thread after loading the count (entries are written
 * before the count is published and never change). */
static struct sched_tsg {
	int fd;
	struct nvrm_object obj;
} sched_tsgs[64];
static unsigned sched_tsg_cnt;
static pthread_mutex_t sched_lock = PTHREAD_MUTEX_INITIALIZER;

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
	sched_yield_us = sched_env_us("GPUEXT_SCHED_YIELD_US", 1000000);
	if (il && *il) {
		static const char *levels[] = {"low", "medium", "high"};
		for (int i = 0; i < 3; i++)
			if (!strcmp(il, levels[i]))
				sched_interleave = i;
		if (sched_interleave < 0)
			agent_notice("GPUEXT_SCHED_INTERLEAVE='%s' ignored (low, medium or high)", il);
	}
	sched_active = sched_timeslice_us || sched_interleave >= 0 || sched_yield_us;
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

/* The yield thread: every sched_yield_us, preempt each channel group of
 * the process and wait for the preemption (the driver allows one
 * outstanding preempt per group); the driver then schedules the next
 * runnable group, and this process's work resumes at its next turn. */
static uint64_t sched_preempts, sched_preempt_ns;

static uint64_t sched_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((destructor)) static void sched_fini(void)
{
	uint64_t n = __atomic_load_n(&sched_preempts, __ATOMIC_RELAXED);
	if (n && getenv("GPUEXT_AGENT_VERBOSE"))
		agent_notice("sched: %llu preemptions, %.1f us each on average",
			     (unsigned long long)n,
			     __atomic_load_n(&sched_preempt_ns, __ATOMIC_RELAXED) / 1e3 / n);
}

static void *sched_yield_thread(void *unused)
{
	static int preempt_failed;
	struct timespec period = {(time_t)(sched_yield_us / 1000000),
				  (long)(sched_yield_us % 1000000) * 1000};
	(void)unused;
	for (;;) {
		nanosleep(&period, NULL);
		unsigned n = __atomic_load_n(&sched_tsg_cnt, __ATOMIC_ACQUIRE);
		for (unsigned i = 0; i < n; i++) {
			uint64_t t0 = sched_now_ns();
			int st = nvrm_tsg_preempt(sched_real_ioctl, sched_tsgs[i].fd,
						  &sched_tsgs[i].obj, 1);
			if (st) {
				sched_report("preempt", st, &sched_tsgs[i].obj, &preempt_failed);
				continue;
			}
			__atomic_add_fetch(&sched_preempts, 1, __ATOMIC_RELAXED);
			__atomic_add_fetch(&sched_preempt_ns, sched_now_ns() - t0, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

/* Remember tsg for the yield thread, starting the thread with the first. */
static void sched_track(int fd, const struct nvrm_object *tsg)
{
	pthread_mutex_lock(&sched_lock);
	unsigned n = sched_tsg_cnt;
	if (n < sizeof(sched_tsgs) / sizeof(sched_tsgs[0])) {
		sched_tsgs[n] = (struct sched_tsg){fd, *tsg};
		__atomic_store_n(&sched_tsg_cnt, n + 1, __ATOMIC_RELEASE);
		pthread_t t;
		if (n == 0) {
			if (pthread_create(&t, NULL, sched_yield_thread, NULL))
				agent_notice("sched: no yield thread: pthread_create failed");
			else
				pthread_detach(t);
		}
	}
	pthread_mutex_unlock(&sched_lock);
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
	if (sched_yield_us)
		sched_track(fd, tsg);
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
