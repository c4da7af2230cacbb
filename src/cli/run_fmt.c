/* SPDX-License-Identifier: MIT */
/*
 * run_fmt.c - the table of per-tool formatters of `gpuext run` (run.h).
 * Tools add their row here; a tool without one gets the generic output.
 */
#include "run.h"

const struct run_fmt run_fmts[] = {
	{.tool = NULL}, /* terminator (C has no empty arrays) */
};
const size_t run_fmt_cnt = sizeof(run_fmts) / sizeof(run_fmts[0]) - 1;
