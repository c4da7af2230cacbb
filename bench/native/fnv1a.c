/* SPDX-License-Identifier: MIT */
/* fnv1a benchmark, native column: the same source as bench/progs/fnv1a.bpf.c. */
#include "../kernels/fnv1a.h"
#include "native.h"

uint64_t native_fnv1a(uint8_t *mem, uint64_t len)
{
	return fnv1a(mem, len);
}
