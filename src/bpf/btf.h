/* SPDX-License-Identifier: MIT */
/*
 * btf.h - BTF type information (.BTF) and its program annotations (.BTF.ext).
 *
 * btf_parse() validates the whole type section once: every record inside
 * the section, every kind known, every referenced type id in range, every
 * name offset inside the string section, no loop in a chain of modifiers,
 * typedefs, arrays and variables.  After that the lookups below cannot run
 * off the data and btf_type_size() terminates.  Errors name the type id and
 * its byte offset in the type section.
 *
 * What gpuext takes from BTF: the definitions of SEC(".maps") maps, sizes of
 * types, function names, and a source line for each instruction.
 * .BTF.ext CO-RE relocation records are checked and counted but not applied:
 * gpuext runs programs against fixed context layouts, those of the headers
 * they were compiled with (`gpuext prog show` says how many were left as
 * compiled); a relocation against a local flavour (pt_regs___mine) is refused.
 */
#ifndef GPUEXT_BPF_BTF_H
#define GPUEXT_BPF_BTF_H

#include <linux/btf.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "map.h"

struct btf;

/* A line_info record of .BTF.ext, strings resolved (pointing into the BTF). */
struct btf_line {
	uint32_t insn;     /* instruction index in its ELF section */
	const char *file;
	const char *text;  /* the source line, NULL when BTF has none */
	uint32_t line;
	uint32_t col;
};

/* A func_info record: the function starting at instruction insn. */
struct btf_func {
	uint32_t insn;
	uint32_t type_id;  /* a BTF_KIND_FUNC */
};

/* Parse and validate .BTF (copied; data need not be aligned). */
int btf_parse(const void *data, size_t len, const char *name, struct btf **out,
	      struct err *e);
/* Parse .BTF.ext against btf and keep its func_info and line_info. */
int btf_ext_parse(struct btf *btf, const void *data, size_t len, struct err *e);
void btf_free(struct btf *btf);

/* Number of type ids, void (id 0) included: valid ids are 0..cnt-1. */
uint32_t btf_type_cnt(const struct btf *btf);
/* The record of type id (NULL for void and out-of-range ids). */
const struct btf_type *btf_type_by_id(const struct btf *btf, uint32_t id);
/* String at off of the string section, or NULL when out of range. */
const char *btf_str(const struct btf *btf, uint32_t off);
/* Name of a type ("" when anonymous). */
const char *btf_type_name(const struct btf *btf, uint32_t id);
/* Follow typedef/const/volatile/restrict/type_tag to the type they name. */
uint32_t btf_skip_modifiers(const struct btf *btf, uint32_t id);
/* Size in bytes of an object of type id (error for void, functions, fwd). */
int btf_type_size(const struct btf *btf, uint32_t id, uint64_t *size, struct err *e);

/* The DATASEC called name, 0 when there is none. */
uint32_t btf_find_datasec(const struct btf *btf, const char *name);

/*
 * Definition of the map declared by BTF variable var_id (a VAR of a
 * SEC(".maps") struct: __uint(type, ...), __uint(max_entries, ...),
 * __type(key, ...)/__uint(key_size, ...), __type(value, ...)/
 * __uint(value_size, ...), __uint(map_flags, ...)).  The name is the var's.
 */
int btf_map_def(const struct btf *btf, uint32_t var_id, struct map_def *def,
		struct err *e);

/* Line and function info of ELF section sec_name, sorted by insn. */
void btf_ext_lines(const struct btf *btf, const char *sec_name,
		   const struct btf_line **lines, size_t *cnt);
void btf_ext_funcs(const struct btf *btf, const char *sec_name,
		   const struct btf_func **funcs, size_t *cnt);

/* CO-RE relocation records in .BTF.ext, all sections (0 without BTF). */
size_t btf_ext_core_relo_cnt(const struct btf *btf);

#endif /* GPUEXT_BPF_BTF_H */
