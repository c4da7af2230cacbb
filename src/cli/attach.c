/* SPDX-License-Identifier: MIT */
/*
 * attach.c - `gpuext attach [-p PID] FILE.bpf.o [--duration S] [--json] [-o FILE]`:
 * verify the object, load its uprobe programs into the kernel (src/host/),
 * attach them to a running process (no restart) or to every process, print
 * ring buffer records as they come and the maps when it stops: on Ctrl-C,
 * after --duration, or when the process exits.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpf/object.h"
#include "bpf/session.h"
#include "cli.h"
#include "host/host.h"
#include "run.h"

static const char attach_usage[] =
	"Usage: gpuext attach [-p PID] FILE.bpf.o [--duration S] [--json] [-o FILE]\n\n"
	"Verify the programs of FILE, load its uprobe/ and uretprobe/ programs into the\n"
	"kernel (libbpf) and attach them as kernel uprobes to the running process PID\n"
	"(no restart; every process when -p is not given).  Targets:\n"
	"  uprobe/FUNC        FUNC of libcuda.so.1, else of the first library of PID\n"
	"                     that defines it\n"
	"  uprobe/LIB:FUNC    FUNC of the library PID has mapped as LIB (libcudart.so)\n"
	"  uprobe/PATH:FUNC   FUNC of the file PATH\n"
	"uretprobe/... the same at return.  Prints ring buffer records as they arrive\n"
	"and every non-empty map when it stops: on Ctrl-C (SIGINT/SIGTERM), after S\n"
	"seconds, or when PID exits.  Needs root, or CAP_BPF and CAP_PERFMON.\n"
	"-v prints where each probe went.  Device programs of FILE are not run (they\n"
	"need the agent: gpuext run).\n";

static volatile sig_atomic_t attach_stop;

static void attach_on_signal(int sig)
{
	attach_stop = sig;
}

struct attach_ctx {
	FILE *out;
	const struct object *obj;
	const struct run_fmt *fmt;
	int json;
};

static int attach_on_record(void *arg, const char *map, const void *data, size_t size)
{
	struct attach_ctx *c = arg;
	run_emit_record(c->out, c->obj, c->fmt, map, data, size, c->json);
	return 0;
}

/* Has pid exited (gone, or a zombie nobody has reaped yet)? */
static int attach_gone(pid_t pid)
{
	char name[64], buf[256];
	snprintf(name, sizeof(name), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(name, "re");
	if (!f)
		return errno == ENOENT || errno == ESRCH;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *paren = strrchr(buf, ')'); /* comm may hold spaces and parens */
	return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

static double attach_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* -p's argument: a positive process id. */
static int attach_parse_pid(const char *s, pid_t *pid)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > INT32_MAX) {
		cli_error("attach: -p needs a process id, got '%s'", s);
		return 2;
	}
	*pid = (pid_t)v;
	return 0;
}

static int attach_parse_duration(const char *s, double *secs)
{
	char *end;
	*secs = strtod(s, &end);
	if (end == s || *end || !(*secs > 0)) {
		cli_error("attach: --duration needs a positive number of seconds, got '%s'", s);
		return 2;
	}
	return 0;
}

int do_attach(int argc, char **argv)
{
	const char *file = NULL, *out_path = NULL;
	pid_t pid = -1;
	double duration = 0;
	int json = cli_json, st;

	enum { OPT_DURATION = CLI_OPT_LONG, OPT_JSON };
	static const struct option longs[] = {
		{"duration", required_argument, NULL, OPT_DURATION},
		{"json", no_argument, NULL, OPT_JSON},
		{0},
	};
	struct cli_opts o = {.cmd = "attach", .shorts = "p:o:", .longs = longs};
	int ch;
	while ((ch = cli_opts_next(&o, argc, argv)) != CLI_OPT_END) {
		st = 0;
		switch (ch) {
		case CLI_OPT_HELP:
			fputs(attach_usage, stdout);
			return 0;
		case 'p':
			st = attach_parse_pid(o.arg, &pid);
			break;
		case OPT_DURATION:
			st = attach_parse_duration(o.arg, &duration);
			break;
		case OPT_JSON:
			json = 1;
			break;
		case 'o':
			out_path = o.arg;
			break;
		case CLI_OPT_ARG:
			if (file) {
				cli_error("attach: one object per attach (got '%s' and '%s')", file,
					  o.arg);
				return 2;
			}
			file = o.arg;
			break;
		default:
			return 2;
		}
		if (st)
			return st;
	}
	if (!file) {
		fputs(attach_usage, stderr);
		return 2;
	}
	if (pid > 0 && kill(pid, 0) && errno == ESRCH) {
		cli_error("attach: no process %d", (int)pid);
		return 1;
	}

	struct object *obj = NULL;
	struct host *h = NULL;
	struct err e = {{0}};
	FILE *out = stdout;
	int ret = 1;
	if (cli_open_object(file, &obj))
		return 1;
	if (object_create_maps(obj, &e)) { /* the verifier reads the maps */
		cli_error("attach: %s", e.msg);
		goto out;
	}
	if (run_verify(obj, file))
		goto out;
	/* Where each probe goes, before asking the kernel: a wrong target is
	 * reported the same with or without the privileges to load. */
	for (size_t i = 0; i < obj->prog_cnt; i++) {
		const char *target;
		struct host_target t;
		if (host_section_target(obj->progs[i]->section, &target, &st) &&
		    host_resolve(target, pid, 0, &t, &e)) {
			cli_error("attach: %s: section '%s': %s", file, obj->progs[i]->section,
				  e.msg);
			goto out;
		}
	}
	if (host_open(obj, &h, &e)) {
		cli_error("attach: %s", e.msg);
		goto out;
	}
	int n = host_attach_all(h, pid, 0, cli_verbose, &e);
	if (n < 0) {
		cli_error("attach: %s", e.msg);
		goto out;
	}
	if (out_path && !(out = fopen(out_path, "w"))) {
		cli_error("attach: %s: %s", out_path, strerror(errno));
		goto out;
	}
	struct sigaction sa = {.sa_handler = attach_on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (pid > 0)
		fprintf(stderr, "gpuext: %d probes attached to process %d; Ctrl-C to detach\n", n,
			(int)pid);
	else
		fprintf(stderr, "gpuext: %d probes attached to every process; Ctrl-C to detach\n",
			n);

	struct attach_ctx c = {.out = out, .obj = obj, .fmt = run_fmt_of_file(file),
			       .json = json};
	double start = attach_now();
	const char *why = "interrupted";
	for (;;) {
		if (attach_stop)
			break;
		if (duration > 0 && attach_now() - start >= duration) {
			why = "duration reached";
			break;
		}
		if (pid > 0 && attach_gone(pid)) {
			why = "process exited";
			break;
		}
		int got = host_poll(h, 100, attach_on_record, &c);
		if (got < 0) {
			cli_error("attach: reading ring buffers: %s", strerror(-got));
			break;
		}
		fflush(out);
	}
	host_detach(h);
	host_poll(h, 0, attach_on_record, &c);
	fprintf(stderr, "gpuext: detached after %.1f s (%s)\n", attach_now() - start, why);
	if (host_copy_maps(h, obj, &e)) {
		cli_error("attach: reading the kernel's maps: %s", e.msg);
		goto out;
	}
	static const struct session_status no_agent; /* formatters' view: no agent */
	if (!c.fmt || !c.fmt->summary || c.fmt->summary(out, obj, &no_agent, json))
		run_print_maps(out, obj, json);
	ret = 0;
out:
	if (out && out != stdout)
		fclose(out);
	host_close(h);
	object_free(obj);
	return ret;
}
