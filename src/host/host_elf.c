/* SPDX-License-Identifier: MIT */
/*
 * host_elf.c - the file offset of a function in a shared library or an
 * executable, for a kernel uprobe (which takes an inode and a file offset).
 *
 * The file is mapped read-only and read only through host_elf_read(), which
 * checks every range against the file's length and copies the structure
 * out (the bytes may be at any alignment).  A symbol's file offset is its
 * address minus its section's address plus the section's file offset.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host.h"

struct host_elf {
	const char *path;
	const uint8_t *buf;
	size_t len;
	Elf64_Ehdr ehdr;
};

static int host_elf_read(const struct host_elf *f, uint64_t off, size_t len, void *dst,
			 const char *what, struct err *e)
{
	if (off > f->len || len > f->len - off)
		return err_set(e, EINVAL, "%s: %s at offset %llu (%zu bytes) is past the end "
				   "of the file (%zu bytes)", f->path, what,
			       (unsigned long long)off, len, f->len);
	memcpy(dst, f->buf + off, len);
	return 0;
}

static int host_elf_shdr(const struct host_elf *f, size_t idx, Elf64_Shdr *sh, struct err *e)
{
	if (idx >= f->ehdr.e_shnum)
		return err_set(e, EINVAL, "%s: section %zu out of range", f->path, idx);
	return host_elf_read(f, f->ehdr.e_shoff + (uint64_t)idx * sizeof(*sh), sizeof(*sh), sh,
			     "section header", e);
}

/* Is the NUL-terminated string at strtab + off equal to name? */
static int host_elf_name_is(const struct host_elf *f, const Elf64_Shdr *strtab, uint32_t off,
			    const char *name)
{
	size_t n = strlen(name) + 1;
	if (off >= strtab->sh_size || n > strtab->sh_size - off ||
	    strtab->sh_offset > f->len || strtab->sh_size > f->len - strtab->sh_offset)
		return 0;
	return !memcmp(f->buf + strtab->sh_offset + off, name, n);
}

/* Search symbol table section symsec for func.  1 found, 0 not, <0 error. */
static int host_elf_find(const struct host_elf *f, const Elf64_Shdr *symsec, const char *func,
			 uint64_t *off, struct err *e)
{
	Elf64_Shdr strtab, sec;
	Elf64_Sym sym;
	int err;

	if (symsec->sh_entsize != sizeof(sym))
		return err_set(e, EINVAL, "%s: symbol table entries of %llu bytes", f->path,
			       (unsigned long long)symsec->sh_entsize);
	if ((err = host_elf_shdr(f, symsec->sh_link, &strtab, e)))
		return err;
	size_t cnt = symsec->sh_size / sizeof(sym);
	for (size_t i = 1; i < cnt; i++) {
		if ((err = host_elf_read(f, symsec->sh_offset + i * sizeof(sym), sizeof(sym), &sym,
					 "symbol", e)))
			return err;
		unsigned type = ELF64_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
		    sym.st_shndx >= SHN_LORESERVE || !host_elf_name_is(f, &strtab, sym.st_name, func))
			continue;
		if ((err = host_elf_shdr(f, sym.st_shndx, &sec, e)))
			return err;
		if (sym.st_value < sec.sh_addr || sym.st_value - sec.sh_addr >= sec.sh_size)
			return err_set(e, EINVAL, "%s: symbol '%s' at 0x%llx is outside its section",
				       f->path, func, (unsigned long long)sym.st_value);
		*off = sym.st_value - sec.sh_addr + sec.sh_offset;
		return 1;
	}
	return 0;
}

int host_elf_func_offset(const char *path, const char *func, uint64_t *off, struct err *e)
{
	struct host_elf f = {.path = path};
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0, found = 0;

	if (fd < 0)
		return err_set(e, errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(f.ehdr)) {
		close(fd);
		return err_set(e, ENOEXEC, "%s: not an ELF file", path);
	}
	f.len = (size_t)st.st_size;
	void *map = mmap(NULL, f.len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return err_set(e, errno, "%s: mmap: %s", path, strerror(errno));
	f.buf = map;
	memcpy(&f.ehdr, f.buf, sizeof(f.ehdr));
	if (memcmp(f.ehdr.e_ident, ELFMAG, SELFMAG) || f.ehdr.e_ident[EI_CLASS] != ELFCLASS64 ||
	    f.ehdr.e_ident[EI_DATA] != ELFDATA2LSB || f.ehdr.e_shentsize != sizeof(Elf64_Shdr)) {
		err = err_set(e, ENOEXEC, "%s: not a 64-bit little-endian ELF file", path);
		goto out;
	}
	/* .symtab first (it has the local functions too), then .dynsym. */
	static const uint32_t kinds[] = {SHT_SYMTAB, SHT_DYNSYM};
	for (size_t k = 0; k < 2 && !found && !err; k++) {
		for (size_t i = 1; i < f.ehdr.e_shnum && !found; i++) {
			Elf64_Shdr sh;
			if ((err = host_elf_shdr(&f, i, &sh, e)))
				break;
			if (sh.sh_type != kinds[k])
				continue;
			found = host_elf_find(&f, &sh, func, off, e);
			if (found < 0) {
				err = found;
				break;
			}
		}
	}
	if (!err && !found)
		err = err_set(e, ENOENT, "%s: no function '%s' in its symbol tables", path, func);
out:
	munmap(map, f.len);
	return err;
}
