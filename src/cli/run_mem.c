/* SPDX-License-Identifier: MIT */
/*
 * run_mem.c - the memory-policy part of `gpuext run`: --mem-budget SIZE
 * and --mem-policy FILE.bpf.o (repeatable: the objects make one policy, an
 * eviction and a prefetch one).  The policy is opened and verified here
 * first, for an error that names the file before CMD starts; the agent
 * opens and verifies it again itself (agent_mem_env.h: the environment
 * that carries the settings, the file the statistics come back in).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent_mem_env.h"
#include "cli.h"
#include "policy/mem.h"
#include "run.h"

int run_mem_option(struct run_mem *m, const char *opt, const char *val)
{
	if (!strcmp(opt, "--mem-budget"))
		return cli_parse_bytes("run", opt, val, &m->budget);
	if (!strcmp(opt, "--mem-signal")) {
		if (strcmp(val, "device") && strcmp(val, "cupti")) {
			cli_error("run: --mem-signal %s: device or cupti", val);
			return 2;
		}
		m->cupti_only = !strcmp(val, "cupti");
		return 0;
	}
	if (!strcmp(opt, "--mem-trace")) {
		/* the agent runs in CMD's directory: an absolute path */
		char cwd[PATH_MAX];
		if (val[0] == '/' || !getcwd(cwd, sizeof(cwd)))
			snprintf(m->trace_path, sizeof(m->trace_path), "%s", val);
		else if ((size_t)snprintf(m->trace_path, sizeof(m->trace_path), "%s/%s", cwd, val) >=
			 sizeof(m->trace_path)) {
			cli_error("run: --mem-trace %s: path too long", val);
			return 2;
		}
		return 0;
	}
	char abs[PATH_MAX];
	if (!realpath(val, abs)) {
		cli_error("run: --mem-policy %s: %s", val, strerror(errno));
		return 2;
	}
	size_t used = strlen(m->policies), n = strlen(abs);
	if (used + n + 2 > sizeof(m->policies)) {
		cli_error("run: --mem-policy %s: too many policy objects", val);
		return 2;
	}
	if (used)
		m->policies[used++] = ',';
	memcpy(m->policies + used, abs, n + 1);
	return 0;
}

int run_mem_prepare(struct run_mem *m)
{
	struct mem_policy *pol = NULL;
	struct err e = {{0}};

	if ((m->policies[0] || m->trace_path[0] || m->cupti_only) && !m->budget) {
		cli_error("run: --mem-policy, --mem-signal and --mem-trace need --mem-budget SIZE");
		return 2;
	}
	if (!m->budget)
		return 0;
	if (m->budget >> MEM_BLOCK_SHIFT == 0) {
		cli_error("run: --mem-budget: %llu bytes is below one 2 MiB block",
			  (unsigned long long)m->budget);
		return 2;
	}
	if (m->policies[0] && mem_policy_open(m->policies, &pol, &e)) {
		cli_error("run: --mem-policy: %s", e.msg);
		return 1;
	}
	mem_policy_free(pol);
	const char *tmp = getenv("TMPDIR");
	snprintf(m->stats_path, sizeof(m->stats_path), "%s/gpuext-mem-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemp(m->stats_path);
	if (fd < 0) {
		cli_error("run: %s: %s", m->stats_path, strerror(errno));
		m->stats_path[0] = 0;
		return 1;
	}
	close(fd);
	return 0;
}

void run_mem_env(const struct run_mem *m)
{
	char v[32];

	if (!m->budget)
		return;
	snprintf(v, sizeof(v), "%llu", (unsigned long long)m->budget);
	setenv(AGENT_MEM_BUDGET_ENV, v, 1);
	setenv(AGENT_MEM_POLICY_ENV, m->policies, 1);
	setenv(AGENT_MEM_STATS_ENV, m->stats_path, 1);
	if (m->trace_path[0])
		setenv(AGENT_MEM_TRACE_ENV, m->trace_path, 1);
	/* Faults reach the policy when CUPTI hands its buffer over: sooner
	 * than its default 100 ms, so that evictions and prefetches keep up
	 * with the kernels. */
	setenv("GPUEXT_CUPTI_FLUSH_MS", "10", 0);
}

int run_mem_wants_signal(const struct run_mem *m)
{
	return m->budget && !m->cupti_only;
}

int run_mem_signal_summary(FILE *out, const struct object *obj, const struct session_status *st,
			   int json)
{
	return 0;
}

/* The policy as the summary names it: file names without directories. */
static void run_mem_policy_name(const struct run_mem *m, char *out, size_t len)
{
	size_t o = 0;
	out[0] = 0;
	if (!m->policies[0]) {
		snprintf(out, len, "default (lru + tree prefetch)");
		return;
	}
	for (const char *p = m->policies; *p && o + 1 < len;) {
		size_t n = strcspn(p, ",");
		const char *base = p;
		for (const char *q = p; q < p + n; q++)
			if (*q == '/')
				base = q + 1;
		o += (size_t)snprintf(out + o, len - o, "%s%.*s", o ? "+" : "",
				      (int)(p + n - base), base);
		if (o >= len)
			break;
		p += n + (p[n] == ',');
	}
}

void run_mem_report(struct run_mem *m, FILE *out, int json)
{
	struct agent_mem_stats st = {0};
	char line[128], name[64], policy[256];
	unsigned long long v;
	int got = 0;

	if (!m->budget || !m->stats_path[0])
		return;
	FILE *f = fopen(m->stats_path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %llu", name, &v) != 2)
			continue;
#define RUN_MEM_READ(x)                 \
	if (!strcmp(name, #x)) {        \
		st.x = v;               \
		got = 1;                \
	}
		AGENT_MEM_STATS(RUN_MEM_READ)
#undef RUN_MEM_READ
	}
	if (f)
		fclose(f);
	unlink(m->stats_path);
	m->stats_path[0] = 0;
	run_mem_policy_name(m, policy, sizeof(policy));
	if (!got) {
		cli_error("run: memory policy: no statistics from the agent (CMD used no CUDA, "
			  "or the agent did not load)");
		return;
	}
	if (json) {
		fputs("{\"mem\":{\"policy\":", out);
		cli_json_str(out, policy);
#define RUN_MEM_JSON(x) fprintf(out, ",\"" #x "\":%llu", (unsigned long long)st.x);
		AGENT_MEM_STATS(RUN_MEM_JSON)
#undef RUN_MEM_JSON
		fputs("}}\n", out);
		return;
	}
	double mib = 1.0 / (1 << 20);
	fprintf(out,
		"memory policy %s: budget %.0f MiB (%llu blocks), peak resident %llu blocks\n"
		"  managed: %llu allocations, %.1f MiB\n"
		"  faults seen %llu (%llu records); migrated to GPU %.1f MiB (%llu records), "
		"to CPU %.1f MiB (%llu; %.1f MiB of it for the CPU's accesses); outside managed "
		"memory %llu\n"
		"  batches %llu, evictions %llu blocks, activations %llu\n"
		"  prefetches to GPU %llu (%.1f MiB), to CPU %llu (%.1f MiB)\n"
		"  clamped %llu, policy errors %llu, driver errors %llu\n",
		policy, (double)st.budget * mib, (unsigned long long)st.capacity_blocks,
		(unsigned long long)st.peak_resident_blocks, (unsigned long long)st.allocs,
		(double)st.alloc_bytes * mib, (unsigned long long)st.faults,
		(unsigned long long)st.fault_records, (double)st.htod_bytes * mib,
		(unsigned long long)st.htod_records, (double)st.dtoh_bytes * mib,
		(unsigned long long)st.dtoh_records, (double)st.dtoh_cpu_bytes * mib,
		(unsigned long long)st.untracked,
		(unsigned long long)st.batches, (unsigned long long)st.evictions,
		(unsigned long long)st.activations, (unsigned long long)st.prefetch_calls_gpu,
		(double)st.bytes_to_gpu * mib, (unsigned long long)st.prefetch_calls_cpu,
		(double)st.bytes_to_cpu * mib, (unsigned long long)st.clamped,
		(unsigned long long)st.policy_errors, (unsigned long long)st.driver_errors);
	if (st.signal_snapshots)
		fprintf(out,
			"  device signal: %llu snapshots, %llu pages touched, %llu of them not "
			"resident (serviced as faults), %llu managed blocks outside its window\n",
			(unsigned long long)st.signal_snapshots, (unsigned long long)st.signal_pages,
			(unsigned long long)st.signal_faults, (unsigned long long)st.untracked_blocks);
	else
		fprintf(out, "  device signal: none (CUPTI's records drove the policy)\n");
	fprintf(out,
		"  whole blocks prefetched %llu; time: signal copies %.1f ms, runtime %.1f ms "
		"(of it driver hint calls %.1f ms)\n",
		(unsigned long long)st.block_prefetches, (double)st.snapshot_ns * 1e-6,
		(double)st.service_ns * 1e-6, (double)st.hint_ns * 1e-6);
}

void run_mem_discard(struct run_mem *m)
{
	if (m->stats_path[0])
		unlink(m->stats_path);
	m->stats_path[0] = 0;
}
