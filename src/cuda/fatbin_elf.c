/* SPDX-License-Identifier: MIT */
/*
 * fatbin_elf.c - the .nvFatBinSegment section of an ELF file (fatbin_elf.h).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cuda/fatbin_elf.h"

#define FATBIN_ELF_SECTION ".nvFatBinSegment"

enum { FATBIN_ELF_MAX_NAMES = 16 << 20 /* bytes of section names */ };

/* Read len bytes at off of fd into buf: 0, or -errno naming what. */
static int fe_read(int fd, const char *path, uint64_t size, uint64_t off, void *buf, size_t len,
		   const char *what, struct err *e)
{
	if (off > size || len > size - off)
		return err_set(e, EINVAL, "%s: %s (0x%zx bytes at 0x%llx) past the end of the file "
			       "(0x%llx bytes)", path, what, len, (unsigned long long)off,
			       (unsigned long long)size);
	for (size_t got = 0; got < len;) {
		ssize_t n = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
		if (n <= 0)
			return err_set(e, n ? errno : EIO, "%s: reading the %s: %s", path, what,
				       n ? strerror(errno) : "short read");
		got += (size_t)n;
	}
	return 0;
}

static int fe_find(int fd, const char *path, uint64_t fsize, uint64_t *addr, uint64_t *size,
		   struct err *e)
{
	Elf64_Ehdr eh;
	int err = fe_read(fd, path, fsize, 0, &eh, sizeof(eh), "ELF header", e);
	if (err)
		return err;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return err_set(e, EINVAL, "%s: not an ELF file", path);
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return err_set(e, EINVAL, "%s: not a 64-bit little-endian ELF file", path);
	if (!eh.e_shoff || !eh.e_shnum)
		return 0; /* no section headers (stripped of them, or extended numbering) */
	if (eh.e_shentsize != sizeof(Elf64_Shdr))
		return err_set(e, EINVAL, "%s: section header size %u, not %zu", path,
			       eh.e_shentsize, sizeof(Elf64_Shdr));
	if (eh.e_shstrndx == SHN_UNDEF || eh.e_shstrndx >= eh.e_shnum)
		return err_set(e, EINVAL, "%s: section name table index %u out of range (%u sections)",
			       path, eh.e_shstrndx, eh.e_shnum);
	size_t n = eh.e_shnum;
	Elf64_Shdr *sh = calloc(n, sizeof(*sh));
	char *names = NULL;
	if (!sh)
		return err_set(e, ENOMEM, "%s: out of memory", path);
	err = fe_read(fd, path, fsize, eh.e_shoff, sh, n * sizeof(*sh), "section header table", e);
	const Elf64_Shdr *st = &sh[eh.e_shstrndx];
	if (!err && st->sh_size > FATBIN_ELF_MAX_NAMES)
		err = err_set(e, EINVAL, "%s: section name table of 0x%llx bytes (at most 0x%x)", path,
			      (unsigned long long)st->sh_size, FATBIN_ELF_MAX_NAMES);
	if (!err && !(names = malloc(st->sh_size + 1)))
		err = err_set(e, ENOMEM, "%s: out of memory", path);
	if (!err)
		err = fe_read(fd, path, fsize, st->sh_offset, names, st->sh_size,
			      "section name table", e);
	if (names)
		names[st->sh_size] = '\0';
	for (size_t i = 0; !err && i < n; i++) {
		if (sh[i].sh_name >= st->sh_size)
			continue; /* a name outside the table is no name we look for */
		if (strcmp(names + sh[i].sh_name, FATBIN_ELF_SECTION))
			continue;
		if (sh[i].sh_type == SHT_NOBITS || !(sh[i].sh_flags & SHF_ALLOC))
			err = err_set(e, EINVAL, "%s: section %s (index %zu) is not loaded data", path,
				      FATBIN_ELF_SECTION, i);
		*addr = sh[i].sh_addr;
		*size = err ? 0 : sh[i].sh_size;
		break;
	}
	free(names);
	free(sh);
	return err;
}

int fatbin_elf_segment(const char *path, uint64_t *addr, uint64_t *size, struct err *e)
{
	*addr = *size = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set(e, errno, "%s: %s", path, strerror(errno));
	struct stat sb;
	int err = fstat(fd, &sb) ? err_set(e, errno, "%s: %s", path, strerror(errno))
		  : !S_ISREG(sb.st_mode) ? err_set(e, EINVAL, "%s: not a regular file", path)
					 : fe_find(fd, path, (uint64_t)sb.st_size, addr, size, e);
	close(fd);
	return err;
}
