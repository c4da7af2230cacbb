/* SPDX-License-Identifier: MIT */
/*
 * object.h - clang-compiled eBPF ELF objects.
 *
 * object_open() parses an ELF relocatable object (clang -target bpf, clang 14
 * and later): programs by section, .text subprograms appended to the
 * programs that call them, BTF-defined and legacy maps, .data/.rodata/.bss
 * and string sections as single-element array maps, relocations, license,
 * BTF and line info.  It creates no map storage; object_create_maps() does.
 */
#ifndef GPUEXT_BPF_OBJECT_H
#define GPUEXT_BPF_OBJECT_H

#include <stddef.h>

#include "err.h"
#include "map.h"
#include "prog.h"

struct btf;

struct object_map {
	struct map_def def;
	/* Initial contents for global-data maps (.data, .rodata), else NULL. */
	const void *init;
	size_t init_len;
	struct map *map; /* NULL until object_create_maps() */
};

/* A SEC(".struct_ops") variable: the program set for each member (members
 * left NULL are absent).  Names point into the object's BTF. */
struct object_struct_ops_member {
	const char *name;  /* "gpu_evict_prepare" */
	struct prog *prog; /* one of the object's programs, type struct_ops */
};
struct object_struct_ops {
	const char *name;      /* the variable */
	const char *type_name; /* its struct ("gpu_mem_ops") */
	struct object_struct_ops_member *members;
	size_t member_cnt;
};

struct object {
	char *name;       /* path or name given to object_open_mem */
	char license[64];
	struct prog **progs;
	size_t prog_cnt;
	struct object_map *maps;
	size_t map_cnt;
	struct btf *btf;  /* NULL if the object has no .BTF */
	struct object_struct_ops *struct_ops;
	size_t struct_ops_cnt;
	void *image;      /* the file's bytes, owned */
	size_t image_len;
};

int object_open(const char *path, struct object **out, struct err *e);
int object_open_mem(const void *buf, size_t len, const char *name,
		    struct object **out, struct err *e);

/*
 * Create the storage of every map (private memory, global data initialised)
 * and point the programs' map tables at them.
 */
int object_create_maps(struct object *obj, struct err *e);

struct prog *object_find_prog(const struct object *obj, const char *name_or_section);
struct object_map *object_find_map(const struct object *obj, const char *name);

/* The first struct_ops variable of struct type_name (NULL: any), or NULL. */
const struct object_struct_ops *object_find_struct_ops(const struct object *obj,
							const char *type_name);
/* The program set for member, or NULL when the member is left NULL. */
struct prog *object_struct_ops_prog(const struct object_struct_ops *so, const char *member);

void object_free(struct object *obj);

#endif /* GPUEXT_BPF_OBJECT_H */
