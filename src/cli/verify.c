/* SPDX-License-Identifier: MIT */
/*
 * verify.c - `gpuext verify FILE [SECTION|NAME]...` (also reachable as
 * `gpuext prog verify`): run the verifier on the programs of an object and
 * print OK or the error, with statistics.  -v prints the log of the failing
 * path; --log-all every instruction of every path; --gpu forces the device
 * profile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/object.h"
#include "bpf/verifier.h"
#include "cli.h"
#include "policy/mem.h"
#include "policy/sched.h"
#include "ptx/ptx_helpers.h"

enum { VERIFY_LOG_SIZE = 1 << 22 };

static int verify_one(struct prog *p, const struct vfy_opts *base, char *log)
{
	struct vfy_opts opts = *base;
	struct vfy_stats st;
	struct err e = {""};

	opts.log_buf = log;
	opts.log_size = log ? VERIFY_LOG_SIZE : 0;
	/* Programs checked for the GPU see the device runtime's helpers. */
	if (opts.profile == VFY_PROFILE_GPU ||
	    (opts.profile == VFY_PROFILE_AUTO && prog_type_is_gpu(p->type)))
		opts.helper_proto = ptx_helper_proto_find;
	/* Policy programs see the policy helpers and, for a section named
	 * after an op (struct_ops/gpu_evict_prepare), that op's ctx size. */
	if (p->type == PROG_TYPE_STRUCT_OPS && sched_policy_ctx_size(p->target)) {
		opts.helper_proto = sched_policy_helper_proto;
		opts.ctx_size = sched_policy_ctx_size(p->target);
	} else if (p->type == PROG_TYPE_STRUCT_OPS) {
		opts.helper_proto = mem_policy_helper_proto;
		opts.ctx_size = mem_policy_ctx_size(p->target);
	}
	int err = verifier_check(p, &opts, &st, &e);
	if (err && log && log[0])
		fputs(log, stderr);
	if (cli_json) {
		printf("{\"prog\":\"%s\",\"section\":\"%s\",\"ok\":%s,", p->name, p->section,
		       err ? "false" : "true");
		if (err) {
			fputs("\"error\":", stdout);
			cli_json_str(stdout, e.msg);
			fputs(",", stdout);
		}
		printf("\"insns\":%zu,\"insns_processed\":%llu,\"states\":%u,\"peak_states\":%u,"
		       "\"pruned\":%u,\"stack_depth\":%u,\"time_us\":%.1f}\n",
		       p->insn_cnt, (unsigned long long)st.insns_processed, st.states,
		       st.peak_states, st.pruned, st.stack_depth, (double)st.time_ns / 1e3);
	} else {
		printf("%s (%s): %s", p->name, p->section, err ? "FAIL" : "OK");
		if (err)
			printf(": %s", e.msg);
		printf("\n  %zu insns, %llu processed, %u states (peak %u), %u pruned, "
		       "stack %u bytes, %.3f ms\n",
		       p->insn_cnt, (unsigned long long)st.insns_processed, st.states,
		       st.peak_states, st.pruned, st.stack_depth, (double)st.time_ns / 1e6);
	}
	return err ? 1 : 0;
}

static void verify_usage(FILE *out)
{
	fprintf(out, "Usage: gpuext verify [--gpu] [--log-all] FILE [SECTION|NAME]...\n"
		     "Verify the programs of FILE (all of them, or those named) and print OK\n"
		     "or the error and statistics. -v (global) prints the failing path's log.\n");
}

int do_verify(int argc, char **argv)
{
	struct vfy_opts opts = {.profile = VFY_PROFILE_AUTO};
	struct object *obj = NULL;
	struct err e = {""};
	char *log = NULL;
	enum { OPT_GPU = CLI_OPT_LONG, OPT_LOG_ALL };
	static const struct option longs[] = {
		{"gpu", no_argument, NULL, OPT_GPU},
		{"log-all", no_argument, NULL, OPT_LOG_ALL},
		{0},
	};
	/* argv[0]: "verify", or "verify" of `gpuext prog verify` */
	struct cli_opts o = {.cmd = argv[0], .longs = longs};
	const char *file = NULL, **names = calloc((size_t)argc, sizeof(*names));
	int nnames = 0, c, rc = 2;

	if (!names) {
		cli_error("out of memory");
		return 1;
	}
	while ((c = cli_opts_next(&o, argc, argv)) != CLI_OPT_END) {
		if (c == CLI_OPT_HELP) {
			verify_usage(stdout);
			rc = 0;
			goto out;
		} else if (c == OPT_GPU) {
			opts.profile = VFY_PROFILE_GPU;
		} else if (c == OPT_LOG_ALL) {
			opts.log_level = VFY_LOG_ALL;
		} else if (c == CLI_OPT_ARG && !file) {
			file = o.arg;
		} else if (c == CLI_OPT_ARG) {
			names[nnames++] = o.arg;
		} else {
			goto out;
		}
	}
	if (!file) {
		verify_usage(stderr);
		goto out;
	}
	rc = 1;
	if (cli_verbose && !opts.log_level)
		opts.log_level = VFY_LOG_PATH;
	if (object_open(file, &obj, &e) || object_create_maps(obj, &e)) {
		cli_error("%s", e.msg);
		goto out;
	}
	if (opts.log_level && !(log = malloc(VERIFY_LOG_SIZE))) {
		cli_error("out of memory");
		goto out;
	}
	rc = 0;
	for (size_t p = 0; !nnames && p < obj->prog_cnt; p++)
		rc |= verify_one(obj->progs[p], &opts, log);
	for (int a = 0; a < nnames; a++) {
		struct prog *p = object_find_prog(obj, names[a]);
		if (!p) {
			cli_error("%s: no program or section '%s'", file, names[a]);
			rc = 1;
			continue;
		}
		rc |= verify_one(p, &opts, log);
	}
out:
	free(log);
	free(names);
	object_free(obj);
	return rc;
}
