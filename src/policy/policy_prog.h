/* SPDX-License-Identifier: MIT */
/*
 * policy_prog.h - what the memory and scheduling policy runtimes share:
 * loading one struct_ops member program (the policy layer's own files
 * include it; it is no interface for other layers).
 */
#ifndef GPUEXT_POLICY_PROG_H
#define GPUEXT_POLICY_PROG_H

#include <stdint.h>

#include "bpf/err.h"
#include "bpf/helpers.h"
#include "bpf/object.h"
#include "bpf/prog.h"

/*
 * Verify p, the program of op `op_name` in obj, against the policy's
 * helper prototypes and the op's ctx size, then compile it with helpers.
 * *backend: the JIT, or the interpreter when p cannot be compiled.  0, or
 * the verifier's error with e naming the object, op and program.
 */
int policy_prog_load(const struct object *obj, const char *op_name, struct prog *p,
		     const struct helper_proto *(*proto)(uint32_t id), uint32_t ctx_size,
		     const struct helper_table *helpers, enum prog_backend *backend,
		     struct err *e);

#endif /* GPUEXT_POLICY_PROG_H */
