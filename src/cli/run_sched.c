/* SPDX-License-Identifier: MIT */
/*
 * run_sched.c - the scheduling-session part of `gpuext run`: options,
 * joining before CMD starts (the settings the policy's gpu_task_init chose
 * go into CMD's environment, which CUDA reads at initialisation), leaving
 * after it ends, and the run of CMD when there is no object to load.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "run_sched.h"

const char run_sched_usage[] =
	"--session NAME joins the scheduling session NAME (created by its first\n"
	"tenant, with an MPS server of its own; removed when its last tenant ends):\n"
	"--class lc|be (default be) is the tenant's class, --policy FILE.bpf.o the\n"
	"session's gpu_sched_ops policy (the first tenant's counts; shipped ones in\n"
	"policies/sched_*.bpf.c).  Without FILE.bpf.o or --tool, CMD runs with the\n"
	"agent for the policy alone.  docs/scheduling.md.\n";

static void run_sched_notice(const char *msg)
{
	fprintf(stderr, "gpuext: sched: %s\n", msg);
}

int run_sched_option(struct run_sched *rs, const char *opt, const char *v)
{
	if (!strcmp(opt, "--session")) {
		rs->o.name = v;
	} else if (!strcmp(opt, "--policy")) {
		rs->o.policy = v;
	} else if (!strcmp(v, "lc") || !strcmp(v, "be")) {
		rs->o.klass = v[0] == 'l' ? GPU_SCHED_LC : GPU_SCHED_BE;
		rs->class_set = 1;
	} else {
		cli_error("run: --class '%s': lc or be", v);
		return 2;
	}
	return 0;
}

int run_sched_join(struct run_sched *rs, const char *cmd)
{
	struct err e = {{0}};
	if (!rs->o.name) {
		if (rs->class_set || rs->o.policy) {
			cli_error("run: --class and --policy need --session NAME");
			return 2;
		}
		return 0;
	}
	if (!rs->class_set)
		rs->o.klass = GPU_SCHED_BE;
	const char *base = strrchr(cmd, '/');
	rs->o.comm = base ? base + 1 : cmd;
	rs->o.notice = run_sched_notice;
	rs->o.no_mps = getenv("GPUEXT_SCHED_NO_MPS") != NULL;
	const char *limit = getenv("GPUEXT_SCHED_HOLD_MAX_US");
	rs->o.hold_limit_us = limit ? strtoull(limit, NULL, 10) : 0;
	if (sched_join(&rs->o, &rs->m, &e)) {
		cli_error("run: %s", e.msg);
		return 1;
	}
	if (cli_verbose) {
		const struct sched_settings *s = sched_member_settings(rs->m);
		fprintf(stderr, "gpuext: sched: session %s tenant %d (%s), mps %s, SM share %u%%, "
			"stream priority %u, timeslice %llu us, interleave %d\n", rs->o.name,
			sched_member_tenant(rs->m), rs->o.klass == GPU_SCHED_LC ? "lc" : "be",
			sched_member_mps(rs->m) ? "up" : "off", s->sm_pct, s->stream_prio,
			(unsigned long long)s->timeslice_us, s->interleave);
	}
	return 0;
}

void run_sched_child(const struct run_sched *rs)
{
	if (rs->m && sched_export_env(rs->m))
		fprintf(stderr, "gpuext: run: the session's environment: %s\n", strerror(errno));
}

void run_sched_started(struct run_sched *rs, pid_t pid)
{
	if (rs->m)
		sched_set_child(rs->m, pid);
}

void run_sched_leave(struct run_sched *rs)
{
	struct sched_stats st;
	if (rs->m && cli_verbose) {
		sched_member_stats(rs->m, &st);
		fprintf(stderr, "gpuext: sched: tenant %d: %llu launches through admission, %llu "
			"held or delayed (%.3f ms in all), %llu cut by the hold limit\n",
			sched_member_tenant(rs->m), (unsigned long long)st.launches,
			(unsigned long long)st.held, st.held_ns / 1e6,
			(unsigned long long)st.capped);
	}
	if (rs->m)
		sched_leave(rs->m);
	rs->m = NULL;
}

static pid_t run_sched_pid;

static void run_sched_forward(int sig)
{
	if (run_sched_pid > 0)
		kill(run_sched_pid, sig);
}

int run_sched_plain(struct run_sched *rs, const char *agent, char **cmd)
{
	int ret = run_sched_join(rs, cmd[0]);
	if (ret)
		return ret;
	const char *old = getenv("LD_PRELOAD");
	char *preload = malloc(strlen(agent) + (old ? strlen(old) : 0) + 2);
	if (!preload) {
		run_sched_leave(rs);
		return 1;
	}
	sprintf(preload, "%s%s%s", old && *old ? old : "", old && *old ? ":" : "", agent);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		setenv("LD_PRELOAD", preload, 1);
		run_sched_child(rs);
		execvp(cmd[0], cmd);
		fprintf(stderr, "gpuext: run: %s: %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	free(preload);
	if (pid < 0) {
		cli_error("run: fork: %s", strerror(errno));
		run_sched_leave(rs);
		return 1;
	}
	run_sched_started(rs, pid);
	run_sched_pid = pid;
	struct sigaction sa = {.sa_handler = run_sched_forward};
	int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
	for (size_t k = 0; k < sizeof(sigs) / sizeof(sigs[0]); k++)
		sigaction(sigs[k], &sa, NULL);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	run_sched_pid = 0;
	run_sched_leave(rs);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
