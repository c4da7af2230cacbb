/* SPDX-License-Identifier: MIT */
/*
 * test_apiprobe_agent.c - API probes inside the agent: the fake driver's
 * application (tests/fakecuda/app) runs under `gpuext run` with
 * tests/progs/apiprobe_cuda.bpf.c, whose uprobe/uretprobe programs on
 * cuLaunchKernel and cuModuleGetFunction run through the agent's hook
 * registry.  The app reaches the driver through cuGetProcAddress_v2 (flags
 * 0: one launch, one cuModuleGetFunction; per-thread: two launches of
 * cuLaunchKernel_ptsz) and dlsym (one launch): 4 launches, all probed at
 * entry and return, each with grid x = 1.  Its direct calls through the
 * exported symbols are not probed yet (agent_apiprobe_hook.c).
 * The plain agent is used under ASan too (see test_agent.c).
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define APP "build/fakecuda/app"
#define AGENT "build/libgpuext-agent.so"
#define PROG TEST_BPF_DIR "/tests/progs/apiprobe_cuda.bpf.o"
#define PTX "tests/ptx_corpus/checked.compute_75.ptx"

static void test_probes_count_driver_calls(void **state)
{
	char cmd[1024];
	int status;

	snprintf(cmd, sizeof(cmd),
		 "FAKECUDA_LOG=/dev/null GPUEXT_AGENT=%s %s run %s -- %s %s vec_add reduce_atomic",
		 AGENT, test_cli_path(), PROG, APP, PTX);
	char *out = test_run_cmd(cmd, &status);
	assert_non_null(out);
	if (status != 0 || !strstr(out, "app ok"))
		fail_msg("%s: status %d:\n%s", cmd, status, out);
	assert_null(strstr(out, "gpuext: ")); /* no program refused */
	const char *m = strstr(out, "map api_calls:");
	assert_non_null(m);
	unsigned long long v[4] = {0};
	for (int k = 0; k < 4; k++) {
		char want[24];
		snprintf(want, sizeof(want), "\n  %d: ", k);
		const char *line = strstr(m, want);
		if (!line)
			fail_msg("no key %d in:\n%s", k, out);
		v[k] = strtoull(line + strlen(want), NULL, 10);
	}
	assert_int_equal(v[0], 4); /* cuLaunchKernel entries */
	assert_int_equal(v[1], 4); /* returns with CUDA_SUCCESS */
	assert_int_equal(v[2], 1); /* cuModuleGetFunction */
	assert_int_equal(v[3], 4); /* PT_REGS_PARM2: grid x of each launch */
	free(out);
}

int main(void)
{
	if (access(APP, X_OK) || access(AGENT, R_OK)) {
		fprintf(stderr, "test_apiprobe_agent: %s or %s not built\n", APP, AGENT);
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probes_count_driver_calls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
