/* SPDX-License-Identifier: MIT */
/*
 * disasm.h - eBPF instructions as text, in the assembler syntax of
 * shared/conformance (`mov32 %r0, 0`, `ldxdw %r0, [%r1+8]`,
 * `lock fetch add32 [%r10-8], %r1`, `jeq %r1, 5, +3`).
 *
 * The output assembles back (asm.h) to the same bytes.  Error messages,
 * the verifier log and `gpuext prog dump` print instructions with it, so it
 * writes into a caller's buffer and allocates nothing.
 */
#ifndef GPUEXT_BPF_DISASM_H
#define GPUEXT_BPF_DISASM_H

#include <stddef.h>
#include <stdio.h>

#include "isa.h"

enum {
	DISASM_BUF_SIZE = 96, /* enough for any one instruction */
	/* Print jump and local-call targets as labels "L<index>" instead of
	 * "+off"/"-off" (used when disassembling a whole program). */
	DISASM_LABELS = 1u << 0,
};

/*
 * Write the text of insns[idx] (no newline) into buf.  lddw reads the
 * second slot too.  Returns the number of slots the instruction takes
 * (2 for a complete lddw, else 1).  Invalid encodings are printed as
 * `.insn CODE, DST, SRC, OFF, IMM` (which the assembler also accepts), so
 * any bytes can be shown.
 */
size_t disasm_insn(const struct isa_insn *insns, size_t cnt, size_t idx,
		   unsigned flags, char *buf, size_t len);

/*
 * A whole program: one instruction per line, a label line "L<index>:"
 * before every jump or call target, targets written as labels.
 */
void disasm_program(FILE *out, const struct isa_insn *insns, size_t cnt);

#endif /* GPUEXT_BPF_DISASM_H */
