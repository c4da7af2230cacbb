/* SPDX-License-Identifier: MIT */
#include "ptx_arena.h"

#include <errno.h>
#include <stdlib.h>

enum { PTX_ARENA_ALIGN = 256 }; /* as cuMemAlloc's: the maps' values stay 8-aligned */

void ptx_arena_free(struct ptx_arena *a)
{
	if (!a)
		return;
	if (a->mem) {
		a->cu->mem_unmap(a->base, a->size);
		a->cu->mem_release(a->mem);
	}
	if (a->base)
		a->cu->mem_address_free(a->base, a->size);
	free(a->at);
	free(a->bytes);
	free(a);
}

int ptx_arena_make(const struct cu_driver *cu, CUdevice dev, uint64_t va, const size_t *bytes,
		   size_t n, struct ptx_arena **out, struct err *e)
{
	CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
				    .location = {CU_MEM_LOCATION_TYPE_DEVICE, dev}};
	CUmemAccessDesc rw = {{CU_MEM_LOCATION_TYPE_DEVICE, dev},
			      CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
	struct ptx_arena *a = calloc(1, sizeof(*a));
	size_t gran = 0, off = 0;
	CUresult r;
	int err = 0;

	*out = NULL;
	if (!a || !(a->at = calloc(n + 1, sizeof(*a->at))) ||
	    !(a->bytes = calloc(n + 1, sizeof(*a->bytes)))) {
		ptx_arena_free(a);
		return err_set(e, ENOMEM, "out of memory");
	}
	a->cu = cu;
	a->n = n;
	for (size_t k = 0; k < n; k++) {
		a->at[k] = off;
		a->bytes[k] = bytes[k];
		off += (a->bytes[k] + PTX_ARENA_ALIGN - 1) & ~(size_t)(PTX_ARENA_ALIGN - 1);
	}
	r = cu->mem_get_allocation_granularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
	if (r != CUDA_SUCCESS) {
		err = cu_err(cu, e, r, "cuMemGetAllocationGranularity");
		goto fail;
	}
	if (!gran || va % gran) {
		err = err_set(e, EINVAL, "address 0x%llx is not a multiple of the GPU's "
			      "granularity (%zu bytes)", (unsigned long long)va, gran);
		goto fail;
	}
	a->size = (off + gran - 1) / gran * gran;
	if (!a->size)
		a->size = gran;
	if ((r = cu->mem_address_reserve(&a->base, a->size, 0, va, 0)) != CUDA_SUCCESS) {
		a->base = 0;
		err = cu_err(cu, e, r, "cuMemAddressReserve");
		goto fail;
	}
	if (a->base != va) {
		err = err_set(e, EADDRINUSE, "the driver reserved 0x%llx, not 0x%llx (a context "
			      "exists already, or the range is taken)",
			      (unsigned long long)a->base, (unsigned long long)va);
		goto fail;
	}
	if ((r = cu->mem_create(&a->mem, a->size, &prop, 0)) != CUDA_SUCCESS) {
		a->mem = 0;
		err = cu_err(cu, e, r, "cuMemCreate");
		goto fail;
	}
	if ((r = cu->mem_map(a->base, a->size, 0, a->mem, 0)) != CUDA_SUCCESS) {
		cu->mem_release(a->mem);
		a->mem = 0;
		err = cu_err(cu, e, r, "cuMemMap");
		goto fail;
	}
	if ((r = cu->mem_set_access(a->base, a->size, &rw, 1)) != CUDA_SUCCESS) {
		err = cu_err(cu, e, r, "cuMemSetAccess");
		goto fail;
	}
	for (size_t k = 0; k < n; k++)
		a->at[k] += a->base;
	*out = a;
	return 0;
fail:
	err_prefix(e, "the device maps' arena (%zu bytes at 0x%llx): ", a->size,
		   (unsigned long long)va);
	ptx_arena_free(a);
	return err;
}

CUdeviceptr ptx_arena_at(const struct ptx_arena *a, size_t k, size_t bytes)
{
	return a && k < a->n && a->bytes[k] == bytes ? a->at[k] : 0;
}
