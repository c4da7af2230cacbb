/* SPDX-License-Identifier: MIT */
/*
 * tools.h - the shipped tools' formatters (src/cli/tool_*.c, rows of
 * run_fmt.c) and what they share: reading a tool's maps from the session
 * by name with the sizes its header (tools/NAME.h) gives, durations of
 * start/end records.
 */
#ifndef GPUEXT_CLI_TOOLS_H
#define GPUEXT_CLI_TOOLS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hist.h"

struct object;
struct session_status;
struct map;

/*
 * The map NAME of obj if its key and value sizes are the ones given, else
 * NULL with a message on stderr (the object is not the tool's).
 */
struct map *tool_map(const struct object *obj, const char *name, uint32_t key_size,
		     uint32_t value_size);

/*
 * Calls fn for every element; stops at fn != 0.  The value is the sum over
 * the CPU slots of per-CPU maps (64-bit word by word: per-SM device maps
 * hold counters), the value itself for the others.
 */
int tool_map_each(struct map *m, int (*fn)(void *arg, const void *key, const void *value),
		  void *arg);

/*
 * Every element of m copied into one malloc'ed array (the caller frees) of
 * *n elements of elem_size bytes: the key at offset 0, the value at
 * value_off (the layout of a struct {key; value;}).  NULL with *n = 0 when
 * the map is empty, the layout does not fit, or memory ran out.
 */
void *tool_map_collect(struct map *m, size_t elem_size, size_t value_off, size_t *n);
/* The value of key (summed over CPU slots likewise) into out[0..words); 0 if
 * found, else out is zeroed. */
int tool_map_sum(struct map *m, const void *key, uint64_t *out, size_t words);

/* Durations of start/end records (tool_dur.c: warpretsnoop's warps,
 * blockretsnoop's and kernelretsnoop's blocks). */
struct tool_dur {
	uint64_t n, backwards; /* records; records with end < start */
	struct hist_log2 hist;
};
/* Count one record; its duration (0 when end < start). */
uint64_t tool_dur_add(struct tool_dur *d, uint64_t start_ns, uint64_t end_ns);
/* "N NOUN" and the histogram, or one JSON object {"NOUN":N,...}. */
void tool_dur_print(FILE *out, const struct tool_dur *d, const char *noun, int json);

/*
 * The launch table (tool_launch.c): a row of GPUEXT_LAUNCHES_MAP printed
 * and remembered (1: map is another, nothing done); a device record of
 * launch id counted, its duration returned; per launch its kernel, grid,
 * NOUN counted and their durations, then the number of launches.
 */
int tool_launch_row(FILE *out, const char *map, const void *data, size_t size, int json);
uint64_t tool_launch_count(uint64_t id, uint64_t start_ns, uint64_t end_ns);
/* A histogram of launch id's durations aggregated on the device: added to
 * the launch's counts (log2 buckets, hist.h's). */
void tool_launch_hist(uint64_t id, const uint64_t *count, size_t buckets);
void tool_launch_print(FILE *out, const char *noun, int json);
/* Launch id's row (kernel, grid and block dims), NULL when it never came:
 * the ring buffer was full, or id 0. */
struct gpuext_launch;
const struct gpuext_launch *tool_launch_find(uint64_t id);
void tool_launch_reset(void);

#define TOOL_FMT(name)                                                                   \
	int tool_##name##_event(FILE *out, const struct object *obj, const char *map,    \
				const void *data, size_t size, int json);                \
	int tool_##name##_summary(FILE *out, const struct object *obj,                   \
				  const struct session_status *st, int json);

TOOL_FMT(kernelretsnoop)
TOOL_FMT(warpretsnoop)
TOOL_FMT(blockretsnoop)
TOOL_FMT(threadhist)
TOOL_FMT(launchlate)
TOOL_FMT(memtrace)
TOOL_FMT(memtrace_block)
TOOL_FMT(smload)
TOOL_FMT(cudatrace)
TOOL_FMT(syncsnoop)
TOOL_FMT(launchlat)
TOOL_FMT(kernelsnoop)
TOOL_FMT(uvmtrace)
#undef TOOL_FMT

/* Names of tools/cuda_calls.h's calls (enum cuda_call), copy directions
 * (CD_*: "HtoD"...) and memory kinds (CM_*: "device"...); "?" if unknown. */
const char *tool_call_name(uint32_t call);
uint32_t tool_call_class(uint32_t call); /* CC_*, 0 if unknown */
const char *tool_dir_name(uint32_t dir);
const char *tool_mem_name(uint32_t kind);

/* Forget the state a formatter keeps between records (tests; one run per
 * process otherwise). */
void tool_warpretsnoop_reset(void);
void tool_blockretsnoop_reset(void);
/* offset_ns: added to a %globaltimer value to give CLOCK_MONOTONIC; with
 * have_offset 0 it is derived from the host clocks at the first record. */
void tool_launchlate_reset(int64_t offset_ns, int have_offset);
void tool_kernelsnoop_reset(void);
void tool_uvmtrace_reset(void);

#endif
