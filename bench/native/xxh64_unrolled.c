/* SPDX-License-Identifier: MIT */
/* xxh64_unrolled benchmark, native column: the same source as bench/progs/xxh64_unrolled.bpf.c. */
#include "../kernels/xxh64_unrolled.h"
#include "native.h"

uint64_t native_xxh64_unrolled(uint8_t *mem, uint64_t len)
{
	return xxh64_unrolled(mem, len);
}
