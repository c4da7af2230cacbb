/* SPDX-License-Identifier: MIT */
/*
 * jit_mem.h - W^X memory for generated code.
 *
 * Code is written while the pages are read-write and then sealed read+execute;
 * a page is never writable and executable at once.
 */
#ifndef GPUEXT_BPF_JIT_MEM_H
#define GPUEXT_BPF_JIT_MEM_H

#include <stddef.h>

#include "err.h"

struct jit_mem {
	void *base;     /* page-aligned */
	size_t mapped;  /* bytes mapped, a multiple of the page size */
};

/* Map at least size bytes read-write. */
int jit_mem_alloc(struct jit_mem *m, size_t size, struct err *e);
/* Make the pages read+execute (no longer writable). */
int jit_mem_seal(struct jit_mem *m, struct err *e);
/* Unmap; accepts a zeroed or half-built jit_mem. */
void jit_mem_free(struct jit_mem *m);

#endif /* GPUEXT_BPF_JIT_MEM_H */
