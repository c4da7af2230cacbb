/* SPDX-License-Identifier: MIT */
/*
 * agent_main.c - attaching to the session named by GPUEXT_SESSION: open it,
 * verify every program itself (device profile for GPU programs), keep the GPU
 * programs for instrumentation.  Any failure leaves the agent passing
 * everything through, with one notice.
 */
#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "agent_impl.h"
#include "bpf/verifier.h"

struct session *agent_session;
struct prog *agent_gpu_progs[64];
size_t agent_gpu_prog_cnt;

void agent_demangle_base(const char *m, char *out, size_t len)
{
	size_t o = 0;
	out[0] = 0;
	if (strncmp(m, "_Z", 2)) {
		snprintf(out, len, "%s", m);
		return;
	}
	m += 2;
	int nested = *m == 'N';
	if (nested) {
		m++;
		while (*m == 'K' || *m == 'V' || *m == 'r')
			m++; /* cv-qualifiers of a member function */
	}
	do {
		if (!isdigit((unsigned char)*m))
			break;
		char *end;
		unsigned long n = strtoul(m, &end, 10);
		if (strlen(end) < n)
			break;
		if (o && o + 2 < len) {
			out[o++] = ':';
			out[o++] = ':';
		}
		for (unsigned long i = 0; i < n && o + 1 < len; i++)
			out[o++] = end[i];
		out[o] = 0;
		m = end + n;
	} while (nested && *m != 'E');
	if (!o)
		snprintf(out, len, "%s", m - 2); /* not understood: the mangled name */
}

int agent_kernel_targeted_by(const struct prog *p, const char *mangled, const char *base)
{
	return p->target && (!fnmatch(p->target, mangled, 0) || !fnmatch(p->target, base, 0));
}

int agent_kernel_targeted(const char *mangled)
{
	char base[256];
	agent_demangle_base(mangled, base, sizeof(base));
	for (size_t i = 0; i < agent_gpu_prog_cnt; i++)
		if (agent_kernel_targeted_by(agent_gpu_progs[i], mangled, base))
			return 1;
	return 0;
}

__attribute__((constructor(102))) static void agent_attach(void)
{
	const char *name = getenv(SESSION_ENV);
	if (!name || !*name)
		return; /* preloaded without `gpuext run`: pass everything through */
	struct session *s;
	struct err e = {{0}};
	if (session_open(name, &s, &e)) {
		agent_notice("agent disabled, kernels run unchanged: %s", e.msg);
		return;
	}
	static char log[8192];
	for (size_t i = 0; i < s->obj->prog_cnt; i++) {
		struct prog *p = s->obj->progs[i];
		struct vfy_opts vo = {.profile = VFY_PROFILE_AUTO, .log_level = VFY_LOG_OFF,
				      .log_buf = log, .log_size = sizeof(log)};
		if (verifier_check(p, &vo, NULL, &e)) {
			agent_session = s;
			session_count(s, SESSION_ERRORS);
			agent_notice("program '%s' (%s) rejected, not attached: %s", p->name,
				     p->section, e.msg);
			continue;
		}
		if (prog_type_is_gpu(p->type) &&
		    agent_gpu_prog_cnt < sizeof(agent_gpu_progs) / sizeof(agent_gpu_progs[0]))
			agent_gpu_progs[agent_gpu_prog_cnt++] = p;
	}
	agent_session = s;
	s->hdr->status.agent_pid = (uint32_t)getpid();
	__atomic_store_n(&s->hdr->status.attached, 1, __ATOMIC_RELEASE);
}
