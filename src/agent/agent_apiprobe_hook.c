/* SPDX-License-Identifier: MIT */
/*
 * agent_apiprobe_hook.c - the API probes inside the agent: the session's
 * uprobe/FUNC and uretprobe/FUNC programs (verified by agent_attach) are
 * attached to their driver functions, and an outer resolver of the hook
 * registry hands out a probed function's trampoline for every pointer the
 * application gets through dlsym or cuGetProcAddress (how cudart, and so
 * PyTorch, reach every driver function), wrapping the agent's own wrapper
 * where it has one.  Not yet: calls the application makes through
 * libcuda's exported symbols directly (that needs an exported trampoline
 * per driver function).  A probe on FUNC also covers FUNC_ptsz and
 * FUNC_ptds, the per-thread default stream variants cuGetProcAddress hands
 * out under the same API name.  A program that cannot be attached is
 * reported once and counted as a session error; the others still run.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "agent_impl.h"
#include "apiprobe.h"

static void *apiprobe_resolve(const char *name, void *real)
{
	return apiprobe_has(name) ? apiprobe_wrap(name, real) : NULL;
}

/* After agent_attach (constructor 102) has verified the programs. */
__attribute__((constructor(103))) static void apiprobe_agent_init(void)
{
	struct session *s = agent_session;
	int attached = 0;

	const char *kernel = getenv(SESSION_KERNEL_UPROBES_ENV);
	if (kernel) {
		/* `gpuext run --kernel-uprobes` runs them in the kernel and attaches
		 * while this process is stopped, its libraries mapped, main not run. */
		if (!strcmp(kernel, SESSION_KERNEL_UPROBES_STOP)) {
			setenv(SESSION_KERNEL_UPROBES_ENV, "1", 1); /* children: no stop */
			raise(SIGSTOP);
		}
		return;
	}
	if (!s)
		return;
	for (size_t i = 0; i < s->obj->prog_cnt; i++) {
		struct prog *p = s->obj->progs[i];
		struct err e = {{0}};
		if ((p->type != PROG_TYPE_UPROBE && p->type != PROG_TYPE_URETPROBE) ||
		    !p->verified || strpbrk(p->target, "/:"))
			continue; /* not ours, rejected (already reported), or a kernel uprobe */
		static const char *const variants[] = {"", "_ptsz", "_ptds"};
		int ok = 1;
		for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]) && ok; v++) {
			char name[APIPROBE_NAME_MAX + 8];
			snprintf(name, sizeof(name), "%s%s", p->target, variants[v]);
			if (apiprobe_attach(name, p, &e)) {
				session_count(s, SESSION_ERRORS);
				agent_notice("program '%s' (%s) not attached: %s", p->name,
					     p->section, e.msg);
				ok = 0;
			}
		}
		attached += ok;
	}
	if (attached && agent_hook_register_outer(apiprobe_resolve))
		agent_notice("API probes disabled: too many hook resolvers");
}
