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
			fputs("\"error\":\"", stdout);
			for (const char *c = e.msg; *c; c++) {
				if (*c == '"' || *c == '\\')
					putchar('\\');
				if ((unsigned char)*c < 0x20)
					printf("\\u%04x", *c);
				else
					putchar(*c);
			}
			fputs("\",", stdout);
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
	int i = 1, rc = 0;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (cli_is_help(argv[i])) {
			verify_usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--gpu")) {
			opts.profile = VFY_PROFILE_GPU;
		} else if (!strcmp(argv[i], "--log-all")) {
			opts.log_level = VFY_LOG_ALL;
		} else {
			cli_error("verify: unknown option '%s'", argv[i]);
			return 2;
		}
	}
	if (i == argc) {
		verify_usage(stderr);
		return 2;
	}
	if (cli_verbose && !opts.log_level)
		opts.log_level = VFY_LOG_PATH;
	if (object_open(argv[i], &obj, &e) || object_create_maps(obj, &e)) {
		cli_error("%s", e.msg);
		object_free(obj);
		return 1;
	}
	if (opts.log_level && !(log = malloc(VERIFY_LOG_SIZE))) {
		cli_error("out of memory");
		object_free(obj);
		return 1;
	}
	if (i + 1 == argc) {
		for (size_t p = 0; p < obj->prog_cnt; p++)
			rc |= verify_one(obj->progs[p], &opts, log);
	} else {
		for (int a = i + 1; a < argc; a++) {
			struct prog *p = object_find_prog(obj, argv[a]);
			if (!p) {
				cli_error("%s: no program or section '%s'", argv[i], argv[a]);
				rc = 1;
				continue;
			}
			rc |= verify_one(p, &opts, log);
		}
	}
	free(log);
	object_free(obj);
	return rc;
}
