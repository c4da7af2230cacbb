/* SPDX-License-Identifier: MIT */
/* memcpy_copy benchmark, native column: the same source as bench/progs/memcpy_copy.bpf.c. */
#include "../kernels/memcpy_copy.h"
#include "native.h"

uint64_t native_memcpy_copy(uint8_t *mem, uint64_t len)
{
	return memcpy_copy(mem, len);
}
