/* SPDX-License-Identifier: MIT */
/*
 * bench_elf.c - the bytecode of one section of a .bpf.o, for the benchmarks.
 *
 * The benchmark programs use no maps, no helpers, no global data and no
 * subprograms, so their section holds the whole program and has no
 * relocations; this reader checks exactly that and refuses anything else.
 * It is the bench's own minimal reader because it must give uBPF and gpuext
 * the same raw bytes; the general loader is src/bpf/object.c.
 */
#include <elf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#ifndef EM_BPF
#define EM_BPF 247
#endif

struct elf_image {
	const uint8_t *buf;
	size_t len;
	const char *path;
};

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t err_len,
						     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_len, fmt, ap);
	va_end(ap);
	return -1;
}

/* The one checked accessor: len bytes at off, or NULL if outside the file. */
static const void *elf_at(const struct elf_image *im, uint64_t off, uint64_t len)
{
	if (off > im->len || len > im->len - off)
		return NULL;
	return im->buf + off;
}

static const Elf64_Shdr *elf_shdr(const struct elf_image *im, const Elf64_Ehdr *eh,
				  size_t idx)
{
	if (idx >= eh->e_shnum)
		return NULL;
	return elf_at(im, eh->e_shoff + (uint64_t)idx * sizeof(Elf64_Shdr),
		      sizeof(Elf64_Shdr));
}

/* NUL-terminated name at off in the section-name table, or NULL. */
static const char *elf_name(const struct elf_image *im, const Elf64_Shdr *strtab,
			    uint32_t off)
{
	const char *s = elf_at(im, strtab->sh_offset, strtab->sh_size);

	if (!s || off >= strtab->sh_size || !memchr(s + off, '\0', strtab->sh_size - off))
		return NULL;
	return s + off;
}

static int find_section(const struct elf_image *im, const char *section,
			struct isa_insn **insns, size_t *cnt, char *err, size_t err_len)
{
	const Elf64_Ehdr *eh = elf_at(im, 0, sizeof(*eh));
	const Elf64_Shdr *strtab, *sh;
	size_t found = 0;

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return fail(err, err_len, "%s: not a 64-bit little-endian ELF file", im->path);
	if (eh->e_machine != EM_BPF)
		return fail(err, err_len, "%s: machine %u is not BPF (%u)", im->path,
			    eh->e_machine, EM_BPF);
	if (eh->e_shentsize != sizeof(Elf64_Shdr) || !(strtab = elf_shdr(im, eh, eh->e_shstrndx)))
		return fail(err, err_len, "%s: bad section header table", im->path);
	for (size_t i = 1; i < eh->e_shnum; i++) {
		const char *name;

		if (!(sh = elf_shdr(im, eh, i)) || !(name = elf_name(im, strtab, sh->sh_name)))
			return fail(err, err_len, "%s: section %zu: bad header or name",
				    im->path, i);
		if (!strcmp(name, section))
			found = i;
	}
	if (!found)
		return fail(err, err_len, "%s: no section '%s'", im->path, section);
	for (size_t i = 1; i < eh->e_shnum; i++) {
		sh = elf_shdr(im, eh, i);
		if ((sh->sh_type == SHT_REL || sh->sh_type == SHT_RELA) && sh->sh_info == found)
			return fail(err, err_len,
				    "%s: section '%s' has relocations (a benchmark program must "
				    "use no maps, global data or subprograms)", im->path, section);
	}
	sh = elf_shdr(im, eh, found);
	const void *code = elf_at(im, sh->sh_offset, sh->sh_size);
	if (sh->sh_type != SHT_PROGBITS || !code || !sh->sh_size ||
	    sh->sh_size % sizeof(struct isa_insn))
		return fail(err, err_len, "%s: section '%s': no code or size %llu not a multiple of 8",
			    im->path, section, (unsigned long long)sh->sh_size);
	*cnt = sh->sh_size / sizeof(struct isa_insn);
	*insns = malloc(sh->sh_size);
	if (!*insns)
		return fail(err, err_len, "out of memory");
	memcpy(*insns, code, sh->sh_size);
	return 0;
}

int bench_load_prog(const char *path, const char *section, struct isa_insn **insns,
		    size_t *cnt, char *err, size_t err_len)
{
	struct elf_image im = {.path = path};
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long len;
	int ret;

	if (!f)
		return fail(err, err_len, "%s: cannot open (run `make` first)", path);
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
	    !(buf = malloc(len ? len : 1)) || fread(buf, 1, len, f) != (size_t)len) {
		fclose(f);
		free(buf);
		return fail(err, err_len, "%s: cannot read", path);
	}
	fclose(f);
	im.buf = buf;
	im.len = len;
	ret = find_section(&im, section, insns, cnt, err, err_len);
	free(buf);
	return ret;
}
