/* SPDX-License-Identifier: MIT */
/*
 * run_sched.h - `gpuext run --session NAME --class lc|be [--policy FILE]`:
 * the tenant joins the scheduling session (src/policy/sched.h) before CMD
 * starts and leaves when it ends (docs/scheduling.md).
 */
#ifndef GPUEXT_CLI_RUN_SCHED_H
#define GPUEXT_CLI_RUN_SCHED_H

#include <sys/types.h>

#include "policy/sched.h"

struct run_sched {
	struct sched_opts o;       /* o.name NULL: no session */
	int class_set;
	struct sched_member *m;
};

extern const char run_sched_usage[];

/* Take option opt ("--session", "--class" or "--policy") with its value;
 * 2 after an error. */
int run_sched_option(struct run_sched *rs, const char *opt, const char *val);
/* Join before CMD (cmd: its argv[0]); 0, or the exit status to return. */
int run_sched_join(struct run_sched *rs, const char *cmd);
/* In the forked child: the tenant's environment. */
void run_sched_child(const struct run_sched *rs);
void run_sched_started(struct run_sched *rs, pid_t pid);
void run_sched_leave(struct run_sched *rs);
/* No object: CMD runs with the agent preloaded (launch admission, stream
 * priorities, channel-group settings) in the session; CMD's status. */
int run_sched_plain(struct run_sched *rs, const char *agent, char **cmd);

#endif /* GPUEXT_CLI_RUN_SCHED_H */
