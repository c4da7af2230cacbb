/* SPDX-License-Identifier: MIT */
/*
 * object_struct_ops.c - SEC(".struct_ops") variables: which program
 * implements which member of an ops struct.
 *
 * libbpf's convention: a global variable of a struct type whose members are
 * function pointers, initialised with programs of struct_ops/... sections.
 * clang leaves the pointers as zeros in the section and one R_BPF_64_ABS64
 * relocation per member naming the function; BTF gives the variable's
 * type, hence the member at each offset.  Members left NULL are absent from
 * the result, so a runtime keeps its default behaviour for them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btf.h"
#include "object_impl.h"

static int is_struct_ops_section(const char *name)
{
	return !strcmp(name, ".struct_ops") || !strcmp(name, ".struct_ops.link");
}

/* The member of struct st that starts at byte off, or NULL. */
static const char *struct_ops_member_at(const struct btf *btf, const struct btf_type *st,
					uint64_t off)
{
	int kflag = BTF_INFO_KFLAG(st->info);

	for (uint32_t i = 0; i < BTF_INFO_VLEN(st->info); i++) {
		struct btf_member m;
		memcpy(&m, (const struct btf_member *)(st + 1) + i, sizeof(m));
		uint32_t bits = kflag ? BTF_MEMBER_BIT_OFFSET(m.offset) : m.offset;
		if (bits % 8 == 0 && bits / 8 == off)
			return btf_str(btf, m.name_off);
	}
	return NULL;
}

static struct prog *struct_ops_prog(const struct object *obj, const char *name)
{
	for (size_t i = 0; i < obj->prog_cnt; i++)
		if (!strcmp(obj->progs[i]->name, name))
			return obj->progs[i];
	return NULL;
}

/* Offset of variable name in section sec (the symbol table places it). */
static int struct_ops_var_offset(const struct object *obj, const struct elf_file *elf,
				 size_t sec, const char *name, uint64_t *off, struct err *e)
{
	for (size_t i = 1; i < elf->sym_cnt; i++) {
		Elf64_Sym sym;
		const char *sname;
		int err = elf_symbol(elf, i, &sym, e);
		err = err ? err : elf_symbol_name(elf, &sym, &sname, e);
		if (err)
			return err;
		if (sym.st_shndx == sec && ELF64_ST_TYPE(sym.st_info) != STT_SECTION &&
		    !strcmp(sname, name)) {
			*off = sym.st_value;
			return 0;
		}
	}
	return err_set(e, ENOENT, "%s: struct_ops '%s': no symbol for it in section %s",
		       obj->name, name, elf_section_name(elf, sec));
}

static int struct_ops_add_member(struct object *obj, struct object_struct_ops *so,
				 const char *member, struct prog *p, struct err *e)
{
	for (size_t i = 0; i < so->member_cnt; i++)
		if (!strcmp(so->members[i].name, member))
			return err_set(e, EINVAL, "%s: struct_ops '%s': member '%s' set twice",
				       obj->name, so->name, member);
	struct object_struct_ops_member *n =
		realloc(so->members, (so->member_cnt + 1) * sizeof(*n));
	if (!n)
		return err_set(e, ENOMEM, "%s: out of memory", obj->name);
	so->members = n;
	so->members[so->member_cnt++] = (struct object_struct_ops_member){member, p};
	return 0;
}

/* The relocations of section sec inside [off, off + size): one member each. */
static int struct_ops_bind(struct object *obj, const struct elf_file *elf, size_t sec,
			   const struct btf_type *st, uint64_t off, uint64_t size,
			   struct object_struct_ops *so, struct err *e)
{
	for (size_t rs = 1; rs < elf->shnum; rs++) {
		const Elf64_Shdr *s = elf_section(elf, rs);
		if ((s->sh_type != SHT_REL && s->sh_type != SHT_RELA) || s->sh_info != sec)
			continue;
		for (size_t i = 0; i < elf_rel_count(elf, rs); i++) {
			Elf64_Rela r;
			Elf64_Sym sym;
			const char *fn;
			int err = elf_rel(elf, rs, i, &r, e);
			if (err)
				return err;
			if (r.r_offset < off || r.r_offset >= off + size)
				continue;
			if (ELF64_R_SYM(r.r_info) == 0 || ELF64_R_SYM(r.r_info) >= elf->sym_cnt)
				return err_set(e, EINVAL,
					       "%s: struct_ops '%s': relocation %zu: symbol index "
					       "out of range", obj->name, so->name, i);
			err = elf_symbol(elf, ELF64_R_SYM(r.r_info), &sym, e);
			err = err ? err : elf_symbol_name(elf, &sym, &fn, e);
			if (err)
				return err;
			const char *member = struct_ops_member_at(obj->btf, st, r.r_offset - off);
			if (!member)
				return err_set(e, EINVAL,
					       "%s: struct_ops '%s': relocation %zu at byte %llu "
					       "is at no member of struct %s", obj->name, so->name,
					       i, (unsigned long long)(r.r_offset - off),
					       so->type_name);
			if (ELF64_R_TYPE(r.r_info) != ELF_R_BPF_64_ABS64 ||
			    ELF64_ST_TYPE(sym.st_info) != STT_FUNC)
				return err_set(e, EINVAL,
					       "%s: struct_ops '%s': member '%s' is set to '%s', "
					       "which is not a program", obj->name, so->name, member,
					       fn);
			/* Any program: the runtime of the ops struct decides which
			 * section types it accepts (mem_policy.c: struct_ops/...). */
			struct prog *p = struct_ops_prog(obj, fn);
			if (!p)
				return err_set(e, EINVAL,
					       "%s: struct_ops '%s': member '%s': function '%s' is "
					       "not a program (a global function in a SEC() section)",
					       obj->name, so->name, member, fn);
			if ((err = struct_ops_add_member(obj, so, member, p, e)))
				return err;
		}
	}
	return 0;
}

static int struct_ops_collect_section(struct object *obj, const struct elf_file *elf,
				      size_t sec, struct err *e)
{
	const char *sname = elf_section_name(elf, sec);
	uint32_t ds = obj->btf ? btf_find_datasec(obj->btf, sname) : 0;

	if (!ds)
		return err_set(e, EINVAL, "%s: section %s needs .BTF with its DATASEC to name "
			       "the ops members", obj->name, sname);
	const struct btf_type *t = btf_type_by_id(obj->btf, ds);
	for (uint32_t i = 0; i < BTF_INFO_VLEN(t->info); i++) {
		struct btf_var_secinfo vi;
		memcpy(&vi, (const struct btf_var_secinfo *)(t + 1) + i, sizeof(vi));
		const struct btf_type *var = btf_type_by_id(obj->btf, vi.type);
		if (!var || BTF_INFO_KIND(var->info) != BTF_KIND_VAR)
			continue;
		const char *name = btf_str(obj->btf, var->name_off);
		uint32_t sid = btf_skip_modifiers(obj->btf, var->type);
		const struct btf_type *st = btf_type_by_id(obj->btf, sid);
		uint64_t off = 0, size = 0;
		if (!st || BTF_INFO_KIND(st->info) != BTF_KIND_STRUCT)
			return err_set(e, EINVAL, "%s: struct_ops '%s' in %s is not a struct",
				       obj->name, name ? name : "?", sname);
		int err = btf_type_size(obj->btf, sid, &size, e);
		err = err ? err : struct_ops_var_offset(obj, elf, sec, name, &off, e);
		if (err)
			return err;
		struct object_struct_ops *n =
			realloc(obj->struct_ops, (obj->struct_ops_cnt + 1) * sizeof(*n));
		if (!n)
			return err_set(e, ENOMEM, "%s: out of memory", obj->name);
		obj->struct_ops = n;
		struct object_struct_ops *so = &obj->struct_ops[obj->struct_ops_cnt++];
		*so = (struct object_struct_ops){.name = name,
						 .type_name = btf_type_name(obj->btf, sid)};
		if ((err = struct_ops_bind(obj, elf, sec, st, off, size, so, e)))
			return err;
	}
	return 0;
}

int object_collect_struct_ops(struct object *obj, const struct elf_file *elf, struct err *e)
{
	for (size_t i = 1; i < elf->shnum; i++) {
		if (!is_struct_ops_section(elf_section_name(elf, i)))
			continue;
		int err = struct_ops_collect_section(obj, elf, i, e);
		if (err)
			return err;
	}
	return 0;
}

const struct object_struct_ops *object_find_struct_ops(const struct object *obj,
							const char *type_name)
{
	for (size_t i = 0; i < obj->struct_ops_cnt; i++)
		if (!type_name || !strcmp(obj->struct_ops[i].type_name, type_name))
			return &obj->struct_ops[i];
	return NULL;
}

struct prog *object_struct_ops_prog(const struct object_struct_ops *so, const char *member)
{
	for (size_t i = 0; so && i < so->member_cnt; i++)
		if (!strcmp(so->members[i].name, member))
			return so->members[i].prog;
	return NULL;
}
