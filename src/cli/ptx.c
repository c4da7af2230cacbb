/* SPDX-License-Identifier: MIT */
/*
 * ptx.c - `gpuext ptx FILE SECTION [--target sm_XX] [--mode warp|thread]`:
 * print the PTX module a program becomes (no GPU needed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/object.h"
#include "cli.h"
#include "ptx/ptx_emit.h"
#include "ptx/ptx_wrap.h"

static const char ptx_usage[] =
	"Usage: gpuext ptx FILE SECTION [--target sm_XX] [--mode warp|thread]\n\n"
	"Translate the program of FILE (a clang -target bpf object) named SECTION\n"
	"(section or function name) into PTX and print the module: header for the\n"
	"target (default sm_75), the device runtime when the program calls helpers,\n"
	"the program's functions, and its entry point: for gpu/entry, gpu/exit and\n"
	"gpu/mem programs the probe function (--mode: once per warp, the default, or\n"
	"every thread), for gpu/block_entry and gpu/block_exit the probe function the\n"
	"kernel's block code calls once per block (r1 = the block's record), for\n"
	"others the standalone kernel `run-gpu` launches.  Map\n"
	"addresses are left 0: they are filled in when the program is loaded.\n";

int do_ptx(int argc, char **argv)
{
	const char *path = NULL, *section = NULL, *target = "sm_75";
	enum ptx_mode mode = PTX_MODE_WARP;
	struct ptx_target t;
	struct object *obj = NULL;
	struct err e = {{0}};
	struct ptx_buf b = {0};
	char sym[128];
	int ret = 1;

	enum { OPT_TARGET = CLI_OPT_LONG, OPT_MODE };
	static const struct option longs[] = {
		{"target", required_argument, NULL, OPT_TARGET},
		{"mode", required_argument, NULL, OPT_MODE},
		{0},
	};
	struct cli_opts args = {.cmd = "ptx", .longs = longs};
	int c;
	while ((c = cli_opts_next(&args, argc, argv)) != CLI_OPT_END) {
		if (c == CLI_OPT_HELP) {
			fputs(ptx_usage, stdout);
			return 0;
		} else if (c == OPT_TARGET) {
			target = args.arg;
		} else if (c == OPT_MODE && strcmp(args.arg, "warp") && strcmp(args.arg, "thread")) {
			cli_error("ptx: --mode is warp or thread, not '%s'", args.arg);
			return 2;
		} else if (c == OPT_MODE) {
			mode = !strcmp(args.arg, "warp") ? PTX_MODE_WARP : PTX_MODE_THREAD;
		} else if (c != CLI_OPT_ARG || cli_take_file_section("ptx", args.arg, &path, &section)) {
			return 2;
		}
	}
	if (!path || !section) {
		fputs(ptx_usage, stderr);
		return 2;
	}
	if (ptx_target_parse(target, &t, &e)) {
		cli_error("ptx: %s", e.msg);
		return 2;
	}
	if (object_open(path, &obj, &e)) {
		cli_error("%s", e.msg);
		return 1;
	}
	struct prog *p = object_find_prog(obj, section);
	if (!p) {
		cli_error("%s: no program named or in section '%s'", path, section);
		goto out;
	}
	struct ptx_emit_opts o = {.comments = 1};
	ptx_emit_header(&b, &t);
	if (ptx_emit_needs_runtime(p, &o))
		ptx_emit_runtime(&b);
	if (ptx_emit_prog(&b, p, &o, sym, &e)) {
		cli_error("%s: %s", path, e.msg);
		goto out;
	}
	if (prog_type_is_gpu(p->type))
		ptx_emit_probe(&b, sym, ptx_probe_kind_of(p->type), mode);
	else
		ptx_emit_run_kernel(&b, sym);
	if (b.failed) {
		cli_error("ptx: out of memory");
		goto out;
	}
	fputs(b.text, stdout);
	ret = 0;
out:
	ptx_buf_free(&b);
	object_free(obj);
	return ret;
}
