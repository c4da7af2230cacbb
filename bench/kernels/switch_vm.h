/* SPDX-License-Identifier: MIT */
/*
 * switch_vm.h - a switch-heavy program: a tiny byte-code interpreter that
 * dispatches on every input byte.  The low 4 bits of a byte select one of
 * 16 operations on an accumulator and four registers; the high 4 bits are the
 * operand.  The cases do different work (no case is a table lookup), so
 * every compiler keeps a real multi-way branch.
 */
#ifndef GPUEXT_BENCH_SWITCH_VM_H
#define GPUEXT_BENCH_SWITCH_VM_H

#include "bench_types.h"

#define SWITCH_VM_MAX_LEN 1024

BENCH_KERNEL switch_vm(bench_u8 *mem, bench_u64 len)
{
	bench_u64 acc = 0, r0 = 1, r1 = 2, r2 = 3, r3 = 4;

	if (len > SWITCH_VM_MAX_LEN)
		len = SWITCH_VM_MAX_LEN;
	for (bench_u64 pc = 0; pc < len; pc++) {
		bench_u8 b = mem[pc];
		bench_u64 arg = b >> 4;

		switch (b & 15) {
		case 0: acc += arg; break;
		case 1: acc -= arg * 3; break;
		case 2: acc ^= acc << 13; break;
		case 3: acc ^= acc >> 7; break;
		case 4: r0 += acc; break;
		case 5: r1 ^= acc + arg; break;
		case 6: r2 = r2 * 5 + r0; break;
		case 7: r3 -= r1 | arg; break;
		case 8: acc = acc * 0x9e3779b97f4a7c15ull; break;
		case 9: acc += r0 & r1; break;
		case 10: acc = (acc << (arg + 1)) | (acc >> (63 - arg)); break;
		case 11: if (acc & 1) acc += r2; else acc -= r3; break;
		case 12: r0 = acc; acc = r1; break;
		case 13: acc += mem[(pc + arg) & (len - 1)]; break;
		case 14: r1 += r2 ^ r3; break;
		default: acc = ~acc; break;
		}
	}
	return acc ^ r0 ^ r1 ^ r2 ^ r3;
}

#endif
