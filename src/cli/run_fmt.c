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
	TOOL_ROW(blockretsnoop, "a record per block of every launch (start, exit, duration) through a ring buffer"),
	TOOL_ROW(cudatrace, "driver allocations, frees, leaks at exit, bytes copied per direction, launches per kernel"),
	TOOL_ROW(kernelsnoop, "every kernel the GPU ran (CUPTI; also SASS-only ones): name, grid, block, duration, stream"),
	TOOL_ROW(kernelretsnoop, "per-block start, exit and duration of kernel launches, aggregated on the GPU (per warp: warpretsnoop)"),
	TOOL_ROW(launchlat, "launch call to GPU start for every kernel (CUPTI, also SASS-only kernels)"),
	TOOL_ROW(launchlate, "histogram of cuLaunchKernel call to first block running on the GPU"),
	TOOL_ROW(memtrace, "global memory bytes loaded/stored, accesses per 2 MiB region (heat map)"),
	TOOL_ROW(memtrace_block, "memtrace with its counts gathered per block in shared memory (faster on long blocks)"),
	TOOL_ROW(smload, "work per SM (warps, warp-time) and the imbalance across SMs"),
	TOOL_ROW(syncsnoop, "time blocked in synchronize calls and synchronous copies, per call and call site"),
	TOOL_ROW(threadhist, "threads and warps executed per block, per SM and in total"),
	TOOL_ROW(uvmtrace, "unified-memory faults and migrations (CUPTI) over time and per 2 MiB block"),
	TOOL_ROW(warpretsnoop, "a record per warp of every launch (start, exit, duration); costly on short kernels"),
	/* not a tool: the memory runtime's device signal (run --mem-budget) */
	{.tool = "mem-signal", .summary = run_mem_signal_summary},
	{.tool = NULL}, /* terminator (C has no empty arrays) */
};
const size_t run_fmt_cnt = sizeof(run_fmts) / sizeof(run_fmts[0]) - 1;
