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

/* What a block program's code reads of its record (ptx_inject.h,
 * PTX_BLOCK_CTX_WORD). */
struct ptx_block_use {
	unsigned words; /* bit n: it reads word n from its register */
	int mem;        /* it reads the record in shared memory */
};

struct ptx_block {
	const struct ptx_module *m;
	const struct ptx_inject_opts *o;
	const char *pfx;     /* the injector's fresh name prefix, without '%' */
	int on;              /* the kernel gets block probes or block-local arrays */
	int exit_by_barrier; /* block_exit: the last exit found by a barrier */
	int counted;         /* block_exit: the last exit found by the counter */
	struct ptx_block_use entry, exit; /* of block_entry_code, block_exit_code */
	int record_at_entry; /* thread (0,0,0) writes the whole record at entry */
	int start_reg;       /* the start time kept for the exit in PFX_start */
	int start_shared;    /* the start time kept for the exit in the record */
	int record_used;     /* the kernel declares the record (PFX_blk) */
	/* the sunk code: right before statement sink_at of the module, past
	 * the kernel's first global loads (and, for a thread that never gets
	 * there, in the exit block), once per thread; 0: none */
	size_t sink_at;
	/* every way past sink_at is one of the forward branches before it: the
	 * sunk code's second copy goes on those branches (out of line, ahead
	 * of their targets), not in the exit block, which every warp passes */
	int skips_by_branch;
	int entry_sunk; /* the block_entry program runs there (else at entry) */
	/* the probes' code names PTX_BLOCK_INDEX_REG: every thread computes
	 * it, in the sunk code where index_sunk, else at entry */
	int index_reg, index_sunk;
	/* the flat form (ptx_inject_opts.flat_twin): the launch's grid and
	 * blocks are 1-D, so the block index is %ctaid.x and thread (0,0,0)
	 * the one whose %tid.x is 0 */
	int flat;
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
/* With sink_at: right before statement sink_at, and at the start of the
 * exit block (which the kernel then has) or, with skips_by_branch, on each
 * branch that skips sink_at: the first time a thread gets to either, the
 * block index register (index_sunk) and, in thread (0,0,0), the
 * block_entry program (entry_sunk). */
void ptx_block_entry_sunk(const struct ptx_block *k, struct ptx_buf *b);
/* Is statement i of the module one of the branches that skip sink_at? */
int ptx_block_is_skip(const struct ptx_block *k, size_t i);

#endif /* GPUEXT_PTX_BLOCK_H */
