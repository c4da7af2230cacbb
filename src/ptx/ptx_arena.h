/* SPDX-License-Identifier: MIT */
/*
 * ptx_arena.h - the device maps' memory at a fixed virtual address.
 *
 * Instrumented code compiled before its maps exist (ahead of the first
 * launch, with no context; or kept in the module cache across runs) can
 * have the maps' addresses as immediates only if they are known then: one
 * address range reserved at an address chosen in advance (the driver's
 * virtual memory management: cuMemAddressReserve at va, cuMemCreate,
 * cuMemMap, cuMemSetAccess), with room for each map of an object at an
 * offset fixed by the maps' sizes alone (ptx_rt_map_bytes, in object
 * order, 256-byte aligned).  Below ptx_rt: it places bytes, knows no map.  The same object on the same GPU then has its
 * maps at the same addresses in every run.
 *
 * The driver honours the requested address only before any context exists
 * (measured on the H200, CUDA 13: once one is current it picks its own), so
 * the arena is made before, and any answer but va -- elsewhere, or a
 * failure -- makes none (everything made released): the caller then keeps
 * the maps where cuMemAlloc puts them.  The mapping outlives contexts (a
 * primary context reset too): an arena is made once per process and kept.
 */
#ifndef GPUEXT_PTX_ARENA_H
#define GPUEXT_PTX_ARENA_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/err.h"
#include "cuda/cu_driver.h"

/* The default address: far above where Linux puts a process's mappings
 * and the driver its own ranges. */
#define PTX_ARENA_VA 0x200000000000ull

struct ptx_arena {
	const struct cu_driver *cu;
	CUdeviceptr base; /* == the va asked for */
	size_t size;      /* reserved and mapped, a multiple of the granularity */
	CUmemGenericAllocationHandle mem;
	size_t n;
	CUdeviceptr *at; /* map k's header, then its data */
	size_t *bytes;   /* map k's header and data */
};

/* An arena at va on GPU dev (with or without a context) for n maps of
 * bytes[0..n) bytes each (header and data: ptx_rt_arena_make gives the
 * sizes from the maps' definitions): 0, or -errno with e saying why there
 * is none. */
int ptx_arena_make(const struct cu_driver *cu, CUdevice dev, uint64_t va, const size_t *bytes,
		   size_t n, struct ptx_arena **out, struct err *e);
void ptx_arena_free(struct ptx_arena *a);

/* Where map k of `bytes` bytes (header and data) goes; 0 when it has no
 * place there (k past the arena's maps, or a size other than planned). */
CUdeviceptr ptx_arena_at(const struct ptx_arena *a, size_t k, size_t bytes);

#endif /* GPUEXT_PTX_ARENA_H */
