/* SPDX-License-Identifier: MIT */
/*
 * run_trace.h - `gpuext run --trace FILE`: the records of a tool's `trace`
 * ring buffer (tools/trace.h) written as a Chrome trace-event JSON file,
 * which Perfetto (ui.perfetto.dev) and chrome://tracing open.
 *
 * The file is one object {"traceEvents":[...],"displayTimeUnit":"ns",
 * "otherData":{...}}.  Host API calls are B/E pairs on a track per thread
 * of the application's process (pid = its pid, tid = the thread id), with
 * the call's bytes, pointer and result in args (launches: the kernel's
 * name).  GPU activity from CUPTI is X events (ts + dur) on a track per
 * stream (tid = CUPTI's stream id) of one process per device (pid =
 * RUN_TRACE_GPU_PID + device, named "GPU n").  Both come in ns of
 * CLOCK_MONOTONIC (CUPTI is given that clock by the agent:
 * include/bpf/gpuext_cupti.h); ts is in microseconds from the first event
 * (otherData.origin_ns holds it).  Events are sorted per track by time, a
 * call's B before the B of any call inside it and its E after theirs, so
 * every track's ts never decreases and its B/E nest.
 */
#ifndef GPUEXT_CLI_RUN_TRACE_H
#define GPUEXT_CLI_RUN_TRACE_H

#include <stddef.h>
#include <stdint.h>

struct object;
struct run_trace;

#define RUN_TRACE_GPU_PID 1000000000u
/* Records kept (each API record gives two events); more are counted as dropped. */
#define RUN_TRACE_MAX_RECORDS (1u << 22)

/* An empty trace for path (opened at run_trace_close), or NULL (no memory). */
struct run_trace *run_trace_new(const char *path);

/* One record of a `trace` ring buffer: a struct trace_rec, or a struct
 * trace_named for GPU kernels.  Returns 1 if its size is neither. */
int run_trace_add(struct run_trace *t, const void *data, size_t size);

/*
 * Write the file (kernel names of launches from obj's `kernels` map when it
 * has one; pid: the application's process) and free t.  Returns the events
 * written, or -1 with a message naming the file.
 */
long run_trace_close(struct run_trace *t, const struct object *obj, int pid);

#endif
