/* SPDX-License-Identifier: MIT */
/*
 * Smoke run of the differential fuzzer (fuzz/jit_diff.c): a few seconds of
 * random programs through the interpreter and the JIT with no mismatch.
 * The long run is `build/fuzz/jit_diff --seconds 1800` (fuzz/README.md).
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *jit_diff_path(void)
{
#ifdef __SANITIZE_ADDRESS__
	return "build/san/fuzz/jit_diff";
#else
	return "build/fuzz/jit_diff";
#endif
}

static void test_jit_diff_smoke(void **state)
{
	char cmd[256];
	int st;
	snprintf(cmd, sizeof(cmd), "%s --seconds 2", jit_diff_path());
	char *out = test_run_cmd(cmd, &st);
	assert_non_null(out);
	print_message("%s", out);
	/* It really ran: hundreds of programs at least, each on several inputs. */
	unsigned long long programs = 0;
	const char *line = strstr(out, "jit_diff: ");
	int ok = st == 0 && strstr(out, " 0 mismatches") && line &&
		 sscanf(line, "jit_diff: %llu programs", &programs) == 1 && programs >= 500;
	free(out);
	assert_true(ok);
}

static void test_jit_diff_rejects_bad_usage(void **state)
{
	char cmd[256];
	int st;
	snprintf(cmd, sizeof(cmd), "%s --size 3", jit_diff_path());
	char *out = test_run_cmd(cmd, &st);
	assert_non_null(out);
	assert_int_equal(st, 2);
	assert_non_null(strstr(out, "usage: jit_diff"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jit_diff_smoke),
		cmocka_unit_test(test_jit_diff_rejects_bad_usage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
