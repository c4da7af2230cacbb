/* SPDX-License-Identifier: MIT */
/*
 * prog_run.c - run a program on the host with one of the backends, the way
 * bpf_prog_test_run does: the caller gives r1..r5 (and memory for bounds
 * checking), gets r0.
 */
#include <errno.h>
#include <stddef.h>

#include "helpers.h"
#include "interp.h"
#include "prog.h"

int prog_run(const struct prog *p, enum prog_backend b, const struct prog_run_opts *opts,
	     uint64_t *r0, struct err *e)
{
	struct prog_run_opts o = {0};

	if (opts)
		o = *opts;
	if (!o.helpers)
		o.helpers = helper_table_default();
	switch (b) {
	case PROG_BACKEND_INTERP:
		return interp_run(p, &o, r0, e);
	default:
		return err_set(e, ENOTSUP, "prog '%s': backend %d is not available", p->name, b);
	}
}
