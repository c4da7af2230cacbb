/* SPDX-License-Identifier: MIT */
/*
 * run_fmt.c - the table of per-tool formatters of `gpuext run` (run.h).
 * Tools add their row here; a tool without one gets the generic output.
 * Rows with `about` are the shipped tools (tools/NAME.bpf.c) that
 * `gpuext tools` lists.
 */
#include "run.h"
#include "tools.h"

#define TOOL_ROW(name, text)                                                   \
	{.tool = #name, .about = text, .event = tool_##name##_event,          \
	 .summary = tool_##name##_summary}

const struct run_fmt run_fmts[] = {
	TOOL_ROW(blockretsnoop, "per-block start, exit and duration (kernelretsnoop with 1 record a block)"),
	TOOL_ROW(kernelretsnoop, "per-warp start, exit and duration of every kernel launch"),
	TOOL_ROW(launchlate, "histogram of cuLaunchKernel call to first block running on the GPU"),
	TOOL_ROW(memtrace, "global memory bytes loaded/stored, accesses per 2 MiB region (heat map)"),
	TOOL_ROW(smload, "work per SM (warps, warp-time) and the imbalance across SMs"),
	TOOL_ROW(threadhist, "threads and warps executed per block, per SM and in total"),
	{.tool = NULL}, /* terminator (C has no empty arrays) */
};
const size_t run_fmt_cnt = sizeof(run_fmts) / sizeof(run_fmts[0]) - 1;
