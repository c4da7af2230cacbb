/* SPDX-License-Identifier: MIT */
#include "elf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "the ELF reader copies little-endian structures as they are");

/* Does [off, off + size) lie inside a buffer of len bytes?  Overflow-safe. */
static int elf_range_ok(uint64_t off, uint64_t size, size_t len)
{
	return off <= len && size <= len - off;
}

static const char *elf_machine_name(unsigned m)
{
	switch (m) {
	case EM_386: return "i386";
	case EM_ARM: return "ARM";
	case EM_X86_64: return "x86-64";
	case EM_AARCH64: return "AArch64";
	case EM_RISCV: return "RISC-V";
	case EM_BPF: return "BPF";
	default: return "unknown";
	}
}

static int elf_check_ident(const struct elf_file *f, struct err *e)
{
	const Elf64_Ehdr *h = &f->ehdr;

	if (memcmp(h->e_ident, ELFMAG, SELFMAG))
		return err_set(e, EINVAL, "%s: not an ELF file (bad magic)", f->name);
	if (h->e_ident[EI_CLASS] != ELFCLASS64)
		return err_set(e, EINVAL, "%s: wrong ELF class %u, expected %u (64-bit)",
			       f->name, h->e_ident[EI_CLASS], ELFCLASS64);
	if (h->e_ident[EI_DATA] != ELFDATA2LSB)
		return err_set(e, EINVAL,
			       "%s: wrong byte order %u, expected %u (little-endian)",
			       f->name, h->e_ident[EI_DATA], ELFDATA2LSB);
	if (h->e_ident[EI_VERSION] != EV_CURRENT || h->e_version != EV_CURRENT)
		return err_set(e, EINVAL, "%s: unsupported ELF version %u", f->name,
			       h->e_ident[EI_VERSION]);
	if (h->e_type != ET_REL)
		return err_set(e, EINVAL,
			       "%s: not a relocatable object (e_type %u, expected %u)",
			       f->name, h->e_type, ET_REL);
	if (h->e_machine != EM_BPF)
		return err_set(e, EINVAL, "%s: wrong machine %u (%s), expected %u (BPF)",
			       f->name, h->e_machine, elf_machine_name(h->e_machine),
			       EM_BPF);
	if (h->e_shentsize != sizeof(Elf64_Shdr))
		return err_set(e, EINVAL, "%s: bad section header size %u, expected %zu",
			       f->name, h->e_shentsize, sizeof(Elf64_Shdr));
	/* e_shnum == 0 with a non-zero e_shoff means extended numbering:
	 * clang never writes that many sections into an eBPF object. */
	if (h->e_shnum == 0)
		return err_set(e, EINVAL, "%s: no section headers (e_shnum 0)", f->name);
	if (!elf_range_ok(h->e_shoff, (uint64_t)h->e_shnum * sizeof(Elf64_Shdr), f->len))
		return err_set(e, EINVAL,
			       "%s: section header table extends past end of file "
			       "(offset %llu + %zu > %zu)",
			       f->name, (unsigned long long)h->e_shoff,
			       (size_t)h->e_shnum * sizeof(Elf64_Shdr), f->len);
	if (h->e_shstrndx == SHN_UNDEF || h->e_shstrndx >= h->e_shnum)
		return err_set(e, EINVAL,
			       "%s: section name table index %u out of range (%u sections)",
			       f->name, h->e_shstrndx, h->e_shnum);
	return 0;
}

static int elf_check_section(const struct elf_file *f, size_t i, struct err *e)
{
	const Elf64_Shdr *s = &f->shdrs[i];
	const char *name = elf_section_name(f, i);

	if (s->sh_type != SHT_NOBITS && s->sh_type != SHT_NULL &&
	    !elf_range_ok(s->sh_offset, s->sh_size, f->len))
		return err_set(e, EINVAL,
			       "%s: section %zu (%s) extends past end of file "
			       "(offset %llu + %llu > %zu)",
			       f->name, i, name, (unsigned long long)s->sh_offset,
			       (unsigned long long)s->sh_size, f->len);
	if (s->sh_type == SHT_SYMTAB || s->sh_type == SHT_REL || s->sh_type == SHT_RELA) {
		size_t want = s->sh_type == SHT_SYMTAB ? sizeof(Elf64_Sym)
			      : s->sh_type == SHT_REL  ? sizeof(Elf64_Rel)
						       : sizeof(Elf64_Rela);
		if (s->sh_entsize != want || s->sh_size % want)
			return err_set(e, EINVAL,
				       "%s: section %zu (%s): entry size %llu and size %llu "
				       "do not fit entries of %zu bytes",
				       f->name, i, name, (unsigned long long)s->sh_entsize,
				       (unsigned long long)s->sh_size, want);
		if (s->sh_link >= f->shnum ||
		    f->shdrs[s->sh_link].sh_type !=
			    (s->sh_type == SHT_SYMTAB ? SHT_STRTAB : SHT_SYMTAB))
			return err_set(e, EINVAL, "%s: section %zu (%s): bad sh_link %u",
				       f->name, i, name, s->sh_link);
	}
	if ((s->sh_type == SHT_REL || s->sh_type == SHT_RELA) && s->sh_info >= f->shnum)
		return err_set(e, EINVAL,
			       "%s: section %zu (%s): target section %u out of range",
			       f->name, i, name, s->sh_info);
	return 0;
}

int elf_open(struct elf_file *f, const void *buf, size_t len, const char *name,
	     struct err *e)
{
	int err;

	memset(f, 0, sizeof(*f));
	f->name = name;
	f->buf = buf;
	f->len = len;
	if (len < sizeof(Elf64_Ehdr))
		return err_set(e, EINVAL, "%s: file too short for an ELF header (%zu < %zu bytes)",
			       name, len, sizeof(Elf64_Ehdr));
	memcpy(&f->ehdr, buf, sizeof(f->ehdr));
	err = elf_check_ident(f, e);
	if (err)
		return err;

	f->shnum = f->ehdr.e_shnum;
	f->shdrs = malloc(f->shnum * sizeof(Elf64_Shdr));
	if (!f->shdrs)
		return err_set(e, ENOMEM, "%s: out of memory", name);
	memcpy(f->shdrs, f->buf + f->ehdr.e_shoff, f->shnum * sizeof(Elf64_Shdr));

	/* The name table first: every other message names its section. */
	const Elf64_Shdr *names = &f->shdrs[f->ehdr.e_shstrndx];
	if (names->sh_type != SHT_STRTAB || names->sh_size == 0 ||
	    !elf_range_ok(names->sh_offset, names->sh_size, len) ||
	    f->buf[names->sh_offset + names->sh_size - 1] != '\0') {
		err = err_set(e, EINVAL,
			      "%s: section name table (section %u) is not a NUL-terminated "
			      "string table inside the file (offset %llu + %llu, file %zu)",
			      name, f->ehdr.e_shstrndx, (unsigned long long)names->sh_offset,
			      (unsigned long long)names->sh_size, len);
		goto fail;
	}
	for (size_t i = 0; i < f->shnum; i++) {
		if (f->shdrs[i].sh_name >= names->sh_size) {
			err = err_set(e, EINVAL,
				      "%s: section %zu: name offset %u out of range of the "
				      "section name table (%llu bytes)",
				      name, i, f->shdrs[i].sh_name,
				      (unsigned long long)names->sh_size);
			goto fail;
		}
	}
	for (size_t i = 1; i < f->shnum; i++) {
		err = elf_check_section(f, i, e);
		if (err)
			goto fail;
		if (f->shdrs[i].sh_type != SHT_SYMTAB)
			continue;
		if (f->symtab) {
			err = err_set(e, EINVAL, "%s: more than one symbol table (sections %zu and %zu)",
				      name, f->symtab, i);
			goto fail;
		}
		f->symtab = i;
		f->sym_cnt = f->shdrs[i].sh_size / sizeof(Elf64_Sym);
	}
	return 0;
fail:
	elf_close(f);
	return err;
}

void elf_close(struct elf_file *f)
{
	free(f->shdrs);
	f->shdrs = NULL;
	f->shnum = 0;
}

const Elf64_Shdr *elf_section(const struct elf_file *f, size_t idx)
{
	return idx < f->shnum ? &f->shdrs[idx] : NULL;
}

const char *elf_section_name(const struct elf_file *f, size_t idx)
{
	if (idx >= f->shnum)
		return "";
	/* elf_open checked the offset and that the table ends with a NUL. */
	const Elf64_Shdr *names = &f->shdrs[f->ehdr.e_shstrndx];
	return (const char *)f->buf + names->sh_offset + f->shdrs[idx].sh_name;
}

size_t elf_find_section(const struct elf_file *f, const char *name)
{
	for (size_t i = 1; i < f->shnum; i++)
		if (!strcmp(elf_section_name(f, i), name))
			return i;
	return 0;
}

int elf_section_data(const struct elf_file *f, size_t idx, const uint8_t **data,
		     size_t *len, struct err *e)
{
	const Elf64_Shdr *s = elf_section(f, idx);

	if (!s || idx == 0)
		return err_set(e, EINVAL, "%s: section index %zu out of range (%zu sections)",
			       f->name, idx, f->shnum);
	/* Only these two were not checked against the file by elf_open. */
	*len = s->sh_type == SHT_NULL ? 0 : s->sh_size;
	*data = s->sh_type == SHT_NOBITS || s->sh_type == SHT_NULL ? NULL
								    : f->buf + s->sh_offset;
	return 0;
}

int elf_string(const struct elf_file *f, size_t strtab, uint32_t off,
	       const char **out, struct err *e)
{
	const Elf64_Shdr *s = elf_section(f, strtab);

	if (!s || s->sh_type != SHT_STRTAB)
		return err_set(e, EINVAL, "%s: section %zu is not a string table", f->name,
			       strtab);
	if (off >= s->sh_size)
		return err_set(e, EINVAL,
			       "%s: string offset %u out of range of section %zu (%s, %llu bytes)",
			       f->name, off, strtab, elf_section_name(f, strtab),
			       (unsigned long long)s->sh_size);
	const char *str = (const char *)f->buf + s->sh_offset + off;
	if (!memchr(str, '\0', s->sh_size - off))
		return err_set(e, EINVAL,
			       "%s: string at offset %u of section %zu (%s) is not terminated",
			       f->name, off, strtab, elf_section_name(f, strtab));
	*out = str;
	return 0;
}

int elf_symbol(const struct elf_file *f, size_t idx, Elf64_Sym *sym, struct err *e)
{
	if (!f->symtab)
		return err_set(e, EINVAL, "%s: no symbol table", f->name);
	if (idx >= f->sym_cnt)
		return err_set(e, EINVAL, "%s: symbol %zu out of range (%zu symbols)", f->name,
			       idx, f->sym_cnt);
	memcpy(sym, f->buf + f->shdrs[f->symtab].sh_offset + idx * sizeof(*sym),
	       sizeof(*sym));
	return 0;
}

int elf_symbol_name(const struct elf_file *f, const Elf64_Sym *sym,
		    const char **out, struct err *e)
{
	/* Section symbols are nameless in clang's output: use the section's. */
	if (ELF64_ST_TYPE(sym->st_info) == STT_SECTION && sym->st_name == 0) {
		*out = elf_section_name(f, sym->st_shndx);
		return 0;
	}
	return elf_string(f, f->shdrs[f->symtab].sh_link, sym->st_name, out, e);
}

size_t elf_rel_count(const struct elf_file *f, size_t relsec)
{
	const Elf64_Shdr *s = elf_section(f, relsec);

	if (!s || (s->sh_type != SHT_REL && s->sh_type != SHT_RELA))
		return 0;
	return s->sh_size / s->sh_entsize;
}

int elf_rel(const struct elf_file *f, size_t relsec, size_t i, Elf64_Rela *out,
	    struct err *e)
{
	const Elf64_Shdr *s = elf_section(f, relsec);

	if (i >= elf_rel_count(f, relsec))
		return err_set(e, EINVAL, "%s: section %zu (%s): relocation %zu out of range",
			       f->name, relsec, elf_section_name(f, relsec), i);
	const uint8_t *p = f->buf + s->sh_offset + i * s->sh_entsize;
	memset(out, 0, sizeof(*out));
	memcpy(out, p, s->sh_type == SHT_REL ? sizeof(Elf64_Rel) : sizeof(Elf64_Rela));
	return 0;
}
