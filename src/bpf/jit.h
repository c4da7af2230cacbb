/* SPDX-License-Identifier: MIT */
/*
 * jit.h - the x86-64 JIT: a program compiled to native code on the host.
 *
 * jit_compile() turns a program (object form, see prog.h) into machine code
 * stored in p->jit; jit_run() runs it.  Helper addresses are bound at compile
 * time from the table given to jit_compile(), map references to the
 * addresses of p->maps[] (which must outlive the code).  The generated code
 * trusts the program as the interpreter does: only verified programs are
 * safe to run.
 */
#ifndef GPUEXT_BPF_JIT_H
#define GPUEXT_BPF_JIT_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "prog.h"

struct helper_table;

/*
 * Compile p (replacing any earlier image).  helpers NULL means
 * helper_table_default().  Returns 0, or a negative errno with e naming
 * the instruction that cannot be compiled.
 */
int jit_compile(struct prog *p, const struct helper_table *helpers, struct err *e);

/*
 * Run the compiled p with r1..r5 = opts->args and store r0.  opts->helpers
 * must be NULL or the table p was compiled with.  opts->bounds_check is the
 * interpreter's business and is ignored here.  Returns 0, or a negative
 * errno with e set (not compiled, call depth exceeded).
 */
int jit_run(const struct prog *p, const struct prog_run_opts *opts, uint64_t *r0,
	    struct err *e);

/*
 * The native entry of a compiled program that cannot fault at run time (one
 * without local calls and callx): r0 = fn(r1, r2, r3, r4, r5), no jit_run()
 * in between, no state.  It is what a hot caller (a host probe) keeps and
 * calls; jit_run() calls it too.  NULL when p is not compiled or can fault:
 * run it with jit_run().
 */
typedef uint64_t (*jit_direct_fn)(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				  uint64_t r5);
jit_direct_fn jit_direct(const struct prog *p);

/* The machine code of the compiled p (NULL, 0 when not compiled). */
const uint8_t *jit_code(const struct prog *p, size_t *len);

/* Drop the compiled code (no-op when there is none). */
void jit_free(struct prog *p);

#endif /* GPUEXT_BPF_JIT_H */
