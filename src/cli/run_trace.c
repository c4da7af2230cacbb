/* SPDX-License-Identifier: MIT */
/* run_trace.c - the Chrome trace-event file of `gpuext run --trace` (run_trace.h). */
#include "run_trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/map.h"
#include "bpf/object.h"
#include "cli.h"
#include "tools.h"
#include "../../tools/cuda_calls.h"
#include "../../tools/trace.h"

struct run_trace {
	char *path;
	struct trace_rec *recs;
	char **names;  /* per record: the GPU kernel's name, or NULL */
	size_t n, cap;
	uint64_t dropped;
};

/* One event of the file: B or E of an API record, or X of a GPU record. */
struct rt_event {
	uint64_t pid, tid, ts;
	uint64_t nest;  /* B: -end (outer calls first); E: -start (inner calls first) */
	uint32_t rec;
	char ph;        /* 'B', 'E', 'X' */
	/* Order at one instant: calls that end there (0), then calls that begin
	 * there (1), then the ends of calls that lasted no time (2). */
	uint8_t rank;
};

struct run_trace *run_trace_new(const char *path)
{
	struct run_trace *t = calloc(1, sizeof(*t));
	if (t && !(t->path = strdup(path))) {
		free(t);
		t = NULL;
	}
	return t;
}

int run_trace_add(struct run_trace *t, const void *data, size_t size)
{
	const struct trace_named *named = data;
	if (size != sizeof(struct trace_rec) && size != sizeof(struct trace_named))
		return 1;
	if (t->n == RUN_TRACE_MAX_RECORDS) {
		t->dropped++;
		return 0;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 4096;
		struct trace_rec *r = realloc(t->recs, cap * sizeof(*r));
		if (r)
			t->recs = r;
		char **nm = r ? realloc(t->names, cap * sizeof(*nm)) : NULL;
		if (nm)
			t->names = nm;
		if (!r || !nm) {
			t->dropped++;
			return 0;
		}
		t->cap = cap;
	}
	memcpy(&t->recs[t->n], data, sizeof(struct trace_rec));
	t->names[t->n] = NULL;
	if (size == sizeof(struct trace_named)) {
		char name[TRACE_NAME_LEN + 1];
		memcpy(name, named->name, TRACE_NAME_LEN);
		name[TRACE_NAME_LEN] = 0;
		t->names[t->n] = strdup(name);
	}
	t->n++;
	return 0;
}

static int rt_cmp(const void *a, const void *b)
{
	const struct rt_event *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->nest != y->nest)
		return x->nest < y->nest ? -1 : 1;
	/* zero-length calls at one instant: begun in record order, ended in reverse */
	return x->ph == 'E' ? (x->rec < y->rec) - (x->rec > y->rec)
			    : (x->rec > y->rec) - (x->rec < y->rec);
}

static void rt_ts(FILE *f, uint64_t ns, uint64_t origin)
{
	uint64_t d = ns - origin;
	fprintf(f, "%" PRIu64 ".%03" PRIu64, d / 1000, d % 1000);
}

/* The name of the kernel behind launch handle h (obj's `kernels` map), or NULL. */
static const char *rt_kernel_name(struct map *kernels, uint64_t h, struct trace_kernel *buf)
{
	if (!kernels || map_lookup_copy(kernels, &h, buf) || !buf->name[0])
		return NULL;
	buf->name[TRACE_NAME_LEN - 1] = 0;
	return buf->name;
}

/* The separator before an element of traceEvents (none before the first). */
static void rt_sep(FILE *f, int *first)
{
	fputs(*first ? "" : ",\n", f);
	*first = 0;
}

static void rt_meta(FILE *f, int *first, const char *what, uint64_t pid, uint64_t tid,
		    const char *fmt, uint64_t v)
{
	char name[64];
	snprintf(name, sizeof(name), fmt, v);
	rt_sep(f, first);
	fprintf(f, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64
		",\"args\":{\"name\":\"%s\"}}", what, pid, tid, name);
}

static void rt_write_event(FILE *f, const struct run_trace *t, const struct rt_event *e,
			   uint64_t origin, struct map *kernels)
{
	static const char *const gpu_cat[] = {[TRACE_GPU_KERNEL] = "kernel",
					      [TRACE_GPU_MEMCPY] = "memcpy",
					      [TRACE_GPU_MEMSET] = "memset"};
	const struct trace_rec *r = &t->recs[e->rec];
	struct trace_kernel kbuf;
	const char *name;

	if (r->kind == TRACE_API)
		name = tool_call_name(r->call);
	else if (r->kind == TRACE_GPU_KERNEL)
		name = t->names[e->rec] ? t->names[e->rec] : "kernel";
	else if (r->kind == TRACE_GPU_MEMCPY)
		name = tool_dir_name(r->call);
	else
		name = "memset";
	fputs("{\"name\":", f);
	cli_json_str(f, name);
	fprintf(f, ",\"cat\":\"%s\",\"ph\":\"%c\",\"ts\":",
		r->kind == TRACE_API ? "api" : gpu_cat[r->kind], e->ph);
	rt_ts(f, e->ts, origin);
	if (e->ph == 'X') {
		fputs(",\"dur\":", f);
		rt_ts(f, r->end > r->start ? r->end : r->start, r->start);
	}
	fprintf(f, ",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64, e->pid, e->tid);
	if (e->ph == 'B') {
		uint32_t cls = tool_call_class(r->call);
		fprintf(f, ",\"args\":{\"ret\":%d", r->ret);
		if (cls == CC_LAUNCH) {
			const char *k = rt_kernel_name(kernels, r->arg, &kbuf);
			fprintf(f, ",\"handle\":\"0x%" PRIx64 "\",\"kernel\":", (uint64_t)r->arg);
			cli_json_str(f, k ? k : "");
		} else if (cls == CC_SYNC) {
			fprintf(f, ",\"site\":\"0x%" PRIx64 "\"", (uint64_t)r->corr);
		} else {
			if (cls != CC_FREE)
				fprintf(f, ",\"bytes\":%" PRIu64, (uint64_t)r->arg);
			fprintf(f, ",\"ptr\":\"0x%" PRIx64 "\"", (uint64_t)r->corr);
		}
		fputs("}", f);
	} else if (e->ph == 'X') {
		fprintf(f, ",\"args\":{\"correlation\":%" PRIu64 ",\"device\":%u", (uint64_t)r->corr,
			r->device);
		if (r->kind != TRACE_GPU_KERNEL)
			fprintf(f, ",\"bytes\":%" PRIu64, (uint64_t)r->arg);
		fputs("}", f);
	}
	fputs("}", f);
}

static void rt_free(struct run_trace *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->names[i]);
	free(t->names);
	free(t->recs);
	free(t->path);
	free(t);
}

long run_trace_close(struct run_trace *t, const struct object *obj, int pid)
{
	struct rt_event *ev = calloc(2 * t->n + 1, sizeof(*ev));
	struct object_map *km = obj ? object_find_map(obj, "kernels") : NULL;
	struct map *kernels = NULL;
	uint64_t origin = UINT64_MAX;
	size_t n = 0;
	long written = -1;
	FILE *f = NULL;

	if (km && map_get_def(km->map)->key_size == 8 &&
	    map_get_def(km->map)->value_size == sizeof(struct trace_kernel))
		kernels = km->map;
	if (!ev) {
		cli_error("run: --trace %s: out of memory", t->path);
		goto out;
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct trace_rec *r = &t->recs[i];
		uint64_t end = r->end > r->start ? r->end : r->start;
		origin = r->start < origin ? r->start : origin;
		if (r->kind == TRACE_API) {
			ev[n++] = (struct rt_event){(uint64_t)pid, r->track, r->start, -end, i, 'B', 1};
			ev[n++] = (struct rt_event){(uint64_t)pid, r->track, end, -r->start, i, 'E',
						    end == r->start ? 2 : 0};
		} else if (r->kind >= TRACE_GPU_KERNEL && r->kind <= TRACE_GPU_MEMSET) {
			ev[n++] = (struct rt_event){RUN_TRACE_GPU_PID + r->device, r->track, r->start,
						    0, i, 'X', 1};
		}
	}
	if (n)
		qsort(ev, n, sizeof(*ev), rt_cmp);
	if (!(f = fopen(t->path, "w"))) {
		cli_error("run: --trace %s: %s", t->path, strerror(errno));
		goto out;
	}
	fputs("{\"traceEvents\":[\n", f);
	int first = 1;
	rt_meta(f, &first, "process_name", (uint64_t)pid, 0, "host (pid %" PRIu64 ")",
		(uint64_t)pid);
	for (size_t i = 0; i < n; i++) {
		if (i && ev[i].pid == ev[i - 1].pid && ev[i].tid == ev[i - 1].tid)
			continue;
		if (ev[i].pid >= RUN_TRACE_GPU_PID) {
			if (!i || ev[i - 1].pid != ev[i].pid)
				rt_meta(f, &first, "process_name", ev[i].pid, 0, "GPU %" PRIu64,
					ev[i].pid - RUN_TRACE_GPU_PID);
			rt_meta(f, &first, "thread_name", ev[i].pid, ev[i].tid, "stream %" PRIu64, ev[i].tid);
		} else {
			rt_meta(f, &first, "thread_name", ev[i].pid, ev[i].tid, "thread %" PRIu64, ev[i].tid);
		}
	}
	for (size_t i = 0; i < n; i++) {
		rt_sep(f, &first);
		rt_write_event(f, t, &ev[i], origin, kernels);
	}
	fprintf(f, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"clock\":\"CLOCK_MONOTONIC\","
		"\"origin_ns\":%" PRIu64 ",\"records\":%zu,\"dropped\":%" PRIu64 "}}\n",
		n ? origin : 0, t->n, t->dropped);
	written = (long)n;
	if (fclose(f)) {
		cli_error("run: --trace %s: %s", t->path, strerror(errno));
		written = -1;
	}
out:
	free(ev);
	rt_free(t);
	return written;
}
