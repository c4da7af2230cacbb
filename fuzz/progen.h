/* SPDX-License-Identifier: MIT */
/*
 * progen.h - random eBPF programs that are valid and safe by construction,
 * for differential testing (fuzz/jit_diff.c) and JIT compile-time
 * measurement (bench/jit/compile_bench.c).
 *
 * The environment a generated program expects (what the runner provides):
 *   r1 = PROGEN_MEM_SIZE bytes of memory (8-byte aligned), r2 = its length;
 *   helper PROGEN_HELPER_MIX(r1..r5) -> any value, pure or with state the
 *   runner compares; helper PROGEN_HELPER_MEMXOR(ptr, v) xors v into the u64
 *   at ptr (ptr points into the memory or the stack, 8-byte aligned); when
 *   map_value_size > 0, map 0 is an
 *   array map with one value of that size.
 * What it guarantees:
 *   - every instruction is valid RFC 9669 bytecode (no callx, no kfuncs);
 *   - memory is only accessed inside [mem, mem + PROGEN_DATA_SIZE), the
 *     first PROGEN_STACK_USED bytes below r10 (each function initialises
 *     them first) and the map value, at in-bounds offsets, atomics aligned;
 *   - no register is read before it is written (also after calls, which
 *     clobber r1..r5);
 *   - it terminates: jumps go forward, except the back edge of loops that
 *     count down a dedicated register (r8) from at most PROGEN_MAX_TRIP;
 *     local calls only go to later functions (depth <= function count);
 *   - before exit the main function copies r0..r8 to the memory at
 *     PROGEN_REG_DUMP and its stack to PROGEN_STACK_DUMP, so comparing
 *     memory compares every register and the stack as well.
 */
#ifndef GPUEXT_FUZZ_PROGEN_H
#define GPUEXT_FUZZ_PROGEN_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/isa.h"

enum {
	PROGEN_DATA_SIZE = 256,
	PROGEN_STACK_USED = 64,
	PROGEN_REG_DUMP = PROGEN_DATA_SIZE,
	PROGEN_STACK_DUMP = PROGEN_REG_DUMP + 9 * 8,
	PROGEN_MEM_SIZE = PROGEN_STACK_DUMP + PROGEN_STACK_USED,
	PROGEN_MAX_TRIP = 5,
	PROGEN_HELPER_MIX = 900,
	PROGEN_HELPER_MEMXOR = 901,
};

struct progen_cfg {
	size_t target_insns;      /* about this many instructions (>= 40) */
	int max_funcs;            /* 1 .. 6 functions */
	uint32_t map_value_size;  /* > 0: also access map 0's value (>= 16) */
};

/*
 * Generate a program from seed into a malloc'd array.  Returns the number
 * of instructions, 0 when out of memory.
 */
size_t progen_generate(uint64_t seed, const struct progen_cfg *cfg, struct isa_insn **out);

/* The same splitmix64 the generator uses, for the runner's inputs. */
uint64_t progen_rand(uint64_t *state);

#endif /* GPUEXT_FUZZ_PROGEN_H */
