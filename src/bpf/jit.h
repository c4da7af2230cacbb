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
 * The hot path, for callers that run one compiled program very often (the
 * in-process API probes, where jit_run's checks are a measurable share of
 * a probed call): the code's entry, called as
 *     struct jit_hot_fault f;  f.kind = 0;
 *     r0 = entry(r1, r2, r3, r4, r5, &f);
 * f.kind != 0 afterwards is the error jit_run() would have returned (the
 * code writes f only on a fault, all of it).  The
 * program runs with the helper table it was compiled with.  NULL when p is
 * not compiled; valid until p is compiled again or freed.
 */
struct jit_hot_fault {
	int32_t insn;   /* -1, or the instruction that faulted */
	int32_t kind;   /* 0: no fault */
	uint64_t value; /* the helper id of a bad callx */
};
typedef uint64_t (*jit_hot_fn)(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
			       uint64_t r5, struct jit_hot_fault *fault);
jit_hot_fn jit_hot_entry(const struct prog *p);

/* The machine code of the compiled p (NULL, 0 when not compiled). */
const uint8_t *jit_code(const struct prog *p, size_t *len);

/* Drop the compiled code (no-op when there is none). */
void jit_free(struct prog *p);

#endif /* GPUEXT_BPF_JIT_H */
