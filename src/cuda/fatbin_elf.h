/* SPDX-License-Identifier: MIT */
/*
 * fatbin_elf.h - where an ELF file keeps the fatbins that cudart registers.
 *
 * An nvcc-built executable or library holds, in its section
 * .nvFatBinSegment, one 24-byte wrapper (fatbin.h's FATBIN_WRAPPER_MAGIC)
 * per fatbin that its cudart registers at start-up (docs/fatbin.md).  The
 * agent reads them from the loaded image, long before cudart hands them to
 * the driver at the first launch, to compile the targeted kernels ahead
 * (agent_ahead.c).  Section headers are not loaded into memory, so the
 * section is found in the file: this reads only the ELF header, the section
 * header table and the section name table, every offset and size checked
 * against the file.
 */
#ifndef GPUEXT_CUDA_FATBIN_ELF_H
#define GPUEXT_CUDA_FATBIN_ELF_H

#include <stdint.h>

#include "bpf/err.h"

/* Bytes of one wrapper in .nvFatBinSegment. */
#define FATBIN_ELF_WRAPPER_SIZE 24

/* The link-time address and size of path's .nvFatBinSegment (an allocated
 * section: relocate the address by the object's load bias to read it).
 * 0 with *size 0 when the file has none; -errno with a message naming the
 * file and what is wrong (not ELF64 little-endian, a table past the end of
 * the file, ...) otherwise. */
int fatbin_elf_segment(const char *path, uint64_t *addr, uint64_t *size, struct err *e);

#endif /* GPUEXT_CUDA_FATBIN_ELF_H */
