/* SPDX-License-Identifier: MIT */
/*
 * object_impl.h - what the loader's files share (object.c,
 * object_struct_ops.c); not part of object.h's interface.
 */
#ifndef GPUEXT_BPF_OBJECT_IMPL_H
#define GPUEXT_BPF_OBJECT_IMPL_H

#include "elf.h"
#include "object.h"

/*
 * Bind the members of every SEC(".struct_ops") / SEC(".struct_ops.link")
 * variable to the programs their relocations name (obj->progs must be
 * built).  Needs .BTF for the variables' types and member names.
 */
int object_collect_struct_ops(struct object *obj, const struct elf_file *elf, struct err *e);

#endif /* GPUEXT_BPF_OBJECT_IMPL_H */
