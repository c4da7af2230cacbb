/* SPDX-License-Identifier: MIT */
/*
 * elf.h - the one checked accessor over <elf.h> for eBPF relocatable objects.
 *
 * Everything the loader reads from an ELF file goes through these functions.
 * elf_open() checks the header and every section header once (offsets and
 * sizes against the file length, names against the section-name table), so
 * later accessors only check what depends on their arguments.  The file may
 * be arbitrary bytes at any alignment: structures are copied out, never cast
 * in place.  Every error names the file and what is wrong.
 */
#ifndef GPUEXT_BPF_ELF_H
#define GPUEXT_BPF_ELF_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#ifndef EM_BPF
#define EM_BPF 247
#endif

/* Relocation types clang emits for eBPF (LLVM's ELFRelocs/BPF.def). */
enum {
	ELF_R_BPF_NONE = 0,
	ELF_R_BPF_64_64 = 1,       /* LD_IMM64: map or global data address */
	ELF_R_BPF_64_ABS64 = 2,    /* data: 64-bit absolute (.BTF.ext, DWARF) */
	ELF_R_BPF_64_ABS32 = 3,    /* data: 32-bit absolute (.BTF, DWARF) */
	ELF_R_BPF_64_NODYLD32 = 4, /* data: like ABS32, no dynamic linking */
	ELF_R_BPF_64_32 = 10,      /* CALL: pc-relative call to a function */
};

struct elf_file {
	const char *name;      /* for messages, not owned */
	const uint8_t *buf;    /* the whole file, not owned */
	size_t len;
	Elf64_Ehdr ehdr;
	Elf64_Shdr *shdrs;     /* copies of the section headers, owned */
	size_t shnum;
	size_t symtab;         /* index of the SHT_SYMTAB section, 0 if none */
	size_t sym_cnt;
};

/*
 * Check buf as an ELF64 little-endian relocatable eBPF object and index its
 * sections.  buf must outlive f.  On error f needs no elf_close().
 */
int elf_open(struct elf_file *f, const void *buf, size_t len, const char *name,
	     struct err *e);
void elf_close(struct elf_file *f);

/* Section header idx (checked by elf_open), or NULL when out of range. */
const Elf64_Shdr *elf_section(const struct elf_file *f, size_t idx);
/* Name of section idx ("" when out of range); always NUL-terminated. */
const char *elf_section_name(const struct elf_file *f, size_t idx);
/* Index of the first section called name, or 0 when there is none. */
size_t elf_find_section(const struct elf_file *f, const char *name);
/*
 * The bytes of section idx.  SHT_NOBITS sections (.bss) have no bytes in the
 * file: *data is NULL and *len their size in memory.  SHT_NULL sections
 * have neither: NULL and 0.
 */
int elf_section_data(const struct elf_file *f, size_t idx, const uint8_t **data,
		     size_t *len, struct err *e);

/* NUL-terminated string at off in string-table section strtab. */
int elf_string(const struct elf_file *f, size_t strtab, uint32_t off,
	       const char **out, struct err *e);

/* Symbol idx of the symbol table (copied out), and its name. */
int elf_symbol(const struct elf_file *f, size_t idx, Elf64_Sym *sym, struct err *e);
int elf_symbol_name(const struct elf_file *f, const Elf64_Sym *sym,
		    const char **out, struct err *e);

/*
 * Relocation section relsec (SHT_REL or SHT_RELA): entry count, and entry i
 * as an Elf64_Rela (r_addend 0 for SHT_REL).
 */
size_t elf_rel_count(const struct elf_file *f, size_t relsec);
int elf_rel(const struct elf_file *f, size_t relsec, size_t i, Elf64_Rela *out,
	    struct err *e);

#endif /* GPUEXT_BPF_ELF_H */
