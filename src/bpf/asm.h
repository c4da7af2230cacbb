/* SPDX-License-Identifier: MIT */
/*
 * asm.h - assembler for the eBPF text syntax of shared/conformance and of
 * disasm.h.
 *
 * One instruction per line; `#` and `//` start comments; `NAME:` defines a
 * label (alone or before an instruction).  Jump targets are labels or
 * signed slot offsets ("+3", "-2"); the target `exit` with no label of that
 * name means the program's first `exit` instruction (bpf_conformance's
 * convention).
 * Immediates are decimal or hex, optionally negative; 32-bit immediates
 * may also be written as their unsigned value (0xffffffff == -1).
 * Besides the conformance mnemonics it accepts what the disassembler
 * prints: `callx %rN`, `lddw %rN, map[I]`, `lddw %rN, map_value[I]+OFF`,
 * `.insn CODE, DST, SRC, OFF, IMM` (any raw slot).
 */
#ifndef GPUEXT_BPF_ASM_H
#define GPUEXT_BPF_ASM_H

#include <stddef.h>

#include "err.h"
#include "isa.h"

/*
 * Assemble text (NUL-terminated) into a malloc'd array of slots.  Returns 0,
 * or -EINVAL with a message naming the line ("line 12: unknown mnemonic
 * 'movv'").  The output is not decoded: run isa_decode() to check it.
 */
int asm_assemble(const char *text, struct isa_insn **out, size_t *cnt, struct err *e);

#endif /* GPUEXT_BPF_ASM_H */
