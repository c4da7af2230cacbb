/* SPDX-License-Identifier: MIT */
/*
 * ptx_block.h - block probes in an instrumented kernel (internal to
 * src/ptx): the code ptx_inject() writes at the kernel's entry and in its
 * exit block for block_entry_code, block_exit_code and block-local arrays
 * (struct ptx_inject_opts says what they mean), and the .shared
 * declarations they use.
 */
#ifndef GPUEXT_PTX_BLOCK_H
#define GPUEXT_PTX_BLOCK_H

#include "ptx_buf.h"
#include "ptx_inject.h"

struct ptx_module;
struct ptx_func;

struct ptx_block {
	const struct ptx_module *m;
	const struct ptx_inject_opts *o;
	const char *pfx;     /* the injector's fresh name prefix, without '%' */
	int on;              /* the kernel gets block probes or block-local arrays */
	int exit_by_barrier; /* block_exit: the last exit found by a barrier */
};

/* Decide for kernel f of m what o asks (pfx must outlive k). */
void ptx_block_init(struct ptx_block *k, const struct ptx_module *m, const struct ptx_func *f,
		    const struct ptx_inject_opts *o, const char *pfx);
/* Module scope, before the kernel's header: the record's .shared variable. */
void ptx_block_record_decl(const struct ptx_block *k, struct ptx_buf *b);
/* Module scope, before the extra code: the block-local arrays. */
void ptx_block_arrays_decl(const struct ptx_inject_opts *o, struct ptx_buf *b);
/* Before the kernel's first instruction (and before a warp entry probe). */
void ptx_block_entry(const struct ptx_block *k, struct ptx_buf *b);
/* In the exit block, before a warp exit probe (only with block_exit_code). */
void ptx_block_exit(const struct ptx_block *k, struct ptx_buf *b);

#endif /* GPUEXT_PTX_BLOCK_H */
