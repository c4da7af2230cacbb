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
#include "jit.h"
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
	case PROG_BACKEND_JIT: {
		if (p->jit)
			return jit_run(p, &o, r0, e);
		/* Not compiled yet (p is const here): compile a copy for this
		 * run.  Callers that run a program often call jit_compile once. */
		struct prog copy = *p;
		int rc = jit_compile(&copy, o.helpers, e);
		if (!rc)
			rc = jit_run(&copy, &o, r0, e);
		jit_free(&copy);
		return rc;
	}
	default:
		return err_set(e, ENOTSUP, "prog '%s': backend %d is not available", p->name, b);
	}
}
