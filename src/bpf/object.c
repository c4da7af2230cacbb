/* SPDX-License-Identifier: MIT */
/*
 * object.c - eBPF ELF objects: programs, maps, relocations, line info.
 *
 * The loader works in three passes over the checked ELF (elf.h):
 *   1. collect: functions (FUNC symbols of executable sections), maps
 *      (SEC(".maps") through BTF, legacy SEC("maps"), global-data sections)
 *      and the license; every relocation of an executable section is
 *      checked here, whether or not a program reaches it;
 *   2. link: each global function outside .text becomes a program; the
 *      functions it calls (bpf-to-bpf, in .text or its own section) are
 *      appended to it once each, in the order first reached, and every call
 *      offset is rewritten for the program's own layout (libbpf's model);
 *   3. relocate each copied function: LD_IMM64 against maps and global data
 *      (R_BPF_64_64) and calls (R_BPF_64_32).
 */
#include "object.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btf.h"
#include "elf.h"
#include "object_impl.h"

/* Linux's struct bpf_map_def: the SEC("maps") layout.  map_flags optional. */
enum { LEGACY_MAP_DEF_MIN = 16, LEGACY_MAP_DEF_SIZE = 20 };

struct object_func {
	const char *name;
	size_t sec;      /* ELF section */
	size_t start;    /* first instruction in the section */
	size_t cnt;      /* instructions */
	int is_prog;     /* a global function outside .text */
};

/* Where a map comes from: a symbol of a map section, or a whole data section. */
struct object_map_src {
	size_t sec;
	uint64_t off;    /* symbol value in sec (maps), 0 for data sections */
	int is_data;
};

struct object_loader {
	struct object *obj;
	struct elf_file elf;
	struct err *e;
	struct object_func *funcs;
	size_t func_cnt;
	struct object_map_src *srcs; /* parallel to obj->maps */
	size_t text_sec;
};

/* A function copied into a program at dst. */
struct object_chunk {
	const struct object_func *fn;
	size_t dst;
};

static int object_is_code_section(const Elf64_Shdr *s)
{
	return s->sh_type == SHT_PROGBITS && (s->sh_flags & SHF_EXECINSTR);
}

static int object_is_data_section(const char *name, const Elf64_Shdr *s)
{
	if (!(s->sh_flags & SHF_ALLOC) || (s->sh_flags & SHF_EXECINSTR) || s->sh_size == 0)
		return 0;
	if (s->sh_type == SHT_NOBITS)
		return !strncmp(name, ".bss", 4);
	return s->sh_type == SHT_PROGBITS &&
	       (!strncmp(name, ".data", 5) || !strncmp(name, ".rodata", 7));
}

/* The file bytes of a section that must have some (not SHT_NOBITS). */
static int object_section_bytes(struct object_loader *l, size_t sec, const uint8_t **data,
			     size_t *len)
{
	int err = elf_section_data(&l->elf, sec, data, len, l->e);

	if (!err && !*data)
		err = err_set(l->e, EINVAL, "%s: section %zu (%s) has no contents in the file",
			      l->obj->name, sec, elf_section_name(&l->elf, sec));
	return err;
}

/* A map whose definition map_def_check() accepts, so `prog show` never lists
 * one that object_create_maps() would refuse. */
static int object_add_map(struct object_loader *l, const struct map_def *def,
		       const struct object_map_src *src, const void *init, size_t init_len)
{
	struct object *obj = l->obj;
	int err = map_def_check(def, l->e);
	if (err) {
		err_prefix(l->e, "%s: ", obj->name);
		return err;
	}
	struct object_map *m = realloc(obj->maps, (obj->map_cnt + 1) * sizeof(*m));
	if (!m)
		return err_set(l->e, ENOMEM, "%s: out of memory", obj->name);
	obj->maps = m;
	struct object_map_src *s = realloc(l->srcs, (obj->map_cnt + 1) * sizeof(*s));
	if (!s)
		return err_set(l->e, ENOMEM, "%s: out of memory", obj->name);
	l->srcs = s;
	l->srcs[obj->map_cnt] = *src;
	obj->maps[obj->map_cnt++] = (struct object_map){
		.def = *def, .init = init, .init_len = init_len, .map = NULL};
	return 0;
}

/*
 * Offset of the data symbol called name in section sec.  clang leaves the
 * variable offsets of a DATASEC at 0 (the linker would fix them through
 * .rel.BTF), so, like libbpf, the symbol table is what places a variable.
 */
static int object_symbol_offset(struct object_loader *l, size_t sec, const char *name,
			     uint64_t *off)
{
	for (size_t i = 1; i < l->elf.sym_cnt; i++) {
		Elf64_Sym sym;
		const char *sname;
		int err = elf_symbol(&l->elf, i, &sym, l->e);
		if (err)
			return err;
		if (sym.st_shndx != sec || ELF64_ST_TYPE(sym.st_info) == STT_SECTION)
			continue;
		if ((err = elf_symbol_name(&l->elf, &sym, &sname, l->e)))
			return err;
		if (!strcmp(sname, name)) {
			*off = sym.st_value;
			return 0;
		}
	}
	return err_set(l->e, ENOENT, "%s: map '%s': no symbol for it in section %zu (%s)",
		       l->obj->name, name, sec, elf_section_name(&l->elf, sec));
}

/* SEC(".maps"): one map per variable of the BTF DATASEC, named by the var. */
static int object_collect_btf_maps(struct object_loader *l, size_t sec)
{
	struct btf *btf = l->obj->btf;
	uint32_t ds;

	if (!btf)
		return err_set(l->e, EINVAL, "%s: section %zu (.maps) needs .BTF to describe its maps",
			       l->obj->name, sec);
	ds = btf_find_datasec(btf, ".maps");
	if (!ds)
		return err_set(l->e, EINVAL, "%s: .BTF has no DATASEC for section .maps",
			       l->obj->name);
	const struct btf_type *t = btf_type_by_id(btf, ds);
	for (uint32_t i = 0; i < BTF_INFO_VLEN(t->info); i++) {
		struct btf_var_secinfo vi;
		struct map_def def;
		uint64_t off = 0;
		memcpy(&vi, (const struct btf_var_secinfo *)(t + 1) + i, sizeof(vi));
		int err = btf_map_def(btf, vi.type, &def, l->e);
		err = err ? err : object_symbol_offset(l, sec, def.name, &off);
		if (err)
			return err;
		struct object_map_src src = {.sec = sec, .off = off, .is_data = 0};
		err = object_add_map(l, &def, &src, NULL, 0);
		if (err)
			return err;
	}
	return 0;
}

/* SEC("maps"): struct bpf_map_def at each symbol. */
static int object_collect_legacy_maps(struct object_loader *l, size_t sec)
{
	const uint8_t *data;
	size_t len;
	int err = object_section_bytes(l, sec, &data, &len);

	if (err)
		return err;
	/* In declaration order: by offset, whatever the symbol table's order. */
	for (uint64_t prev = 0, first = 1;; first = 0) {
		Elf64_Sym sym = {0}, cand;
		const char *name;
		uint32_t f[5] = {0};
		for (size_t i = 1; i < l->elf.sym_cnt; i++) {
			if ((err = elf_symbol(&l->elf, i, &cand, l->e)))
				return err;
			if (cand.st_shndx != sec || ELF64_ST_TYPE(cand.st_info) == STT_SECTION ||
			    (!first && cand.st_value <= prev) ||
			    (sym.st_shndx && cand.st_value >= sym.st_value))
				continue;
			sym = cand;
		}
		if (!sym.st_shndx)
			return 0;
		prev = sym.st_value;
		if ((err = elf_symbol_name(&l->elf, &sym, &name, l->e)))
			return err;
		size_t size = sym.st_size ? sym.st_size : LEGACY_MAP_DEF_SIZE;
		if (size < LEGACY_MAP_DEF_MIN || sym.st_value > len ||
		    len - sym.st_value < LEGACY_MAP_DEF_MIN)
			return err_set(l->e, EINVAL,
				       "%s: map '%s': definition at offset %llu (%zu bytes) "
				       "does not fit section maps (%zu bytes)",
				       l->obj->name, name, (unsigned long long)sym.st_value,
				       size, len);
		size_t n = size < LEGACY_MAP_DEF_SIZE ? size : LEGACY_MAP_DEF_SIZE;
		if (n > len - sym.st_value)
			n = len - sym.st_value;
		memcpy(f, data + sym.st_value, n);
		struct map_def def = {.type = f[0], .key_size = f[1], .value_size = f[2],
				      .max_entries = f[3], .flags = f[4]};
		snprintf(def.name, sizeof(def.name), "%s", name);
		struct object_map_src src = {.sec = sec, .off = sym.st_value, .is_data = 0};
		if ((err = object_add_map(l, &def, &src, NULL, 0)))
			return err;
	}
}

/* .data/.rodata/.bss (and .rodata.str1.1 etc.): one-element arrays. */
static int object_collect_data_map(struct object_loader *l, size_t sec)
{
	const char *name = elf_section_name(&l->elf, sec);
	const uint8_t *data;
	size_t len;
	int err = elf_section_data(&l->elf, sec, &data, &len, l->e);

	if (err)
		return err;
	if (len > UINT32_MAX)
		return err_set(l->e, E2BIG, "%s: section %zu (%s) too large for a map",
			       l->obj->name, sec, name);
	struct map_def def = {.type = MAP_TYPE_ARRAY, .key_size = 4,
			      .value_size = (uint32_t)len, .max_entries = 1,
			      .flags = !strncmp(name, ".rodata", 7) ? MAP_F_RDONLY_PROG : 0};
	snprintf(def.name, sizeof(def.name), "%s", name);
	struct object_map_src src = {.sec = sec, .off = 0, .is_data = 1};
	return object_add_map(l, &def, &src, data, data ? len : 0);
}

static int object_collect_license(struct object_loader *l, size_t sec)
{
	const uint8_t *data;
	size_t len;
	int err = elf_section_data(&l->elf, sec, &data, &len, l->e);

	if (err)
		return err;
	if (!data || !len || !memchr(data, '\0', len) || strlen((const char *)data) >=
								 sizeof(l->obj->license))
		return err_set(l->e, EINVAL,
			       "%s: section %zu (license) is not a NUL-terminated string of "
			       "at most %zu bytes",
			       l->obj->name, sec, sizeof(l->obj->license) - 1);
	memcpy(l->obj->license, data, strlen((const char *)data) + 1);
	return 0;
}

static int object_func_cmp(const void *a, const void *b)
{
	const struct object_func *x = a, *y = b;
	if (x->sec != y->sec)
		return x->sec < y->sec ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

/* Every FUNC symbol of an executable section, checked against it. */
static int object_collect_funcs(struct object_loader *l)
{
	int err;

	for (size_t i = 1; i < l->elf.sym_cnt; i++) {
		Elf64_Sym sym;
		const char *name;
		if ((err = elf_symbol(&l->elf, i, &sym, l->e)))
			return err;
		if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC)
			continue;
		const Elf64_Shdr *s = elf_section(&l->elf, sym.st_shndx);
		if ((err = elf_symbol_name(&l->elf, &sym, &name, l->e)))
			return err;
		if (!s || sym.st_shndx == 0 || !object_is_code_section(s))
			return err_set(l->e, EINVAL,
				       "%s: function '%s' is in section %u, which holds no code",
				       l->obj->name, name, sym.st_shndx);
		if (sym.st_value % 8 || sym.st_size % 8 || sym.st_size == 0 ||
		    sym.st_value > s->sh_size || sym.st_size > s->sh_size - sym.st_value)
			return err_set(l->e, EINVAL,
				       "%s: function '%s' (offset %llu, size %llu) does not fit "
				       "section %u (%s, %llu bytes) in whole instructions",
				       l->obj->name, name, (unsigned long long)sym.st_value,
				       (unsigned long long)sym.st_size, sym.st_shndx,
				       elf_section_name(&l->elf, sym.st_shndx),
				       (unsigned long long)s->sh_size);
		struct object_func *n = realloc(l->funcs, (l->func_cnt + 1) * sizeof(*n));
		if (!n)
			return err_set(l->e, ENOMEM, "%s: out of memory", l->obj->name);
		l->funcs = n;
		l->funcs[l->func_cnt++] = (struct object_func){
			.name = name, .sec = sym.st_shndx, .start = sym.st_value / 8,
			.cnt = sym.st_size / 8,
			.is_prog = sym.st_shndx != l->text_sec &&
				   ELF64_ST_BIND(sym.st_info) == STB_GLOBAL};
	}
	if (l->func_cnt)
		qsort(l->funcs, l->func_cnt, sizeof(*l->funcs), object_func_cmp);
	return 0;
}

/* Check every relocation of a code section: offset, symbol, type. */
static int object_check_code_relocs(struct object_loader *l, size_t relsec)
{
	const Elf64_Shdr *rs = elf_section(&l->elf, relsec);
	const Elf64_Shdr *target = elf_section(&l->elf, rs->sh_info);
	const char *tname = elf_section_name(&l->elf, rs->sh_info);

	for (size_t i = 0; i < elf_rel_count(&l->elf, relsec); i++) {
		Elf64_Rela r;
		int err = elf_rel(&l->elf, relsec, i, &r, l->e);
		if (err)
			return err;
		uint32_t type = ELF64_R_TYPE(r.r_info);
		if (type != ELF_R_BPF_64_64 && type != ELF_R_BPF_64_32)
			return err_set(l->e, EINVAL,
				       "%s: section '%s': relocation %zu: unsupported relocation "
				       "type %u (expected R_BPF_64_64 or R_BPF_64_32)",
				       l->obj->name, tname, i, type);
		if (r.r_offset % 8 || r.r_offset >= target->sh_size ||
		    (type == ELF_R_BPF_64_64 && target->sh_size - r.r_offset < 16))
			return err_set(l->e, EINVAL,
				       "%s: section '%s': relocation %zu: offset %llu out of range "
				       "(section %llu bytes)",
				       l->obj->name, tname, i, (unsigned long long)r.r_offset,
				       (unsigned long long)target->sh_size);
		if (ELF64_R_SYM(r.r_info) == 0 || ELF64_R_SYM(r.r_info) >= l->elf.sym_cnt)
			return err_set(l->e, EINVAL,
				       "%s: section '%s': relocation %zu: symbol index %llu out "
				       "of range (%zu symbols)",
				       l->obj->name, tname, i,
				       (unsigned long long)ELF64_R_SYM(r.r_info), l->elf.sym_cnt);
	}
	return 0;
}

static int object_collect(struct object_loader *l)
{
	struct elf_file *f = &l->elf;
	size_t maps_sec = elf_find_section(f, ".maps");
	size_t legacy_sec = elf_find_section(f, "maps");
	size_t btf_sec = elf_find_section(f, ".BTF");
	size_t ext_sec = elf_find_section(f, ".BTF.ext");
	const uint8_t *data;
	size_t len;
	int err;

	if (!f->symtab)
		return err_set(l->e, EINVAL, "%s: no symbol table (.symtab)", l->obj->name);
	l->text_sec = elf_find_section(f, ".text");
	if (btf_sec) {
		err = object_section_bytes(l, btf_sec, &data, &len);
		err = err ? err : btf_parse(data, len, l->obj->name, &l->obj->btf, l->e);
		if (err)
			return err;
	}
	if (ext_sec && l->obj->btf) {
		err = object_section_bytes(l, ext_sec, &data, &len);
		err = err ? err : btf_ext_parse(l->obj->btf, data, len, l->e);
		if (err)
			return err;
	}
	/* Map order: BTF maps, legacy maps, then global data by section. */
	if (maps_sec && (err = object_collect_btf_maps(l, maps_sec)))
		return err;
	if (legacy_sec && (err = object_collect_legacy_maps(l, legacy_sec)))
		return err;
	for (size_t i = 1; i < f->shnum; i++) {
		const Elf64_Shdr *s = elf_section(f, i);
		const char *name = elf_section_name(f, i);
		if (object_is_data_section(name, s) && (err = object_collect_data_map(l, i)))
			return err;
		if (!strcmp(name, "license") && (err = object_collect_license(l, i)))
			return err;
		if (object_is_code_section(s) && s->sh_size % 8)
			return err_set(l->e, EINVAL,
				       "%s: section %zu (%s): size %llu is not a whole number "
				       "of instructions",
				       l->obj->name, i, name, (unsigned long long)s->sh_size);
		if ((s->sh_type == SHT_REL || s->sh_type == SHT_RELA) &&
		    object_is_code_section(elf_section(f, s->sh_info)) &&
		    (err = object_check_code_relocs(l, i)))
			return err;
	}
	return object_collect_funcs(l);
}

static const struct object_func *object_func_at(const struct object_loader *l, size_t sec,
					  size_t insn)
{
	for (size_t i = 0; i < l->func_cnt; i++)
		if (l->funcs[i].sec == sec && l->funcs[i].start == insn)
			return &l->funcs[i];
	return NULL;
}

static int object_map_index(const struct object_loader *l, size_t sec, uint64_t off,
			 int is_data, size_t *idx)
{
	for (size_t i = 0; i < l->obj->map_cnt; i++)
		if (l->srcs[i].sec == sec && l->srcs[i].is_data == is_data &&
		    (is_data || l->srcs[i].off == off)) {
			*idx = i;
			return 0;
		}
	return -ENOENT;
}

/*
 * R_BPF_64_64 on the LD_IMM64 at insns[idx] (its second slot before end, the
 * end of the function): a map, or an address in global data.
 */
static int object_reloc_ld_imm64(struct object_loader *l, struct prog *p, size_t idx,
			      size_t end, const Elf64_Sym *sym, const char *sym_name,
			      size_t rel)
{
	struct isa_insn *in = &p->insns[idx];
	const Elf64_Shdr *s = elf_section(&l->elf, sym->st_shndx);
	size_t map;

	if (in->code != ISA_OPC_LD_IMM64 || idx + 1 >= end)
		return err_set(l->e, EINVAL,
			       "%s: prog '%s': relocation %zu against '%s' at insn %zu: not a "
			       "64-bit immediate load (opcode 0x%02x)",
			       l->obj->name, p->name, rel, sym_name, idx, in->code);
	if (sym->st_shndx == SHN_UNDEF)
		return err_set(l->e, ENOENT,
			       "%s: prog '%s': insn %zu refers to undefined symbol '%s'",
			       l->obj->name, p->name, idx, sym_name);
	if (s && object_is_code_section(s))
		return err_set(l->e, ENOTSUP,
			       "%s: prog '%s': insn %zu takes the address of function '%s' "
			       "(callbacks are not supported)",
			       l->obj->name, p->name, idx, sym_name);
	if (!object_map_index(l, sym->st_shndx, sym->st_value, 0, &map)) {
		in[0].src = ISA_PSEUDO_MAP_FD;
		in[0].imm = (int32_t)map;
		return 0;
	}
	if (!object_map_index(l, sym->st_shndx, 0, 1, &map)) {
		/* The addend clang leaves in imm plus the symbol's offset. */
		uint64_t off = (uint64_t)(uint32_t)in[0].imm + sym->st_value;
		if (off >= l->obj->maps[map].def.value_size)
			return err_set(l->e, EINVAL,
				       "%s: prog '%s': insn %zu: offset %llu of '%s' outside "
				       "section %s (%u bytes)",
				       l->obj->name, p->name, idx, (unsigned long long)off,
				       sym_name, l->obj->maps[map].def.name,
				       l->obj->maps[map].def.value_size);
		in[0].src = ISA_PSEUDO_MAP_VALUE;
		in[0].imm = (int32_t)map;
		in[1].imm = (int32_t)off;
		return 0;
	}
	return err_set(l->e, EINVAL,
		       "%s: prog '%s': insn %zu refers to '%s' in section %u (%s), which is "
		       "neither a map nor global data",
		       l->obj->name, p->name, idx, sym_name, sym->st_shndx,
		       elf_section_name(&l->elf, sym->st_shndx));
}

struct object_link {
	struct prog *p;
	struct object_chunk *chunks;
	size_t chunk_cnt;
	/* Call targets set by R_BPF_64_32, per instruction: section, index. */
	size_t *call_sec;
	size_t *call_insn;
	size_t cap;
};

static int object_append_func(struct object_loader *l, struct object_link *k,
			   const struct object_func *fn, size_t *dst)
{
	struct prog *p = k->p;

	for (size_t i = 0; i < k->chunk_cnt; i++)
		if (k->chunks[i].fn == fn) {
			*dst = k->chunks[i].dst;
			return 0;
		}
	size_t n = p->insn_cnt + fn->cnt;
	struct isa_insn *ni = realloc(p->insns, n * sizeof(*ni));
	struct object_chunk *nc = realloc(k->chunks, (k->chunk_cnt + 1) * sizeof(*nc));
	size_t *ns = realloc(k->call_sec, n * sizeof(*ns));
	size_t *nn = realloc(k->call_insn, n * sizeof(*nn));
	if (ni) p->insns = ni;
	if (nc) k->chunks = nc;
	if (ns) k->call_sec = ns;
	if (nn) k->call_insn = nn;
	if (!ni || !nc || !ns || !nn)
		return err_set(l->e, ENOMEM, "%s: out of memory", l->obj->name);
	const uint8_t *data;
	size_t len;
	int err = elf_section_data(&l->elf, fn->sec, &data, &len, l->e);
	if (err)
		return err;
	*dst = p->insn_cnt;
	memcpy(p->insns + *dst, data + fn->start * 8, fn->cnt * 8);
	for (size_t i = *dst; i < n; i++)
		k->call_sec[i] = 0;
	k->chunks[k->chunk_cnt++] = (struct object_chunk){.fn = fn, .dst = *dst};
	p->insn_cnt = n;
	return 0;
}

/* Apply the relocations of the section of chunk c that fall inside it. */
static int object_reloc_chunk(struct object_loader *l, struct object_link *k,
			      const struct object_chunk *c)
{
	const struct object_func *fn = c->fn;

	for (size_t rs = 1; rs < l->elf.shnum; rs++) {
		const Elf64_Shdr *s = elf_section(&l->elf, rs);
		if ((s->sh_type != SHT_REL && s->sh_type != SHT_RELA) || s->sh_info != fn->sec)
			continue;
		for (size_t i = 0; i < elf_rel_count(&l->elf, rs); i++) {
			Elf64_Rela r;
			Elf64_Sym sym;
			const char *name;
			int err = elf_rel(&l->elf, rs, i, &r, l->e);
			size_t at = r.r_offset / 8;
			if (err)
				return err;
			if (at < fn->start || at >= fn->start + fn->cnt)
				continue;
			size_t idx = c->dst + at - fn->start;
			err = elf_symbol(&l->elf, ELF64_R_SYM(r.r_info), &sym, l->e);
			err = err ? err : elf_symbol_name(&l->elf, &sym, &name, l->e);
			if (err)
				return err;
			if (ELF64_R_TYPE(r.r_info) == ELF_R_BPF_64_64) {
				err = object_reloc_ld_imm64(l, k->p, idx, c->dst + fn->cnt, &sym,
							 name, i);
				if (err)
					return err;
				continue;
			}
			struct isa_insn *in = &k->p->insns[idx];
			if (in->code != ISA_OPC_JMP_CALL || in->src != ISA_CALL_LOCAL)
				return err_set(l->e, EINVAL,
					       "%s: prog '%s': relocation %zu against '%s' at insn "
					       "%zu: not a local call",
					       l->obj->name, k->p->name, i, name, idx);
			if (sym.st_shndx == SHN_UNDEF)
				return err_set(l->e, ENOENT,
					       "%s: prog '%s': insn %zu calls undefined function '%s'",
					       l->obj->name, k->p->name, idx, name);
			/* Target: the symbol plus the pc-relative imm clang left. */
			int64_t t = (int64_t)(sym.st_value / 8) + in->imm + 1;
			if (t < 0)
				return err_set(l->e, EINVAL,
					       "%s: prog '%s': insn %zu calls before the start of "
					       "section %u",
					       l->obj->name, k->p->name, idx, sym.st_shndx);
			k->call_sec[idx] = sym.st_shndx;
			k->call_insn[idx] = (size_t)t;
		}
	}
	return 0;
}

/* Resolve every local call of chunk c, appending the callees. */
static int object_link_calls(struct object_loader *l, struct object_link *k, size_t ci)
{
	for (size_t j = 0; j < k->chunks[ci].fn->cnt; j++) {
		const struct object_chunk c = k->chunks[ci];
		size_t idx = c.dst + j, sec, target, dst;
		struct isa_insn in = k->p->insns[idx];

		if (in.code == ISA_OPC_LD_IMM64) {
			j++;
			continue;
		}
		if (in.code != ISA_OPC_JMP_CALL || in.src != ISA_CALL_LOCAL)
			continue;
		if (k->call_sec[idx]) {
			sec = k->call_sec[idx];
			target = k->call_insn[idx];
		} else {
			int64_t t = (int64_t)(c.fn->start + j) + in.imm + 1;
			sec = c.fn->sec;
			target = t < 0 ? SIZE_MAX : (size_t)t;
		}
		const struct object_func *fn = object_func_at(l, sec, target);
		if (!fn)
			return err_set(l->e, EINVAL,
				       "%s: prog '%s': insn %zu calls instruction %zu of section "
				       "%zu (%s), where no function starts",
				       l->obj->name, k->p->name, idx, target, sec,
				       elf_section_name(&l->elf, sec));
		int err = object_append_func(l, k, fn, &dst);
		if (err)
			return err;
		/* Programs are bounded by the file size, far below 2^31 slots. */
		k->p->insns[idx].imm = (int32_t)((int64_t)dst - (int64_t)idx - 1);
	}
	return 0;
}

/* Source lines of each chunk, in program order. */
static int object_prog_lines(struct object_loader *l, struct object_link *k)
{
	struct prog *p = k->p;

	for (size_t ci = 0; ci < k->chunk_cnt; ci++) {
		const struct btf_line *lines;
		size_t cnt;
		const struct object_chunk *c = &k->chunks[ci];
		btf_ext_lines(l->obj->btf, elf_section_name(&l->elf, c->fn->sec), &lines, &cnt);
		for (size_t i = 0; i < cnt; i++) {
			if (lines[i].insn < c->fn->start || lines[i].insn >= c->fn->start + c->fn->cnt)
				continue;
			struct prog_line *n = realloc(p->lines, (p->line_cnt + 1) * sizeof(*n));
			if (!n)
				return err_set(l->e, ENOMEM, "%s: out of memory", l->obj->name);
			p->lines = n;
			p->lines[p->line_cnt++] = (struct prog_line){
				.insn = (uint32_t)(c->dst + lines[i].insn - c->fn->start),
				.file = lines[i].file, .text = lines[i].text,
				.line = lines[i].line, .col = lines[i].col};
		}
	}
	return 0;
}

static int object_build_prog(struct object_loader *l, const struct object_func *fn,
			     struct prog *p)
{
	struct object_link k = {.p = p};
	size_t dst;
	int err = object_append_func(l, &k, fn, &dst);

	/* Appending grows the chunk list while it is walked: a worklist. */
	for (size_t ci = 0; !err && ci < k.chunk_cnt; ci++) {
		err = object_reloc_chunk(l, &k, &k.chunks[ci]);
		err = err ? err : object_link_calls(l, &k, ci);
	}
	err = err ? err : object_prog_lines(l, &k);
	free(k.chunks);
	free(k.call_sec);
	free(k.call_insn);
	return err;
}

static int object_new_prog(struct object_loader *l, const struct object_func *fn)
{
	struct object *obj = l->obj;
	const char *section = elf_section_name(&l->elf, fn->sec);
	const char *target = NULL;
	struct prog **np = realloc(obj->progs, (obj->prog_cnt + 1) * sizeof(*np));
	struct prog *p = calloc(1, sizeof(*p));

	if (np)
		obj->progs = np;
	if (!np || !p) {
		free(p);
		return err_set(l->e, ENOMEM, "%s: out of memory", obj->name);
	}
	obj->progs[obj->prog_cnt++] = p;
	/* Sections gpuext does not know are raw programs (r1 = memory). */
	if (prog_type_from_section(section, &p->type, &target))
		p->type = PROG_TYPE_RAW;
	p->name = strdup(fn->name);
	p->section = strdup(section);
	p->target = target ? strdup(target) : NULL;
	p->map_cnt = obj->map_cnt;
	p->maps = calloc(obj->map_cnt ? obj->map_cnt : 1, sizeof(*p->maps));
	if (!p->name || !p->section || (target && !p->target) || !p->maps)
		return err_set(l->e, ENOMEM, "%s: out of memory", obj->name);
	return object_build_prog(l, fn, p);
}

int object_open_mem(const void *buf, size_t len, const char *name,
		    struct object **out, struct err *e)
{
	struct object_loader l = {.e = e};
	struct object *obj = calloc(1, sizeof(*obj));
	int err;

	*out = NULL;
	if (!obj || !(obj->name = strdup(name)) || !(obj->image = malloc(len ? len : 1))) {
		object_free(obj);
		return err_set(e, ENOMEM, "%s: out of memory", name);
	}
	/* Maps' initial contents and BTF strings point into this copy. */
	memcpy(obj->image, buf, len);
	obj->image_len = len;
	l.obj = obj;
	err = elf_open(&l.elf, obj->image, len, obj->name, e);
	if (err) {
		object_free(obj);
		return err;
	}
	err = object_collect(&l);
	for (size_t i = 0; !err && i < l.func_cnt; i++)
		if (l.funcs[i].is_prog)
			err = object_new_prog(&l, &l.funcs[i]);
	if (!err)
		err = object_collect_struct_ops(obj, &l.elf, e);
	if (!err && obj->prog_cnt == 0)
		err = err_set(e, ENOENT, "%s: no programs (global functions in a SEC() section)",
			      obj->name);
	elf_close(&l.elf);
	free(l.funcs);
	free(l.srcs);
	if (err) {
		object_free(obj);
		return err;
	}
	*out = obj;
	return 0;
}

int object_open(const char *path, struct object **out, struct err *e)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int err;

	*out = NULL;
	if (!f)
		return err_set(e, errno, "%s: %s", path, strerror(errno));
	for (;;) {
		if (len == cap) {
			char *n = cap < (1u << 30) ? realloc(buf, cap ? cap * 2 : 65536) : NULL;
			if (!n) {
				free(buf);
				fclose(f);
				return err_set(e, ENOMEM, "%s: too large or out of memory", path);
			}
			buf = n;
			cap = cap ? cap * 2 : 65536;
		}
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
	}
	err = ferror(f) ? err_set(e, EIO, "%s: read error", path) : 0;
	fclose(f);
	if (!err)
		err = object_open_mem(buf, len, path, out, e);
	free(buf);
	return err;
}

int object_create_maps(struct object *obj, struct err *e)
{
	for (size_t i = 0; i < obj->map_cnt; i++) {
		struct object_map *m = &obj->maps[i];
		if (m->map)
			continue;
		int err = map_create(&m->def, &m->map, e);
		if (err) {
			err_prefix(e, "%s: map '%s': ", obj->name, m->def.name);
			return err;
		}
		if (m->init)
			memcpy(map_array_base(m->map), m->init, m->init_len);
	}
	for (size_t p = 0; p < obj->prog_cnt; p++)
		for (size_t i = 0; i < obj->map_cnt; i++)
			obj->progs[p]->maps[i] = obj->maps[i].map;
	return 0;
}

struct prog *object_find_prog(const struct object *obj, const char *name_or_section)
{
	for (size_t i = 0; i < obj->prog_cnt; i++)
		if (!strcmp(obj->progs[i]->name, name_or_section))
			return obj->progs[i];
	for (size_t i = 0; i < obj->prog_cnt; i++)
		if (!strcmp(obj->progs[i]->section, name_or_section))
			return obj->progs[i];
	return NULL;
}

struct object_map *object_find_map(const struct object *obj, const char *name)
{
	for (size_t i = 0; i < obj->map_cnt; i++)
		if (!strcmp(obj->maps[i].def.name, name))
			return &obj->maps[i];
	return NULL;
}

void object_free(struct object *obj)
{
	if (!obj)
		return;
	for (size_t i = 0; i < obj->prog_cnt; i++)
		prog_free(obj->progs[i]);
	free(obj->progs);
	for (size_t i = 0; i < obj->map_cnt; i++)
		map_free(obj->maps[i].map);
	free(obj->maps);
	for (size_t i = 0; i < obj->struct_ops_cnt; i++)
		free(obj->struct_ops[i].members);
	free(obj->struct_ops);
	btf_free(obj->btf);
	free(obj->image);
	free(obj->name);
	free(obj);
}
