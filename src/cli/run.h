/* SPDX-License-Identifier: MIT */
/*
 * run.h - per-tool output of `gpuext run`.
 *
 * A tool (tools/NAME.bpf.c) may register a formatter in run_fmt.c's table:
 * `gpuext run --tool NAME` (or a FILE named NAME.bpf.o) then gives it the
 * ring buffer records as they arrive and the end-of-run summary.  Either
 * callback may be NULL or return non-zero to get the generic output
 * (records in hex; every non-empty map's keys and values).  The maps are
 * the session's host maps (session.h's contract): read them, never write.
 */
#ifndef GPUEXT_CLI_RUN_H
#define GPUEXT_CLI_RUN_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct object;
struct session_status;

struct run_fmt {
	const char *tool; /* object file name without ".bpf.o" */
	const char *about; /* one line for `gpuext tools` (shipped tools only) */
	int (*event)(FILE *out, const struct object *obj, const char *map, const void *data,
		     size_t size, int json);
	int (*summary)(FILE *out, const struct object *obj, const struct session_status *st,
		       int json);
};

extern const struct run_fmt run_fmts[];
extern const size_t run_fmt_cnt;

/* Generic output, also for formatters that print part of it themselves. */
void run_print_record(FILE *out, const char *map, const void *data, size_t size, int json);
void run_print_maps(FILE *out, const struct object *obj, int json);

/* Shared with `gpuext attach`: the formatter of the tool an object file is
 * (NAME.bpf.o, NULL when none); one record through it or the generic
 * output; verify every program of obj (path for messages), 0 or status 1. */
const struct run_fmt *run_fmt_of_file(const char *path);
void run_emit_record(FILE *out, const struct object *obj, const struct run_fmt *fmt,
		     const char *map, const void *data, size_t size, int json);
int run_verify(struct object *obj, const char *path);

/* run --mem-budget / --mem-policy (run_mem.c). */
struct run_mem {
	uint64_t budget;            /* bytes; 0: no memory policy */
	char policies[4096];        /* absolute paths joined by ',' */
	char stats_path[PATH_MAX];  /* where the agent writes its statistics */
	int cupti_only;             /* --mem-signal cupti: no device signal */
	char trace_path[PATH_MAX];  /* --mem-trace FILE, absolute ("": none) */
};
/* Take option opt ("--mem-budget", "--mem-policy", "--mem-signal" or
 * "--mem-trace") with its value; 2 after an error. */
int run_mem_option(struct run_mem *m, const char *opt, const char *val);
/* Before CMD starts: check the settings, open and verify the policy,
 * create the statistics file.  0, else the exit status. */
int run_mem_prepare(struct run_mem *m);
/* In the child: the settings for the agent. */
void run_mem_env(const struct run_mem *m);
/* The object `gpuext run` loads when it has none of its own: the device
 * access signal (policies/mem-signal.bpf.c), unless --mem-signal cupti. */
int run_mem_wants_signal(const struct run_mem *m);
#define RUN_MEM_SIGNAL_OBJ "mem-signal.bpf.o"
/* Its formatter (run_fmt.c): the maps are the agent's, nothing to print. */
int run_mem_signal_summary(FILE *out, const struct object *obj,
			   const struct session_status *st, int json);
/* After CMD: the statistics, as text or a {"mem":{...}} line; removes the file. */
void run_mem_report(struct run_mem *m, FILE *out, int json);
/* CMD did not run: remove the statistics file. */
void run_mem_discard(struct run_mem *m);

#endif /* GPUEXT_CLI_RUN_H */
