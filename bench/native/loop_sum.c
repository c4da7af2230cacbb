/* SPDX-License-Identifier: MIT */
/* loop_sum benchmark, native column: the same source as bench/progs/loop_sum.bpf.c. */
#include "../kernels/loop_sum.h"
#include "native.h"

uint64_t native_loop_sum(uint8_t *mem, uint64_t len)
{
	return loop_sum(mem, len);
}
