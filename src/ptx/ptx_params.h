/* SPDX-License-Identifier: MIT */
/*
 * ptx_params.h - the layout of a kernel's parameter list (internal to
 * src/ptx): how many parameters, where the list ends, where each one lies
 * in the parameter buffer that cuLaunchKernel's `extra` form passes.
 *
 * Offsets follow the PTX ABI: each parameter at the next multiple of its
 * alignment (its element size, or `.align N` of an array; a `.ptr ...
 * .align N` is the pointee's alignment, not the parameter's).
 */
#ifndef GPUEXT_PTX_PARAMS_H
#define GPUEXT_PTX_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/err.h"

struct ptx_module;
struct ptx_func;

struct ptx_param_layout {
	size_t count;   /* parameters */
	size_t bytes;   /* end of the last one in the buffer */
	uint32_t open;  /* token of the list's '(' ; UINT32_MAX: the kernel has no list */
	uint32_t close; /* token of its ')' ; the name's token when there is no list */
};

/* The layout of f's parameter list; EINVAL naming the line when a parameter's
 * type or shape is not one the layout rules know (.texref and the like). */
int ptx_param_layout(const struct ptx_module *m, const struct ptx_func *f,
		     struct ptx_param_layout *l, struct err *e);

/* Bits of a .b8/.u32/.f16x2/... type name (without the dot); 0: not a type. */
unsigned ptx_type_bits(const char *s, size_t n);

#endif /* GPUEXT_PTX_PARAMS_H */
