/* SPDX-License-Identifier: MIT */
/* The CLI's own contract: help, unknown commands, exit codes. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_help_lists_commands(void **state)
{
	char cmd[256];
	int st;
	snprintf(cmd, sizeof(cmd), "%s --help", test_cli_path());
	char *out = test_run_cmd(cmd, &st);
	assert_non_null(out);
	assert_int_equal(st, 0);
	assert_non_null(strstr(out, "Usage: gpuext"));
	free(out);
}

static void test_unknown_command_fails_clearly(void **state)
{
	char cmd[256];
	int st;
	snprintf(cmd, sizeof(cmd), "%s frobnicate", test_cli_path());
	char *out = test_run_cmd(cmd, &st);
	assert_non_null(out);
	assert_int_equal(st, 2);
	assert_non_null(strstr(out, "unknown command 'frobnicate'"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help_lists_commands),
		cmocka_unit_test(test_unknown_command_fails_clearly),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
