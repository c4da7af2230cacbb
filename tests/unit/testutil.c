/* SPDX-License-Identifier: MIT */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Tests that run the agent compile at every first launch, in the launching
 * thread: the module cache (src/ptx/ptx_cache.h) of whoever runs them is left
 * alone, and what is compiled does not depend on a race with the work ahead
 * of the launch (src/agent/agent_ahead.c) or in the background (tiers,
 * src/agent/agent_tier.c).  The tests of those turn them on in their
 * commands (GPUEXT_CACHE_DISABLE=0, GPUEXT_AGENT_AHEAD=1 or empty,
 * GPUEXT_AGENT_TIER=1 or empty). */
__attribute__((constructor)) static void test_agent_lazy(void)
{
	setenv("GPUEXT_CACHE_DISABLE", "1", 1);
	setenv("GPUEXT_AGENT_AHEAD", "0", 1);
	setenv("GPUEXT_AGENT_TIER", "0", 1);
}

char *test_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = (cap + 4096) * 2;
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (got == 0)
			break;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

const char *test_cli_path(void)
{
#ifdef __SANITIZE_ADDRESS__
	return "build/san/gpuext";
#else
	return "build/gpuext";
#endif
}

char *test_run_cmd(const char *cmd, int *status)
{
	char *full = NULL, *out = NULL;
	size_t cap = 0, n = 0;
	FILE *p;
	int st;

	if (asprintf(&full, "%s 2>&1", cmd) < 0)
		return NULL;
	p = popen(full, "r");
	free(full);
	if (!p)
		return NULL;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = (cap + 4096) * 2;
			out = realloc(out, cap);
		}
		size_t got = fread(out + n, 1, cap - n - 1, p);
		n += got;
		if (got == 0)
			break;
	}
	out[n] = '\0';
	st = pclose(p);
	if (status)
		*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return out;
}
