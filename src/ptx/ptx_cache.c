/* SPDX-License-Identifier: MIT */
/*
 * ptx_cache.c - the on-disk cache of compiled modules (format and contract
 * in ptx_cache.h).  Plain files: no driver call here.
 */
#include "ptx_cache.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const uint64_t ptx_cache_basis = 0xcbf29ce484222325ull;

static uint64_t ptx_cache_fnv(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

int ptx_cache_dir(char *out, size_t len)
{
	const char *off = getenv("GPUEXT_CACHE_DISABLE");
	if (off && !strcmp(off, "1"))
		return -1;
	const char *path = getenv("GPUEXT_CACHE_PATH"), *xdg = getenv("XDG_CACHE_HOME"),
		   *home = getenv("HOME");
	int n;
	if (path && *path)
		n = snprintf(out, len, "%s", path);
	else if (xdg && *xdg == '/')
		n = snprintf(out, len, "%s/gpuext", xdg);
	else if (home && *home)
		n = snprintf(out, len, "%s/.cache/gpuext", home);
	else
		return -1;
	return n > 0 && (size_t)n < len ? 0 : -1;
}

int ptx_cache_path(const char *dir, const char *tag, const char *ptx, char *out, size_t len)
{
	uint64_t h = ptx_cache_fnv(ptx_cache_basis, tag, strlen(tag) + 1);
	h = ptx_cache_fnv(h, ptx, strlen(ptx));
	int n = snprintf(out, len, "%s/%016" PRIx64 ".gxc", dir, h);
	return n > 0 && (size_t)n < len ? 0 : -1;
}

static uint64_t ptx_cache_sum(const char *tag, const char *ptx, const void *cubin, size_t len)
{
	uint64_t h = ptx_cache_fnv(ptx_cache_basis, tag, strlen(tag));
	h = ptx_cache_fnv(h, ptx, strlen(ptx));
	return ptx_cache_fnv(h, cubin, len);
}

/* The whole file (at most PTX_CACHE_MAX_ENTRY bytes), or NULL. */
static unsigned char *ptx_cache_read(const char *path, size_t *len, const char **why)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL; /* no entry */
	unsigned char *buf = NULL;
	struct stat st;
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode) || st.st_size > PTX_CACHE_MAX_ENTRY) {
		*why = "not a cache entry (not a regular file, or too large)";
	} else if (!(buf = malloc((size_t)st.st_size + 1))) {
		*why = "out of memory";
	} else if (fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		*why = "unreadable";
		free(buf);
		buf = NULL;
	} else {
		*len = (size_t)st.st_size;
	}
	fclose(f);
	return buf;
}

void *ptx_cache_get(const char *dir, const char *tag, const char *ptx, size_t *len,
		    const char **why)
{
	char path[4096];
	size_t size = 0, tag_len = strlen(tag), ptx_len = strlen(ptx);
	struct ptx_cache_hdr h;

	*why = NULL;
	if (ptx_cache_path(dir, tag, ptx, path, sizeof(path)))
		return NULL;
	unsigned char *buf = ptx_cache_read(path, &size, why);
	if (!buf)
		return NULL;
	void *cubin = NULL;
	if (size < sizeof(h)) {
		*why = "truncated header";
		goto out;
	}
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, PTX_CACHE_MAGIC, sizeof(PTX_CACHE_MAGIC)) || h.reserved) {
		*why = "not a gpuext cache entry (bad magic)";
	} else if (h.tag_len > size || h.ptx_len > size || h.cubin_len > size ||
		   sizeof(h) + h.tag_len + h.ptx_len + h.cubin_len != size) {
		*why = "truncated or bad lengths";
	} else if (h.tag_len != tag_len || memcmp(buf + sizeof(h), tag, tag_len)) {
		*why = "made for another GPU, driver or option set (tag differs)";
	} else if (h.ptx_len != ptx_len || memcmp(buf + sizeof(h) + tag_len, ptx, ptx_len)) {
		*why = "made from other PTX (hash collision)";
	} else {
		unsigned char *c = buf + sizeof(h) + tag_len + ptx_len;
		if (h.cubin_len < 4 || memcmp(c, "\177ELF", 4) ||
		    ptx_cache_sum(tag, ptx, c, h.cubin_len) != h.sum) {
			*why = "corrupt (checksum or ELF magic)";
		} else if ((cubin = malloc(h.cubin_len))) {
			memcpy(cubin, c, h.cubin_len);
			*len = h.cubin_len;
		} else {
			*why = "out of memory";
		}
	}
out:
	free(buf);
	return cubin;
}

/* mkdir -p dir, each new folder mode 0700 (the cache holds code we run). */
static int ptx_cache_mkdirs(const char *dir, struct err *e)
{
	char p[4096];
	int n = snprintf(p, sizeof(p), "%s", dir);
	if (n <= 0 || (size_t)n >= sizeof(p))
		return err_set(e, ENAMETOOLONG, "cache folder name too long");
	for (char *s = p + 1;; s++) {
		int end = !*s;
		if (*s != '/' && !end)
			continue;
		*s = '\0';
		if (mkdir(p, 0700) && errno != EEXIST)
			return err_set(e, errno, "cannot create cache folder %s: %s", p,
				       strerror(errno));
		if (end)
			return 0;
		*s = '/';
	}
}

int ptx_cache_put(const char *dir, const char *tag, const char *ptx, const void *cubin,
		  size_t len, struct err *e)
{
	char path[4096], tmp[4200];
	struct ptx_cache_hdr h = {.tag_len = (uint32_t)strlen(tag), .ptx_len = strlen(ptx),
				  .cubin_len = len, .sum = ptx_cache_sum(tag, ptx, cubin, len)};
	memcpy(h.magic, PTX_CACHE_MAGIC, sizeof(PTX_CACHE_MAGIC));

	if (ptx_cache_path(dir, tag, ptx, path, sizeof(path)))
		return err_set(e, ENAMETOOLONG, "cache folder name too long");
	int err = ptx_cache_mkdirs(dir, e);
	if (err)
		return err;
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	FILE *f = fopen(tmp, "wb");
	if (!f)
		return err_set(e, errno, "%s: %s", tmp, strerror(errno));
	int ok = fwrite(&h, sizeof(h), 1, f) == 1 && fwrite(tag, 1, h.tag_len, f) == h.tag_len &&
		 fwrite(ptx, 1, h.ptx_len, f) == h.ptx_len && fwrite(cubin, 1, len, f) == len;
	ok &= !fclose(f);
	if (!ok || rename(tmp, path)) {
		err = err_set(e, EIO, "%s: %s", ok ? path : tmp, strerror(errno));
		unlink(tmp);
	}
	return err;
}
