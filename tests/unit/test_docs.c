/* SPDX-License-Identifier: MIT */
/*
 * The documentation's promises that a test can hold to: README's first
 * screen gives the quickstart and test commands, the quickstart's example
 * exists and is built, and docs/cli.md has a section for every command that
 * `gpuext --help` lists (scripts/gen-cli-doc.sh writes them).
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lines of README.md that fit on one screen. */
enum { README_FIRST_SCREEN_LINES = 30 };

static void test_readme_first_screen_has_both_commands(void **state)
{
	char *readme = test_read_file("README.md", NULL);
	char *p;
	int lines = 0;

	assert_non_null(readme);
	for (p = readme; *p && lines < README_FIRST_SCREEN_LINES; p++)
		lines += *p == '\n';
	*p = '\0';
	assert_non_null(strstr(readme, "\n./quickstart.sh\n"));
	assert_non_null(strstr(readme, "\nmake test\n"));
	free(readme);
}

static void test_quickstart_example_is_built(void **state)
{
	char *script = test_read_file("quickstart.sh", NULL);
	const char *const needed[] = {"scripts/install-deps.sh", "make -j2",
				      "build/bpf/examples/hello_maps.bpf.o",
				      "examples/hello_maps.data"};

	assert_non_null(script);
	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++) {
		if (!strstr(script, needed[i]))
			fail_msg("quickstart.sh does not use %s", needed[i]);
	}
	free(script);
	/* The files it runs on: the compiled example and its recorded call. */
	size_t len;
	char *obj = test_read_file(TEST_BPF_DIR "/examples/hello_maps.bpf.o", &len);
	assert_non_null(obj);
	assert_true(len > 4 && !memcmp(obj, "\177ELF", 4));
	free(obj);
	char *data = test_read_file("examples/hello_maps.data", &len);
	assert_non_null(data);
	assert_int_equal(len, 21 * 8); /* struct pt_regs, x86-64 */
	free(data);
}

static void test_every_command_has_a_cli_doc_section(void **state)
{
	char cmd[256], missing[512] = "", *help, *doc, *line, *save = NULL;
	int st, has_global;

	snprintf(cmd, sizeof(cmd), "%s --help", test_cli_path());
	help = test_run_cmd(cmd, &st);
	assert_non_null(help);
	assert_int_equal(st, 0);
	doc = test_read_file("docs/cli.md", NULL);
	assert_non_null(doc);
	/* Command lines of the help: two spaces, a lower-case name, a summary. */
	for (line = strtok_r(help, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[64], heading[96];
		size_t n = strlen(missing);

		if (strncmp(line, "  ", 2) || line[2] < 'a' || line[2] > 'z' ||
		    sscanf(line + 2, "%63[a-z0-9-]", name) != 1 || !strcmp(name, "help"))
			continue;
		snprintf(heading, sizeof(heading), "\n### gpuext %s\n", name);
		if (!strstr(doc, heading))
			snprintf(missing + n, sizeof(missing) - n, " %s", name);
	}
	/* The global help is always there, commands or not. */
	has_global = strstr(doc, "\n### gpuext --help\n") != NULL;
	free(help);
	free(doc);
	if (missing[0])
		fail_msg("docs/cli.md has no section for:%s (run scripts/gen-cli-doc.sh)", missing);
	assert_true(has_global);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readme_first_screen_has_both_commands),
		cmocka_unit_test(test_quickstart_example_is_built),
		cmocka_unit_test(test_every_command_has_a_cli_doc_section),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
