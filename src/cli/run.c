/* SPDX-License-Identifier: MIT */
/*
 * run.c - `gpuext run [--tool NAME | FILE.bpf.o] [--json] [-o FILE] -- CMD ARGS`:
 * verify the object, create the session (session.h), run CMD with the agent
 * preloaded, print ring buffer records while it runs and the maps at the
 * end, exit with CMD's status.  With --kernel-uprobes the uprobe programs
 * run in the kernel (src/host/) instead of in the agent.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpf/object.h"
#include "bpf/session.h"
#include "bpf/verifier.h"
#include "cli.h"
#include "host/host.h"
#include "run.h"
#include "run_sched.h"
#include "run_trace.h"
#include "tools.h"

static const char run_usage[] =
	"Usage: gpuext run [--tool NAME | FILE.bpf.o] [--json] [--kernel-uprobes] [-o FILE]\n"
	"                  [--trace FILE] [--mem-budget SIZE [--mem-policy FILE.bpf.o]...\n"
	"                  [--mem-signal device|cupti] [--mem-trace FILE]]\n"
	"                  [--session NAME --class lc|be [--policy FILE]]\n"
	"                  -- CMD [ARGS]\n\n"
	"Verify the programs of FILE (or of the shipped tool NAME), run CMD with the\n"
	"gpuext agent preloaded (LD_PRELOAD, appended to an existing one): device\n"
	"programs (gpu/entry|exit|mem|block_entry|block_exit/KERNEL) are injected into\n"
	"CMD's kernels at their first launch; uprobe/FUNC programs run around driver\n"
	"calls; cupti/kernel,\n"
	"cupti/memcpy and cupti/uvm programs on every GPU activity record of CUPTI\n"
	"(libcupti: GPUEXT_CUPTI_PATH, else the CUDA install; docs/cupti.md; unified\n"
	"memory from the UVM driver's own queue, GPUEXT_UVM_SOURCE=cupti for CUPTI's).\n"
	"Prints ring buffer records as they arrive and every non-empty\n"
	"map at the end (a tool's own format where it has one), then exits with CMD's\n"
	"status.  Signals are forwarded to CMD.  -o writes the output to FILE.\n"
	"--trace FILE writes host API calls and GPU activity as a Chrome trace-event\n"
	"file (open it in ui.perfetto.dev or chrome://tracing), for tools with a\n"
	"`trace` ring buffer (cudatrace, syncsnoop; docs/tools.md).\n"
	"Device tools run once per block where they can (gpu/block_entry|block_exit):\n"
	"kernelretsnoop stores each block index's last run on the GPU; per warp, --tool\n"
	"warpretsnoop sends a ring buffer record per warp, which costs up to\n"
	"thousands of times the kernel on grids of many short warps (bench/results).\n"
	"Tools are looked up in bpf/tools/ next to the gpuext binary, then in\n"
	"../share/gpuext/tools/; the agent is libgpuext-agent.so next to the binary,\n"
	"then ../lib/ (GPUEXT_AGENT overrides).\n"
	"--kernel-uprobes runs the uprobe/ and uretprobe/ programs as kernel uprobes\n"
	"(libbpf, attached to CMD before it starts; needs root or CAP_BPF+CAP_PERFMON)\n"
	"instead of in process: uprobe/FUNC probes libcuda.so.1's FUNC, uprobe/LIB:FUNC\n"
	"and uprobe/PATH:FUNC any function (see gpuext attach --help).  The kernel's\n"
	"maps are its own: their contents are printed at the end.\n"
	"--mem-budget SIZE (512M, 2G) keeps CMD's managed memory (cuMemAllocManaged,\n"
	"cudaMallocManaged) resident on the GPU under SIZE: CUPTI's page-fault records\n"
	"drive a memory policy that evicts blocks to the CPU and prefetches to the GPU\n"
	"with cuMemPrefetchAsync on a stream of its own (docs/policies.md); its\n"
	"statistics are printed at the end.  --mem-policy FILE.bpf.o (struct_ops\n"
	"gpu_mem_ops, policies/; repeat it for an eviction and a prefetch policy)\n"
	"replaces the default, the driver's LRU and density-tree prefetch.  With\n"
	"--mem-budget the object FILE (or --tool) may be left out: then the device\n"
	"access signal (policies/mem-signal.bpf.c, injected into every kernel) tells\n"
	"the policy which pages the kernels touched (CUPTI's records are only counted\n"
	"once it reports; kernels that cannot be instrumented leave CUPTI in charge).\n"
	"--mem-signal cupti takes the signal from CUPTI alone (also what\n"
	"happens with an object of your own).  --mem-trace FILE writes what the device\n"
	"signal saw as a trace for `gpuext sim --trace` (docs/formats.md).\n";

static pid_t run_child;

static void run_forward_signal(int sig)
{
	if (run_child > 0)
		kill(run_child, sig);
}

/* dir of the gpuext binary, with a trailing '/'. */
static void run_exe_dir(char *out, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", out, len - 1);
	out[n > 0 ? n : 0] = 0;
	char *slash = strrchr(out, '/');
	if (slash)
		slash[1] = 0;
	else
		snprintf(out, len, "./");
}

static int run_find(char *out, size_t len, const char *dir, const char *const *rel,
		    const char *name)
{
	for (; *rel; rel++) {
		if (snprintf(out, len, "%s%s%s", dir, *rel, name) < (int)len && !access(out, R_OK))
			return 0;
	}
	return -1;
}

void run_print_record(FILE *out, const char *map, const void *data, size_t size, int json)
{
	const unsigned char *d = data;
	fprintf(out, json ? "{\"event\":{\"map\":\"%s\",\"data\":\"" : "%s: ", map);
	for (size_t i = 0; i < size; i++)
		fprintf(out, json ? "%02x" : "%02x%s", d[i], i + 1 < size && !json ? " " : "");
	fprintf(out, json ? "\"}}\n" : "\n");
}

static void run_hex(FILE *out, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%02x", ((const unsigned char *)p)[i]);
}

/* A value as a number when it is one (1, 2, 4, 8 bytes), else hex. */
static void run_value(FILE *out, const void *p, size_t n, int json)
{
	uint64_t v = 0;
	if (n == 1 || n == 2 || n == 4 || n == 8) {
		memcpy(&v, p, n); /* little-endian host */
		fprintf(out, "%llu", (unsigned long long)v);
	} else {
		fputs(json ? "\"" : "", out);
		run_hex(out, p, n);
		fputs(json ? "\"" : "", out);
	}
}

void run_print_maps(FILE *out, const struct object *obj, int json)
{
	int first_map = 1;
	if (json)
		fputs("{\"maps\":[", out);
	for (size_t i = 0; i < obj->map_cnt; i++) {
		struct map *m = obj->maps[i].map;
		const struct map_def *d = map_get_def(m);
		if (d->type == MAP_TYPE_RINGBUF || obj->maps[i].init)
			continue; /* records were printed; global data is not a result */
		if (d->type == MAP_TYPE_GPU_BLOCK_ARRAY) { /* say why it shows nothing */
			if (json)
				fprintf(out, "%s{\"name\":\"%s\",\"block_local\":true,\"entries\":[]}",
					first_map ? "" : ",", d->name);
			else
				fprintf(out, "map %s: block-local (its values live in each GPU block's "
					     "shared memory while the block runs; none on the host)\n",
					d->name);
			first_map = 0;
			continue;
		}
		unsigned nr = map_nr_cpus(m);
		size_t stride = (d->value_size + 7) & ~(size_t)7;
		unsigned char *key = calloc(1, d->key_size), *next = calloc(1, d->key_size);
		unsigned char *val = calloc(nr, stride);
		int have = 0, first = 1;
		if (!key || !next || !val)
			goto next_map;
		for (int err = map_get_next_key(m, NULL, next); !err;
		     err = map_get_next_key(m, key, next)) {
			memcpy(key, next, d->key_size);
			if (map_lookup_copy(m, key, val))
				continue;
			/* per-CPU values are summed: the total is what tools report */
			int nonzero = 0;
			for (size_t b = 0; b < nr * stride; b++)
				nonzero |= val[b];
			if (!nonzero)
				continue;
			if (!have) {
				if (json)
					fprintf(out, "%s{\"name\":\"%s\",\"entries\":[", first_map ? "" : ",",
						d->name);
				else
					fprintf(out, "map %s:\n", d->name);
				have = 1;
				first_map = 0;
			}
			fprintf(out, json ? "%s{\"key\":" : "  ", first ? "" : ",");
			first = 0;
			run_value(out, key, d->key_size, json);
			fputs(json ? ",\"value\":" : ": ", out);
			if (nr > 1 && d->value_size == 8) {
				uint64_t sum = 0, v;
				for (unsigned c = 0; c < nr; c++) {
					memcpy(&v, val + c * stride, 8);
					sum += v;
				}
				fprintf(out, "%llu", (unsigned long long)sum);
			} else {
				run_value(out, val, d->value_size, json);
			}
			fputs(json ? "}" : "\n", out);
		}
		if (have && json)
			fputs("]}", out);
	next_map:
		free(key);
		free(next);
		free(val);
	}
	if (json)
		fputs("]}\n", out);
}

struct run_ctx {
	FILE *out;
	struct run_trace *trace; /* --trace: takes the `trace` ring buffer's records */
	const struct object *obj;
	const struct run_fmt *fmt;
	const char *map;
	int json;
};

void run_emit_record(FILE *out, const struct object *obj, const struct run_fmt *fmt,
		     const char *map, const void *data, size_t size, int json)
{
	/* the launch table's rows have their own line whatever the tool */
	if ((!fmt || !fmt->event || fmt->event(out, obj, map, data, size, json)) &&
	    tool_launch_row(out, map, data, size, json))
		run_print_record(out, map, data, size, json);
}

static int run_on_record(void *arg, const void *data, size_t size)
{
	struct run_ctx *c = arg;
	if (c->trace && !strcmp(c->map, "trace") && !run_trace_add(c->trace, data, size))
		return 0;
	run_emit_record(c->out, c->obj, c->fmt, c->map, data, size, c->json);
	return 0;
}

/* A record of a kernel ring buffer (--kernel-uprobes). */
static int run_on_kernel_record(void *arg, const char *map, const void *data, size_t size)
{
	struct run_ctx *c = arg;
	run_emit_record(c->out, c->obj, c->fmt, map, data, size, c->json);
	return 0;
}

const struct run_fmt *run_fmt_of_file(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strcspn(base, ".");
	if (strcmp(base + n, ".bpf.o"))
		return NULL;
	for (size_t f = 0; f < run_fmt_cnt; f++)
		if (strlen(run_fmts[f].tool) == n && !strncmp(run_fmts[f].tool, base, n))
			return &run_fmts[f];
	return NULL;
}

static void run_poll(struct run_ctx *c)
{
	for (size_t i = 0; i < c->obj->map_cnt; i++) {
		struct map *m = c->obj->maps[i].map;
		if (map_get_def(m)->type != MAP_TYPE_RINGBUF)
			continue;
		c->map = c->obj->maps[i].def.name;
		map_ringbuf_consume(m, run_on_record, c);
	}
	fflush(c->out);
}

/*
 * --kernel-uprobes: the agent stops CMD once its libraries are mapped and
 * before main; the probes are attached to it there, targets looked up in
 * its mapped libraries or, for a library it loads later (cudart dlopens
 * libcuda), where the dynamic linker finds it; then CMD goes on.  0, 1
 * when CMD exited before stopping (*status set), -1 after an error (CMD
 * killed: a run without its probes would report wrong numbers).
 */
static int run_kernel_attach(struct host *h, pid_t pid, int *status)
{
	struct err e = {{0}};
	pid_t w = 0;
	for (int ms = 0; ms < 10000 && !w; ms++) {
		struct timespec ts = {0, 1000000L};
		if (!(w = waitpid(pid, status, WNOHANG | WUNTRACED)))
			nanosleep(&ts, NULL);
	}
	if (w == pid && !WIFSTOPPED(*status))
		return 1;
	if (w != pid)
		cli_error("run: process %d did not stop at its start (agent not loaded?): "
			  "attaching while it runs", (int)pid);
	int n = host_attach_all(h, pid, 1, cli_verbose, &e);
	if (n < 0) {
		cli_error("run: %s", e.msg);
		kill(pid, SIGKILL);
	}
	if (w == pid)
		kill(pid, SIGCONT);
	if (n < 0) {
		waitpid(pid, status, 0);
		return -1;
	}
	return 0;
}

/* Verify every program as the agent will (it verifies again itself). */
int run_verify(struct object *obj, const char *path)
{
	static char log[16384];
	for (size_t i = 0; i < obj->prog_cnt; i++) {
		struct err e = {{0}};
		struct vfy_opts vo = {.profile = VFY_PROFILE_AUTO, .log_level = VFY_LOG_PATH,
				      .log_buf = log, .log_size = sizeof(log)};
		log[0] = 0;
		if (verifier_check(obj->progs[i], &vo, NULL, &e)) {
			fputs(log, stderr);
			cli_error("%s: program '%s': %s", path, obj->progs[i]->name, e.msg);
			return 1;
		}
	}
	return 0;
}

/* --trace: the tool's `trace` ring buffer (tools/trace.h) is switched on
 * through its `trace_on` map before CMD starts. */
static int run_trace_enable(struct object *obj, const char *file)
{
	struct object_map *rb = object_find_map(obj, "trace");
	struct object_map *on = object_find_map(obj, "trace_on");
	uint32_t zero = 0, one = 1;
	if (!rb || map_get_def(rb->map)->type != MAP_TYPE_RINGBUF || !on ||
	    map_get_def(on->map)->value_size != sizeof(one)) {
		cli_error("run: --trace: %s has no `trace` ring buffer and `trace_on` map "
			  "(tools with them: cudatrace, syncsnoop)", file);
		return 1;
	}
	if (map_update(on->map, &zero, &one, 0)) {
		cli_error("run: --trace: %s: cannot set trace_on", file);
		return 1;
	}
	return 0;
}

int do_run(int argc, char **argv)
{
	const char *tool = NULL, *file = NULL, *out_path = NULL, *trace_path = NULL;
	int json = cli_json, kernel_uprobes = 0, ch;
	static struct run_mem mem;
	struct run_sched rs;
	/* one value an option: getopt_long takes options of the same value
	 * for one, so that a prefix of both (--mem) would not be ambiguous */
	enum {
		OPT_TOOL = CLI_OPT_LONG, OPT_JSON, OPT_KERNEL_UPROBES, OPT_TRACE, OPT_MEM_BUDGET,
		OPT_MEM_POLICY, OPT_MEM_SIGNAL, OPT_MEM_TRACE, OPT_SESSION, OPT_CLASS, OPT_POLICY
	};
	static const struct option longs[] = {
		{"tool", required_argument, NULL, OPT_TOOL},
		{"json", no_argument, NULL, OPT_JSON},
		{"kernel-uprobes", no_argument, NULL, OPT_KERNEL_UPROBES},
		{"trace", required_argument, NULL, OPT_TRACE},
		{"mem-budget", required_argument, NULL, OPT_MEM_BUDGET},
		{"mem-policy", required_argument, NULL, OPT_MEM_POLICY},
		{"mem-signal", required_argument, NULL, OPT_MEM_SIGNAL},
		{"mem-trace", required_argument, NULL, OPT_MEM_TRACE},
		{"session", required_argument, NULL, OPT_SESSION},
		{"class", required_argument, NULL, OPT_CLASS},
		{"policy", required_argument, NULL, OPT_POLICY},
		{0},
	};
	/* options and FILE up to `--`; CMD ARGS after it are left as they are */
	struct cli_opts o = {.cmd = "run", .shorts = "o:", .longs = longs, .keep_rest = 1};

	memset(&rs, 0, sizeof(rs));
	while ((ch = cli_opts_next(&o, argc, argv)) != CLI_OPT_END) {
		switch (ch) {
		case CLI_OPT_HELP:
			fputs(run_usage, stdout);
			fputs(run_sched_usage, stdout);
			return 0;
		case OPT_TOOL:
			tool = o.arg;
			break;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_KERNEL_UPROBES:
			kernel_uprobes = 1;
			break;
		case 'o':
			out_path = o.arg;
			break;
		case OPT_TRACE:
			trace_path = o.arg;
			break;
		case OPT_MEM_BUDGET:
		case OPT_MEM_POLICY:
		case OPT_MEM_SIGNAL:
		case OPT_MEM_TRACE:
			if (run_mem_option(&mem, o.name, o.arg))
				return 2;
			break;
		case OPT_SESSION:
		case OPT_CLASS:
		case OPT_POLICY:
			if (run_sched_option(&rs, o.name, o.arg))
				return 2;
			break;
		case CLI_OPT_ARG:
			if (file) {
				cli_error("run: one object per run (got '%s' and '%s')", file, o.arg);
				return 2;
			}
			file = o.arg;
			break;
		default:
			return 2;
		}
	}
	int i = o.next;
	if (!o.dashdash || i >= argc || (tool && file) ||
	    (!tool && !file && !mem.budget && !rs.o.name && !rs.o.policy && !rs.class_set)) {
		fputs(run_usage, stderr);
		return 2;
	}
	char dir[PATH_MAX], path[PATH_MAX + 64], agent[PATH_MAX + 64], name[256];
	run_exe_dir(dir, sizeof(dir));
	if (tool) {
		static const char *const rel[] = {"bpf/tools/", "../share/gpuext/tools/", NULL};
		snprintf(name, sizeof(name), "%s.bpf.o", tool);
		if (run_find(path, sizeof(path), dir, rel, name)) {
			cli_error("run: no tool '%s' (looked for %s in %sbpf/tools and "
				  "%s../share/gpuext/tools)", tool, name, dir, dir);
			return 1;
		}
		file = path;
	}
	const char *agent_env = getenv("GPUEXT_AGENT");
	static const char *const agent_rel[] = {"", "../lib/", NULL};
	if (agent_env)
		snprintf(agent, sizeof(agent), "%s", agent_env);
	else if (run_find(agent, sizeof(agent), dir, agent_rel, "libgpuext-agent.so")) {
		cli_error("run: libgpuext-agent.so not found next to %s or in ../lib", dir);
		return 1;
	}
	if (run_mem_prepare(&mem))
		return 1;
	if (!tool && !file && !mem.budget)
		return run_sched_plain(&rs, agent, argv + i);
	if (!tool && !file && run_mem_wants_signal(&mem)) {
		static const char *const rel[] = {"bpf/policies/", "../share/gpuext/policies/", NULL};
		if (run_find(path, sizeof(path), dir, rel, RUN_MEM_SIGNAL_OBJ))
			fprintf(stderr, "gpuext: run: --mem-budget: no %s in %sbpf/policies or "
				"%s../share/gpuext/policies: no device access signal, CUPTI's "
				"records drive the policy\n", RUN_MEM_SIGNAL_OBJ, dir, dir);
		else
			file = path;
	} else if (mem.budget && mem.trace_path[0]) {
		cli_error("run: --mem-trace records the device signal, which needs no other "
			  "object and no --mem-signal cupti");
		return 2;
	}
	const struct run_fmt *fmt = file ? run_fmt_of_file(file) : NULL;

	struct object *obj = NULL;
	struct session *s = NULL;
	struct host *h = NULL;
	struct err e = {{0}};
	struct run_trace *trace = NULL;
	int ret = 1;
	FILE *out = stdout;
	if (file && cli_open_object(file, &obj))
		goto out;
	if (obj && session_create(obj, &s, &e)) { /* the verifier reads the maps */
		cli_error("run: %s", e.msg);
		object_free(obj);
		goto out;
	}
	if (!s && (trace_path || kernel_uprobes)) {
		cli_error("run: --trace and --kernel-uprobes need an object (FILE or --tool)");
		goto out;
	}
	if (s && (run_verify(s->obj, file) || (trace_path && run_trace_enable(s->obj, file))))
		goto out;
	if (trace_path && !(trace = run_trace_new(trace_path))) {
		cli_error("run: --trace %s: out of memory", trace_path);
		goto out;
	}
	if (kernel_uprobes && host_open(s->obj, &h, &e)) {
		cli_error("run: %s", e.msg);
		goto out;
	}
	if (out_path && !(out = fopen(out_path, "w"))) {
		cli_error("run: %s: %s", out_path, strerror(errno));
		goto out;
	}
	if ((ret = run_sched_join(&rs, argv[i])) != 0)
		goto out;
	ret = 1;
	const char *old = getenv("LD_PRELOAD");
	char *preload = malloc(strlen(agent) + (old ? strlen(old) : 0) + 2);
	if (!preload)
		goto out;
	sprintf(preload, "%s%s%s", old && *old ? old : "", old && *old ? ":" : "", agent);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		setenv("LD_PRELOAD", preload, 1);
		if (s)
			setenv(SESSION_ENV, s->name, 1);
		run_mem_env(&mem);
		if (h)
			setenv(SESSION_KERNEL_UPROBES_ENV, SESSION_KERNEL_UPROBES_STOP, 1);
		run_sched_child(&rs);
		execvp(argv[i], argv + i);
		fprintf(stderr, "gpuext: run: %s: %s\n", argv[i], strerror(errno));
		_exit(127);
	}
	free(preload);
	if (pid < 0) {
		cli_error("run: fork: %s", strerror(errno));
		goto out;
	}
	int status = 0, exited = 0;
	if (h && (exited = run_kernel_attach(h, pid, &status)) < 0)
		goto out;
	run_sched_started(&rs, pid);
	run_child = pid;
	struct sigaction sa = {.sa_handler = run_forward_signal};
	int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
	for (size_t k = 0; k < sizeof(sigs) / sizeof(sigs[0]); k++)
		sigaction(sigs[k], &sa, NULL);

	struct run_ctx c = {.out = out, .trace = trace, .obj = s ? s->obj : NULL, .fmt = fmt,
			    .json = json};
	while (!exited) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			cli_error("run: waitpid: %s", strerror(errno));
			break;
		}
		if (s)
			run_poll(&c);
		if (h)
			host_poll(h, 0, run_on_kernel_record, &c);
		struct timespec ts = {0, 20 * 1000000L};
		nanosleep(&ts, NULL);
	}
	run_child = 0;
	ret = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	run_mem_report(&mem, out, json);
	if (!s)
		goto out;
	run_poll(&c);
	if (h) {
		host_poll(h, 0, run_on_kernel_record, &c);
		host_detach(h);
		if (host_copy_maps(h, s->obj, &e))
			cli_error("run: reading the kernel's maps: %s", e.msg);
	}
	const struct session_status *st = &s->hdr->status;
	uint64_t drops = 0;
	for (size_t m = 0; m < s->obj->map_cnt; m++)
		if (map_get_def(s->obj->maps[m].map)->type == MAP_TYPE_RINGBUF)
			drops += map_ringbuf_dropped(s->obj->maps[m].map) + st->rb_drops[m];
	if (!fmt || !fmt->summary || fmt->summary(out, s->obj, st, json))
		run_print_maps(out, s->obj, json);
	if (trace) {
		long n = run_trace_close(trace, s->obj, pid);
		trace = NULL;
		if (n >= 0)
			fprintf(stderr, "gpuext: trace: %ld events written to %s\n", n, trace_path);
	}
	if (drops)
		fprintf(stderr, "gpuext: %llu ring buffer records dropped (buffer full)\n",
			(unsigned long long)drops);
	if (cli_verbose || !st->attached)
		fprintf(stderr,
			"gpuext: agent %s; kernels instrumented %u, run unchanged %u, "
			"launches redirected %u\n",
			st->attached ? "attached" : "did not attach (CMD did not load it)",
			st->kernels_instrumented, st->kernels_skipped, st->launches_redirected);
out:
	run_mem_discard(&mem);
	if (trace)
		run_trace_close(trace, NULL, 0); /* CMD did not run: an empty file */
	if (out && out != stdout)
		fclose(out);
	host_close(h);
	session_close(s);
	run_sched_leave(&rs);
	return ret;
}
