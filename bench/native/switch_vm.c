/* SPDX-License-Identifier: MIT */
/* switch_vm benchmark, native column: the same source as bench/progs/switch_vm.bpf.c. */
#include "../kernels/switch_vm.h"
#include "native.h"

uint64_t native_switch_vm(uint8_t *mem, uint64_t len)
{
	return switch_vm(mem, len);
}
