/* SPDX-License-Identifier: MIT */
/*
 * interp.h - the reference interpreter.
 *
 * It trusts verified code: no checks on the hot path, except in
 * bounds-checking mode (prog_run_opts.bounds_check), where every memory
 * access is checked against the regions the program may touch.
 */
#ifndef GPUEXT_BPF_INTERP_H
#define GPUEXT_BPF_INTERP_H

#include "prog.h"

/*
 * Run p and store r0 in *r0.  Returns 0, or a negative errno with e set
 * (bounds violation in checking mode, call depth exceeded, unknown helper).
 */
int interp_run(const struct prog *p, const struct prog_run_opts *opts,
	       uint64_t *r0, struct err *e);

#endif /* GPUEXT_BPF_INTERP_H */
