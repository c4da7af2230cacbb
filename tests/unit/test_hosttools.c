/* SPDX-License-Identifier: MIT */
/*
 * The host tools (cudatrace, syncsnoop, launchlat) and `gpuext run --trace`:
 *  - end to end: tests/fakecuda/memapp (a known list of driver calls, made
 *    through cuGetProcAddress and dlsym) under `gpuext run` with the agent
 *    and the fake driver; every count of the text and JSON outputs is
 *    checked against that list, the JSON parsed with json-c;
 *  - the trace file: parsed with json-c and checked for what Perfetto and
 *    chrome://tracing need (a traceEvents array; name, ph, pid, tid on every
 *    event, ts on every timed one; B/E matched per track, with the same
 *    name; ts never decreasing on a track; X events with a dur), from the
 *    run above and from synthetic GPU records (CUPTI is not on this machine);
 *  - launchlat's cupti/kernel program in the interpreter over synthetic
 *    kernel records, and its summary; without CUPTI it says so.
 */
#include "testutil.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "bpf/gpuext_cupti.h"
#include "bpf/map.h"
#include "bpf/object.h"
#include "bpf/verifier.h"

#include "../../src/cli/hist.c"
#include "../../src/cli/run_trace.c"
#include "../../src/cli/tool_calls.c"
#include "../../src/cli/tool_launchlat.c"
#include "../../src/cli/tool_map.c"

#define APP "build/fakecuda/memapp"
#define AGENT "build/libgpuext-agent.so"
#define TOOL(name) TEST_BPF_DIR "/tools/" name ".bpf.o"

/* The CLI's messages and JSON strings (main.c and prog.c are not linked in). */
void cli_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_json_str(FILE *out, const char *s)
{
	json_object *j = json_object_new_string(s);
	fputs(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN), out);
	json_object_put(j);
}

/* Runs memapp under `gpuext run ARGS`; returns its combined output. */
static char *run_memapp(const char *env, const char *args)
{
	char cmd[2048];
	int status;
	snprintf(cmd, sizeof(cmd), "FAKECUDA_LOG=/dev/null GPUEXT_AGENT=%s %s %s run %s -- %s",
		 AGENT, env, test_cli_path(), args, APP);
	char *out = test_run_cmd(cmd, &status);
	assert_non_null(out);
	if (status != 0 || !strstr(out, "memapp ok"))
		fail_msg("%s: status %d:\n%s", cmd, status, out);
	return out;
}

/* The JSON object of the output's line that starts with prefix. */
static json_object *json_line(const char *out, const char *prefix)
{
	const char *p = strstr(out, prefix);
	if (!p)
		fail_msg("no line starting %s in:\n%s", prefix, out);
	const char *end = strchr(p, '\n');
	char *line = strndup(p, end ? (size_t)(end - p) : strlen(p));
	json_object *j = json_tokener_parse(line);
	if (!j)
		fail_msg("not JSON: %s", line);
	free(line);
	return j;
}

/* The integer at a path of object keys ("allocs", "device", "count", NULL). */
static int64_t jget(json_object *j, ...)
{
	va_list ap;
	va_start(ap, j);
	for (const char *k; (k = va_arg(ap, const char *));)
		if (!json_object_object_get_ex(j, k, &j))
			fail_msg("no key %s", k);
	va_end(ap);
	return json_object_get_int64(j);
}

static const char *jstr(json_object *j, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(j, key, &v))
		fail_msg("no key %s", key);
	return json_object_get_string(v);
}

/* The array at key (a failure if it is not one: json-c asserts). */
static json_object *jarr(json_object *j, const char *key)
{
	json_object *v;
	if (!j || !json_object_object_get_ex(j, key, &v) || !json_object_is_type(v, json_type_array))
		fail_msg("no array %s", key);
	return v;
}

/* memapp's calls (tests/fakecuda/memapp.c), the 5th cuMemAlloc_v2 failed. */
static void test_cudatrace_json(void **state)
{
	char *out = run_memapp("FAKECUDA_FAIL=cuMemAlloc_v2:5", "--json " TOOL("cudatrace"));
	json_object *j = json_line(out, "{\"tool\":\"cudatrace\"");

	assert_int_equal(jget(j, "allocs", "device", "count", NULL), 4);
	assert_int_equal(jget(j, "allocs", "device", "bytes", NULL), 1000 + 4096 + 3149824 + 512);
	assert_int_equal(jget(j, "allocs", "device", "freed", NULL), 2);
	assert_int_equal(jget(j, "allocs", "device", "freed_bytes", NULL), 4096 + 512);
	assert_int_equal(jget(j, "allocs", "managed", "count", NULL), 1);
	assert_int_equal(jget(j, "allocs", "managed", "bytes", NULL), 8192);
	assert_int_equal(jget(j, "allocs", "host", "count", NULL), 1);
	assert_int_equal(jget(j, "allocs", "host", "freed_bytes", NULL), 256);
	assert_int_equal(jget(j, "allocs", "pool", "count", NULL), 0);
	assert_int_equal(jget(j, "copies", "HtoD", "count", NULL), 3 + 2 + 1);
	assert_int_equal(jget(j, "copies", "HtoD", "bytes", NULL), 3000 + 200 + 64);
	assert_int_equal(jget(j, "copies", "DtoH", "bytes", NULL), 1000);
	assert_int_equal(jget(j, "copies", "DtoD", "bytes", NULL), 64);
	assert_int_equal(jget(j, "copies", "default", "bytes", NULL), 10);
	assert_int_equal(jget(j, "copies", "peer", "count", NULL), 0);
	assert_int_equal(jget(j, "memsets", "count", NULL), 1);
	assert_int_equal(jget(j, "memsets", "bytes", NULL), 40);
	assert_int_equal(jget(j, "launches", NULL), 7);
	assert_int_equal(jget(j, "failed_calls", NULL), 1);
	assert_int_equal(jget(j, "frees_untracked", NULL), 0);
	assert_int_equal(jget(j, "unpaired", NULL), 0);

	json_object *kernels = jarr(j, "kernels");
	assert_int_equal(json_object_array_length(kernels), 1);
	json_object *k = json_object_array_get_idx(kernels, 0);
	assert_string_equal(jstr(k, "name"), "memapp_kernel");
	assert_int_equal(jget(k, "launches", NULL), 7);

	/* the leaks, largest first, each with a call site */
	assert_int_equal(jget(j, "leaks", "count", NULL), 3);
	assert_int_equal(jget(j, "leaks", "bytes", NULL), 3149824 + 8192 + 1000);
	json_object *list = jarr(json_object_object_get(j, "leaks"), "list");
	static const struct {
		int64_t size;
		const char *kind;
	} want[] = {{3149824, "device"}, {8192, "managed"}, {1000, "device"}};
	assert_int_equal(json_object_array_length(list), 3);
	for (size_t i = 0; i < 3; i++) {
		json_object *l = json_object_array_get_idx(list, i);
		assert_int_equal(jget(l, "size", NULL), want[i].size);
		assert_string_equal(jstr(l, "kind"), want[i].kind);
		assert_true(jget(l, "site", NULL) != 0);
		assert_true(jget(l, "addr", NULL) != 0);
	}
	assert_int_equal(json_object_array_length(jarr(json_object_object_get(j, "leaks"), "sites")), 3);
	json_object_put(j);
	free(out);
}

static void test_cudatrace_text(void **state)
{
	char *out = run_memapp("", TOOL("cudatrace"));
	static const char *const want[] = {
		"device            5          3155496          3             4672\n",
		"managed           1             8192          0                0\n",
		"HtoD              6             3264\n",
		"DtoH              1             1000\n",
		"memset            1               40\n",
		"7 launches of 1 kernels\n           7  memapp_kernel\n",
		"leaks at exit (allocated, never freed): 3 allocations, 3159016 bytes\n",
		"@leak_bytes:\n[512, 1K)                   1 |",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(out, want[i]))
			fail_msg("no '%s' in:\n%s", want[i], out);
	assert_null(strstr(out, "failed calls")); /* none failed: no such line */
	free(out);
}

static void test_syncsnoop(void **state)
{
	static const struct {
		const char *call;
		int64_t count;
	} want[] = {
		{"cuMemcpy", 1},           {"cuMemcpyHtoD", 3},        {"cuMemcpyDtoH_v2", 1},
		{"cuMemcpyDtoD_v2", 1},    {"cuMemcpy2D_v2", 1},       {"cuCtxSynchronize", 2},
		{"cuStreamSynchronize", 3}, {"cuEventSynchronize", 1},
	};
	char *out = run_memapp("", "--json " TOOL("syncsnoop"));
	json_object *j = json_line(out, "{\"tool\":\"syncsnoop\"");
	json_object *calls = jarr(j, "calls");
	size_t n = json_object_array_length(calls);
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < n; i++) {
		json_object *c = json_object_array_get_idx(calls, i);
		assert_string_equal(jstr(c, "call"), want[i].call);
		assert_int_equal(jget(c, "count", NULL), want[i].count);
		assert_true(jget(c, "ns", NULL) >= jget(c, "max_ns", NULL));
		/* the histogram holds every call once */
		json_object *b = jarr(json_object_object_get(c, "hist"), "buckets");
		int64_t sum = 0;
		for (size_t k = 0; k < json_object_array_length(b); k++)
			sum += jget(json_object_array_get_idx(b, k), "count", NULL);
		assert_int_equal(sum, want[i].count);
	}
	json_object *callers = jarr(j, "callers");
	int64_t total = 0;
	for (size_t i = 0; i < json_object_array_length(callers); i++) {
		json_object *c = json_object_array_get_idx(callers, i);
		assert_true(jget(c, "site", NULL) != 0);
		total += jget(c, "count", NULL);
	}
	assert_int_equal(total, 13);
	json_object_put(j);
	free(out);

	out = run_memapp("", TOOL("syncsnoop"));
	assert_non_null(strstr(out, "cuStreamSynchronize               3 "));
	assert_non_null(strstr(out, "@ns[cuCtxSynchronize]:\n"));
	assert_non_null(strstr(out, "top callers by time blocked ("));
	free(out);
}

/*
 * The trace-event file's structure: returns the number of B events, and
 * counts those named `count_name` (with args.kernel `kernel` if not NULL).
 */
static size_t check_trace(const char *path, const char *count_name, const char *kernel,
			  size_t *named, size_t *x_events)
{
	json_object *root = json_object_from_file(path), *events;
	if (!root)
		fail_msg("%s: not JSON: %s", path, json_util_get_last_err());
	assert_true(json_object_object_get_ex(root, "traceEvents", &events));
	assert_true(json_object_is_type(events, json_type_array));
	assert_string_equal(jstr(root, "displayTimeUnit"), "ns");
	size_t n = json_object_array_length(events), begins = 0;
	struct track {
		int64_t pid, tid;
		double last_ts;
		const char *stack[16];
		int depth;
	} tracks[64];
	size_t ntracks = 0;
	*named = *x_events = 0;
	for (size_t i = 0; i < n; i++) {
		json_object *ev = json_object_array_get_idx(events, i), *v;
		const char *ph = jstr(ev, "ph"), *name = jstr(ev, "name");
		int64_t pid = jget(ev, "pid", NULL), tid = jget(ev, "tid", NULL);
		assert_int_equal(strlen(ph), 1);
		if (*ph == 'M')
			continue;
		assert_true(json_object_object_get_ex(ev, "ts", &v));
		double ts = json_object_get_double(v);
		size_t t = 0;
		while (t < ntracks && (tracks[t].pid != pid || tracks[t].tid != tid))
			t++;
		if (t == ntracks) {
			assert_true(ntracks < 64);
			tracks[ntracks++] = (struct track){pid, tid, ts, {0}, 0};
		}
		struct track *tr = &tracks[t];
		if (ts < tr->last_ts)
			fail_msg("%s: event %zu: ts %f before %f on track %lld/%lld", path, i, ts,
				 tr->last_ts, (long long)pid, (long long)tid);
		tr->last_ts = ts;
		if (*ph == 'B') {
			assert_true(tr->depth < 16);
			tr->stack[tr->depth++] = name;
			begins++;
			if (!strcmp(name, count_name)) {
				json_object *args = json_object_object_get(ev, "args");
				if (!kernel || !strcmp(jstr(args, "kernel"), kernel))
					(*named)++;
			}
		} else if (*ph == 'E') {
			if (!tr->depth)
				fail_msg("%s: event %zu: E without B", path, i);
			assert_string_equal(tr->stack[--tr->depth], name);
		} else if (*ph == 'X') {
			assert_true(json_object_object_get_ex(ev, "dur", &v));
			assert_true(json_object_get_double(v) >= 0);
			(*x_events)++;
			if (!strcmp(name, count_name))
				(*named)++;
		} else {
			fail_msg("%s: event %zu: phase %s", path, i, ph);
		}
	}
	for (size_t t = 0; t < ntracks; t++)
		assert_int_equal(tracks[t].depth, 0); /* every B has its E */
	json_object_put(root);
	return begins;
}

static void test_trace_file_of_run(void **state)
{
	char path[] = "/tmp/gpuext-trace-XXXXXX", args[512];
	int fd = mkstemp(path);
	size_t named, x;
	assert_true(fd >= 0);
	close(fd);
	snprintf(args, sizeof(args), "--trace %s " TOOL("cudatrace"), path);
	char *out = run_memapp("FAKECUDA_FAIL=cuMemAlloc_v2:5", args);
	assert_non_null(strstr(out, "gpuext: trace: 54 events written to "));
	/* memapp's 27 probed calls (the failed alloc's free is not made) */
	assert_int_equal(check_trace(path, "cuLaunchKernel", "memapp_kernel", &named, &x), 27);
	assert_int_equal(named, 7);
	assert_int_equal(x, 0);
	free(out);

	snprintf(args, sizeof(args), "--trace %s " TOOL("syncsnoop"), path);
	out = run_memapp("", args);
	assert_int_equal(check_trace(path, "cuStreamSynchronize", NULL, &named, &x), 13);
	assert_int_equal(named, 3);
	free(out);

	/* a tool without a trace ring buffer is refused before CMD runs */
	char cmd[1024];
	int status;
	snprintf(cmd, sizeof(cmd), "GPUEXT_AGENT=%s %s run --trace %s " TOOL("launchlat") " -- %s",
		 AGENT, test_cli_path(), path, APP);
	out = test_run_cmd(cmd, &status);
	assert_int_not_equal(status, 0);
	assert_non_null(strstr(out, "has no `trace` ring buffer"));
	assert_null(strstr(out, "memapp ok"));
	free(out);
	unlink(path);
}

static void add_api(struct run_trace *t, uint32_t tid, uint32_t call, uint64_t start,
		    uint64_t end)
{
	struct trace_rec r = {.start = start, .end = end, .arg = 64, .kind = TRACE_API,
			      .track = tid, .call = call};
	assert_int_equal(run_trace_add(t, &r, sizeof(r)), 0);
}

/* GPU records as cudatrace's cupti programs send them, with host calls
 * that nest and touch at equal timestamps, given out of order. */
static void test_trace_writer_gpu(void **state)
{
	char path[] = "/tmp/gpuext-trace-XXXXXX";
	int fd = mkstemp(path);
	size_t named, x;
	assert_true(fd >= 0);
	close(fd);
	struct run_trace *t = run_trace_new(path);
	assert_non_null(t);
	add_api(t, 7, CALL_cuCtxSynchronize, 5000, 9000);
	add_api(t, 7, CALL_cuLaunchKernel, 1000, 5000);  /* ends where the next begins */
	add_api(t, 7, CALL_cuMemcpyHtoD_v2, 1000, 3000); /* inside, same start */
	add_api(t, 7, CALL_cuMemFree_v2, 2000, 3000);    /* inside that, same end */
	add_api(t, 8, CALL_cuStreamSynchronize, 1500, 1500);
	struct trace_named k = {.r = {.start = 6000, .end = 8000, .arg = 0x1234, .corr = 3,
				      .kind = TRACE_GPU_KERNEL, .track = 13}};
	snprintf(k.name, sizeof(k.name), "_Z6vecaddPfS_S_i");
	assert_int_equal(run_trace_add(t, &k, sizeof(k)), 0);
	k.r.start = 8000; /* back to back on the same stream */
	k.r.end = 8500;
	assert_int_equal(run_trace_add(t, &k, sizeof(k)), 0);
	struct trace_rec m = {.start = 5500, .end = 5900, .arg = 4096, .kind = TRACE_GPU_MEMCPY,
			      .track = 7, .call = CD_HTOD, .device = 1};
	assert_int_equal(run_trace_add(t, &m, sizeof(m)), 0);
	assert_int_equal(run_trace_add(t, &m, 3), 1); /* not a trace record */
	assert_int_equal(run_trace_close(t, NULL, 4242), 2 * 5 + 3);

	assert_int_equal(check_trace(path, "_Z6vecaddPfS_S_i", NULL, &named, &x), 5);
	assert_int_equal(named, 2);
	assert_int_equal(x, 3);
	/* tracks: the threads of pid 4242, streams of "GPU 0" and "GPU 1" */
	json_object *root = json_object_from_file(path), *events;
	assert_true(json_object_object_get_ex(root, "traceEvents", &events));
	int gpu_names = 0, stream13 = 0, htod = 0;
	for (size_t i = 0; i < json_object_array_length(events); i++) {
		json_object *ev = json_object_array_get_idx(events, i);
		const char *ph = jstr(ev, "ph");
		if (*ph == 'M' && !strcmp(jstr(ev, "name"), "process_name") &&
		    !strncmp(jstr(json_object_object_get(ev, "args"), "name"), "GPU ", 4))
			gpu_names++;
		if (*ph == 'X' && jget(ev, "pid", NULL) == RUN_TRACE_GPU_PID &&
		    jget(ev, "tid", NULL) == 13)
			stream13++;
		if (*ph == 'X' && !strcmp(jstr(ev, "name"), "HtoD")) {
			htod++;
			assert_int_equal(jget(ev, "pid", NULL), RUN_TRACE_GPU_PID + 1);
			assert_int_equal(jget(ev, "args", "bytes", NULL), 4096);
			/* ts in us from the first event (1000 ns) */
			assert_true(json_object_get_double(json_object_object_get(ev, "ts")) == 4.5);
		}
	}
	assert_int_equal(gpu_names, 2);
	assert_int_equal(stream13, 2);
	assert_int_equal(htod, 1);
	json_object_put(root);
	unlink(path);
}

static struct object *open_tool(const char *path)
{
	struct object *obj;
	struct err e = {{0}};
	if (object_open(path, &obj, &e) || object_create_maps(obj, &e))
		fail_msg("%s: %s", path, e.msg);
	for (size_t i = 0; i < obj->prog_cnt; i++) {
		struct vfy_opts vo = {.profile = VFY_PROFILE_AUTO};
		if (verifier_check(obj->progs[i], &vo, NULL, &e))
			fail_msg("%s: %s: %s", path, obj->progs[i]->name, e.msg);
	}
	return obj;
}

static char *summary_text(struct object *obj, int json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(tool_launchlat_summary(f, obj, NULL, json), 0);
	fclose(f);
	return buf;
}

static void kernel_record(struct object *obj, const char *name, uint64_t api, uint64_t start)
{
	struct gpuext_cupti_kernel k = {.start = start, .end = start + 100, .api_start = api,
					.name_hash = (uint32_t)name[0]}; /* distinct per test name */
	snprintf(k.name, sizeof(k.name), "%s", name);
	struct prog *p = object_find_prog(obj, "lt_kernel");
	struct prog_run_opts o = {.args = {(uint64_t)(uintptr_t)&k}};
	struct err e = {{0}};
	uint64_t r0 = 1;
	assert_non_null(p);
	if (prog_run(p, PROG_BACKEND_INTERP, &o, &r0, &e))
		fail_msg("lt_kernel: %s", e.msg);
	assert_int_equal(r0, 0);
}

static void test_launchlat(void **state)
{
	struct object *obj = open_tool(TOOL("launchlat"));
	char *text = summary_text(obj, 0);
	assert_non_null(strstr(text, "launchlat: no kernel records from CUPTI"));
	free(text);

	kernel_record(obj, "gemm", 1000, 6000);   /* 5000 ns: [4K, 8K) */
	kernel_record(obj, "gemm", 2000, 5000);   /* 3000 ns: [2K, 4K) */
	kernel_record(obj, "relu", 10000, 15000); /* 5000 ns */
	kernel_record(obj, "relu", 0, 15000);     /* not joined */
	kernel_record(obj, "relu", 20000, 19000); /* GPU before the call: bucket 0 */
	text = summary_text(obj, 0);
	const char *want =
		"0 launch calls (API probes), 5 kernels on the GPU (CUPTI), 4 joined with their "
		"launch call, 1 before their call (clock error; counted as 0)\n"
		"@latency_ns:\n"
		"[0]                         1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
		"[1]                         0 |                                                    |\n";
	if (strncmp(text, want, strlen(want)))
		fail_msg("got:\n%s", text);
	assert_non_null(strstr(text, "[2K, 4K)                    1 |"));
	assert_non_null(strstr(text, "[4K, 8K)                    2 |"));
	if (!strstr(text, "         2          2         4000         5000  gemm\n"))
		fail_msg("got:\n%s", text);
	assert_non_null(strstr(text, "         3          2         2500         5000  relu\n"));
	free(text);

	text = summary_text(obj, 1);
	json_object *j = json_tokener_parse(text);
	assert_non_null(j);
	assert_true(json_object_get_boolean(json_object_object_get(j, "cupti")));
	assert_int_equal(jget(j, "kernel_records", NULL), 5);
	assert_int_equal(jget(j, "joined", NULL), 4);
	assert_int_equal(jget(j, "negative", NULL), 1);
	json_object *kernels = jarr(j, "kernels");
	assert_int_equal(json_object_array_length(kernels), 2);
	json_object *relu = json_object_array_get_idx(kernels, 0); /* most records first */
	assert_string_equal(jstr(relu, "name"), "relu");
	assert_int_equal(jget(relu, "records", NULL), 3);
	assert_int_equal(jget(relu, "count", NULL), 2);
	json_object_put(j);
	free(text);
	object_free(obj);
}

/* Without CUPTI (none here) launchlat says so; the app's launches are
 * still counted by the API probes and the run ends with the app's status. */
static void test_launchlat_without_cupti(void **state)
{
	char *out = run_memapp("GPUEXT_CUPTI_PATH=/nonexistent/libcupti.so", TOOL("launchlat"));
	assert_non_null(strstr(out, "launchlat: no kernel records from CUPTI"));
	assert_non_null(strstr(out, "7 launch calls seen by the API probes"));
	free(out);
}

#define FAKECUPTI "build/fakecupti/libcupti.so.13"

/* With the fake libcupti (tests/fakecupti: 5 kernels, 2 copies and 2
 * memsets, each with its driver API record): cudatrace's trace gets them as
 * X events on their stream's track, launchlat joins every kernel. */
static void test_with_fake_cupti(void **state)
{
	char path[] = "/tmp/gpuext-trace-XXXXXX", args[512];
	int fd = mkstemp(path);
	size_t named, x;
	if (access(FAKECUPTI, R_OK))
		skip();
	assert_true(fd >= 0);
	close(fd);
	snprintf(args, sizeof(args), "--trace %s " TOOL("cudatrace"), path);
	const char *env = "GPUEXT_CUPTI_PATH=" FAKECUPTI " FAKECUPTI_KERNELS=5 FAKECUPTI_MEMCPYS=4";
	char *out = run_memapp(env, args);
	assert_int_equal(check_trace(path, "_Z6vecaddPfS_S_i", NULL, &named, &x), 28);
	assert_int_equal(x, 5 + 4);
	assert_int_equal(named, 2);
	free(out);
	unlink(path);

	out = run_memapp(env, TOOL("launchlat"));
	if (!strstr(out, "7 launch calls (API probes), 5 kernels on the GPU (CUPTI), 5 joined "
			 "with their launch call\n"))
		fail_msg("got:\n%s", out);
	free(out);
}

static void test_tools_listed(void **state)
{
	char cmd[512];
	int status;
	snprintf(cmd, sizeof(cmd), "%s tools", test_cli_path());
	char *out = test_run_cmd(cmd, &status);
	assert_int_equal(status, 0);
	assert_non_null(strstr(out, "cudatrace "));
	assert_non_null(strstr(out, "syncsnoop "));
	assert_non_null(strstr(out, "launchlat "));
	free(out);
}

int main(void)
{
	if (access(APP, X_OK) || access(AGENT, R_OK)) {
		fprintf(stderr, "test_hosttools: %s or %s not built\n", APP, AGENT);
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cudatrace_json),
		cmocka_unit_test(test_cudatrace_text),
		cmocka_unit_test(test_syncsnoop),
		cmocka_unit_test(test_trace_file_of_run),
		cmocka_unit_test(test_trace_writer_gpu),
		cmocka_unit_test(test_launchlat),
		cmocka_unit_test(test_launchlat_without_cupti),
		cmocka_unit_test(test_with_fake_cupti),
		cmocka_unit_test(test_tools_listed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
