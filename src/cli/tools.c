/* SPDX-License-Identifier: MIT */
/* tools.c - `gpuext tools`: the shipped tools (run_fmt.c's rows with a description). */
#include <stdio.h>

#include "cli.h"
#include "run.h"

int do_tools(int argc, char **argv)
{
	struct cli_opts o = {.cmd = "tools"};
	int c = cli_opts_next(&o, argc, argv);

	if (c == CLI_OPT_HELP) {
		puts("Usage: gpuext tools\n\nList the shipped tools (gpuext run --tool NAME -- CMD).");
		return 0;
	}
	if (c == CLI_OPT_ARG)
		cli_error("tools: no arguments expected (got '%s')", o.arg);
	if (c != CLI_OPT_END)
		return 2;
	for (size_t i = 0; i < run_fmt_cnt; i++)
		if (run_fmts[i].about) {
			if (cli_json)
				printf("{\"tool\":\"%s\",\"about\":\"%s\"}\n", run_fmts[i].tool,
				       run_fmts[i].about);
			else
				printf("%-16s %s\n", run_fmts[i].tool, run_fmts[i].about);
		}
	return 0;
}
