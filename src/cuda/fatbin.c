/* SPDX-License-Identifier: MIT */
/*
 * fatbin.c - fatbin containers: the wrapper, the fatbin headers, the entry
 * chain, LZ4/ZSTD payloads, and the choice of PTX for a device.
 *
 * Invariant: every read goes through fb_u16/fb_u32/fb_u64 at an offset that
 * has been checked to lie inside the bytes known to exist (it->len, or the
 * current fatbin's end, which is checked against it->len first).  Sizes are
 * compared by subtraction from what is left, never by adding an untrusted
 * size to an offset, so no sum can wrap.
 */
#include "fatbin.h"

#include <errno.h>
#include <lz4.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

/* Layout facts (docs/fatbin.md). */
enum {
	FB_HEADER_SIZE = 16,      /* magic u32, version u16, header size u16, fat size u64 */
	FB_ENTRY_MIN_HEADER = 64, /* the fields read below all lie in the first 64 bytes */
	FB_ENTRY_MAX_HEADER = 4096,
	FB_ENTRY_KIND = 0,       /* u16 */
	FB_ENTRY_HSIZE = 4,      /* u32 */
	FB_ENTRY_SIZE = 8,       /* u64: bytes after the header, padding included */
	FB_ENTRY_CSIZE = 16,     /* u32: compressed bytes (compressed entries) */
	FB_ENTRY_OPTIONS = 20,   /* u32: PTX: header offset of {u32 offset, u32 len} of the ptxas options */
	FB_ENTRY_VMINOR = 24,    /* u16 */
	FB_ENTRY_VMAJOR = 26,    /* u16 */
	FB_ENTRY_ARCH = 28,      /* u32 */
	FB_ENTRY_NAME_OFF = 32,  /* u32: header offset of the source name */
	FB_ENTRY_NAME_LEN = 36,  /* u32 */
	FB_ENTRY_FLAGS = 40,     /* u64 */
	FB_ENTRY_USIZE = 56,     /* u64: uncompressed bytes (compressed entries) */
	/* An LZ4 block yields at most ~255 bytes per input byte (a match length
	 * grows by 255 per extra byte). */
	FB_LZ4_MAX_RATIO = 255,
};

static uint16_t fb_u16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t fb_u32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t fb_u64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* One ZSTD context, made on first use and kept: creating one (ZSTD_decompress
 * does so per call) costs ~100x more than decompressing a kernel's PTX.
 * Module loads are rare, so a lock around it costs nothing. */
static pthread_mutex_t fb_zstd_lock = PTHREAD_MUTEX_INITIALIZER;
static ZSTD_DCtx *fb_zstd_ctx;

static size_t fb_zstd_decompress(void *dst, size_t dst_size, const void *src, size_t src_size)
{
	size_t got;

	pthread_mutex_lock(&fb_zstd_lock);
	if (!fb_zstd_ctx)
		fb_zstd_ctx = ZSTD_createDCtx();
	if (fb_zstd_ctx)
		got = ZSTD_decompressDCtx(fb_zstd_ctx, dst, dst_size, src, src_size);
	else
		got = ZSTD_decompress(dst, dst_size, src, src_size);
	pthread_mutex_unlock(&fb_zstd_lock);
	return got;
}

const char *fatbin_kind_name(unsigned kind, char *buf, size_t size)
{
	if (kind == FATBIN_KIND_PTX)
		return "PTX";
	if (kind == FATBIN_KIND_ELF)
		return "ELF";
	snprintf(buf, size, "kind %u", kind);
	return buf;
}

/* Check the fatbin header at it->pos and enter that fatbin. */
static int fb_read_header(struct fatbin_iter *it, struct err *e)
{
	size_t off = it->pos, left = it->len - off;
	const uint8_t *h = it->data + off;

	if (left < FB_HEADER_SIZE)
		return err_set(e, EINVAL,
			       "fatbin offset 0x%zx: fatbin header truncated (%zu bytes, need %d)",
			       off, left, FB_HEADER_SIZE);
	if (fb_u32(h) != FATBIN_MAGIC)
		return err_set(e, EINVAL,
			       "fatbin offset 0x%zx: bad fatbin magic 0x%08x (expected 0x%08x)", off,
			       fb_u32(h), FATBIN_MAGIC);
	if (fb_u16(h + 4) != 1)
		return err_set(e, ENOTSUP, "fatbin offset 0x%zx: fatbin version %u unsupported (expected 1)",
			       off, fb_u16(h + 4));
	unsigned hsize = fb_u16(h + 6);
	uint64_t fat_size = fb_u64(h + 8);
	if (hsize < FB_HEADER_SIZE)
		return err_set(e, EINVAL, "fatbin offset 0x%zx: fatbin header size %u too small (minimum %d)",
			       off, hsize, FB_HEADER_SIZE);
	if (hsize > left)
		return err_set(e, EINVAL,
			       "fatbin offset 0x%zx: fatbin header size %u past the end (%zu bytes left)",
			       off, hsize, left);
	if (fat_size > left - hsize)
		return err_set(e, EINVAL,
			       "fatbin offset 0x%zx: fat size 0x%llx past the end (%zu bytes left after the header)",
			       off, (unsigned long long)fat_size, left - hsize);
	it->pos = off + hsize;
	it->fatbin_end = it->pos + (size_t)fat_size;
	it->fatbins++;
	return 0;
}

int fatbin_iter_init(struct fatbin_iter *it, const void *image, size_t len, struct err *e)
{
	const uint8_t *p = image;

	memset(it, 0, sizeof(*it));
	if (!image)
		return err_set(e, EINVAL, "fatbin: no image (NULL)");
	if (len != FATBIN_LEN_UNKNOWN && len < 4)
		return err_set(e, EINVAL, "fatbin offset 0x0: image of %zu bytes is too short for a magic", len);
	if (fb_u32(p) == FATBIN_WRAPPER_MAGIC) {
		/* A wrapper holds a pointer, meaningful only in the process that
		 * made it; in bytes of known length (a file, a section) following
		 * it would read anywhere. */
		if (len != FATBIN_LEN_UNKNOWN)
			return err_set(e, EINVAL,
				       "fatbin offset 0x0: a wrapper (magic 0x%08x) in %zu bytes: its pointer is only valid in process (length unknown)",
				       FATBIN_WRAPPER_MAGIC, len);
		unsigned version = fb_u32(p + 4);
		/* 1: a plain fatbin; 2: relocatable device code linked by nvlink.
		 * Both point to a fatbin at data. */
		if (version != 1 && version != 2)
			return err_set(e, ENOTSUP, "fatbin wrapper: version %u unsupported (expected 1 or 2)",
				       version);
		const void *data;
		memcpy(&data, p + 8, sizeof(data));
		if (!data)
			return err_set(e, EINVAL, "fatbin wrapper: data pointer is NULL");
		p = data;
		len = FATBIN_LEN_UNKNOWN;
	}
	if (len == FATBIN_LEN_UNKNOWN) {
		/* Only the pointer is known: the first header's sizes, bounded by
		 * FATBIN_MAX_SIZE, give the length of that one fatbin (its other
		 * checks follow in fb_read_header). */
		if (fb_u32(p) != FATBIN_MAGIC)
			return err_set(e, EINVAL, "fatbin offset 0x0: bad fatbin magic 0x%08x (expected 0x%08x)",
				       fb_u32(p), FATBIN_MAGIC);
		uint64_t fat_size = fb_u64(p + 8);
		if (fat_size > FATBIN_MAX_SIZE)
			return err_set(e, EINVAL, "fatbin offset 0x0: fat size 0x%llx larger than the limit 0x%llx",
				       (unsigned long long)fat_size, FATBIN_MAX_SIZE);
		len = fb_u16(p + 6) + (size_t)fat_size;
		if (len < FB_HEADER_SIZE)
			len = FB_HEADER_SIZE;
		it->single = 1;
	} else if (len > FATBIN_MAX_SIZE) {
		return err_set(e, EINVAL, "fatbin: image of %zu bytes larger than the limit 0x%llx", len,
			       FATBIN_MAX_SIZE);
	}
	it->data = p;
	it->len = len;
	/* Read the first header now, so that a bad magic fails here. */
	return fb_read_header(it, e);
}

/* The {offset, length} string of a header at desc (name or options). */
static int fb_header_string(size_t off, unsigned index,
			    unsigned hsize, const uint8_t *h, uint32_t str_off, uint32_t str_len,
			    const char *what, const char **str, size_t *len, struct err *e)
{
	*str = NULL;
	*len = 0;
	if (!str_off && !str_len)
		return 0;
	if (str_off > hsize || str_len > hsize - str_off)
		return err_set(e, EINVAL,
			       "fatbin offset 0x%zx: entry %u: %s (offset %u, %u bytes) outside the entry header (%u bytes)",
			       off, index, what, str_off, str_len, hsize);
	*str = (const char *)h + str_off;
	*len = str_len;
	/* Stored NUL-padded: the string ends at its first NUL. */
	const char *nul = memchr(*str, '\0', str_len);
	if (nul)
		*len = (size_t)(nul - *str);
	return 0;
}

static int fb_read_entry(struct fatbin_iter *it, struct fatbin_entry *ent, struct err *e)
{
	size_t off = it->pos, left = it->fatbin_end - off;
	const uint8_t *h = it->data + off;
	unsigned index = it->entries;
	int rc;

	memset(ent, 0, sizeof(*ent));
	if (left < FB_ENTRY_MIN_HEADER)
		return err_set(e, EINVAL,
			       "fatbin offset 0x%zx: entry %u: header truncated (%zu bytes left in the fatbin, need %d)",
			       off, index, left, FB_ENTRY_MIN_HEADER);
	unsigned hsize = fb_u32(h + FB_ENTRY_HSIZE);
	uint64_t size = fb_u64(h + FB_ENTRY_SIZE);
	if (hsize < FB_ENTRY_MIN_HEADER)
		return err_set(e, EINVAL, "fatbin offset 0x%zx: entry %u: header size %u too small (minimum %d)",
			       off, index, hsize, FB_ENTRY_MIN_HEADER);
	if (hsize > FB_ENTRY_MAX_HEADER)
		return err_set(e, EINVAL, "fatbin offset 0x%zx: entry %u: header size %u too large (maximum %d)",
			       off, index, hsize, FB_ENTRY_MAX_HEADER);
	if (hsize > left)
		return err_set(e, EINVAL,
			       "fatbin offset 0x%zx: entry %u: header size %u past the end of the fatbin (%zu bytes left)",
			       off, index, hsize, left);
	if (size > left - hsize)
		return err_set(e, EINVAL,
			       "fatbin offset 0x%zx: entry %u: payload size 0x%llx past the end of the fatbin (%zu bytes left)",
			       off, index, (unsigned long long)size, left - hsize);

	ent->offset = off;
	ent->index = index;
	ent->fatbin = it->fatbins - 1;
	ent->kind = fb_u16(h + FB_ENTRY_KIND);
	ent->header_size = hsize;
	ent->arch = fb_u32(h + FB_ENTRY_ARCH);
	ent->version_major = fb_u16(h + FB_ENTRY_VMAJOR);
	ent->version_minor = fb_u16(h + FB_ENTRY_VMINOR);
	ent->flags = fb_u64(h + FB_ENTRY_FLAGS);
	ent->payload = h + hsize;
	ent->payload_size = (size_t)size;
	ent->uncompressed_size = (size_t)size;

	rc = fb_header_string(off, index, hsize, h, fb_u32(h + FB_ENTRY_NAME_OFF),
			      fb_u32(h + FB_ENTRY_NAME_LEN), "name", &ent->name, &ent->name_len, e);
	if (rc)
		return rc;
	uint32_t opt_desc = fb_u32(h + FB_ENTRY_OPTIONS);
	if (ent->kind == FATBIN_KIND_PTX && opt_desc) {
		if (opt_desc > hsize || hsize - opt_desc < 8)
			return err_set(e, EINVAL,
				       "fatbin offset 0x%zx: entry %u: options descriptor at 0x%x outside the entry header (%u bytes)",
				       off, index, opt_desc, hsize);
		rc = fb_header_string(off, index, hsize, h, fb_u32(h + opt_desc),
				      fb_u32(h + opt_desc + 4), "options", &ent->options,
				      &ent->options_len, e);
		if (rc)
			return rc;
	}

	uint64_t compression = ent->flags & (FATBIN_FLAG_LZ4 | FATBIN_FLAG_ZSTD);
	if (compression == (FATBIN_FLAG_LZ4 | FATBIN_FLAG_ZSTD))
		return err_set(e, EINVAL, "fatbin offset 0x%zx: entry %u: flags 0x%llx claim both LZ4 and ZSTD",
			       off, index, (unsigned long long)ent->flags);
	if (compression) {
		uint32_t csize = fb_u32(h + FB_ENTRY_CSIZE);
		uint64_t usize = fb_u64(h + FB_ENTRY_USIZE);
		if (csize == 0 || csize > size)
			return err_set(e, EINVAL,
				       "fatbin offset 0x%zx: entry %u: compressed size 0x%x not within the payload (0x%llx bytes)",
				       off, index, csize, (unsigned long long)size);
		if (usize == 0 || usize > FATBIN_MAX_UNCOMPRESSED)
			return err_set(e, EINVAL,
				       "fatbin offset 0x%zx: entry %u: uncompressed size 0x%llx out of range (1 to 0x%x)",
				       off, index, (unsigned long long)usize, FATBIN_MAX_UNCOMPRESSED);
		ent->payload_size = csize;
		ent->uncompressed_size = (size_t)usize;
	}
	it->pos = off + hsize + (size_t)size;
	it->entries++;
	return 0;
}

int fatbin_iter_next(struct fatbin_iter *it, struct fatbin_entry *ent, struct err *e)
{
	int rc;

	while (it->pos == it->fatbin_end) {
		/* Between fatbins: another header follows unless the image ends. */
		if (it->single || it->pos == it->len)
			return 0;
		rc = fb_read_header(it, e);
		if (rc)
			return rc;
	}
	rc = fb_read_entry(it, ent, e);
	return rc ? rc : 1;
}

int fatbin_entry_contents(const struct fatbin_entry *ent, uint8_t **out, size_t *out_len,
			  struct err *e)
{
	char kb[16];
	size_t usize = ent->uncompressed_size;
	uint8_t *buf;

	*out = NULL;
	*out_len = 0;
	/* Sizes the payload cannot produce are refused before allocating. */
	if (ent->flags & FATBIN_FLAG_ZSTD) {
		unsigned long long framed = ZSTD_getFrameContentSize(ent->payload, ent->payload_size);
		if (framed != ZSTD_CONTENTSIZE_UNKNOWN && framed != ZSTD_CONTENTSIZE_ERROR &&
		    framed != usize)
			return err_set(e, EINVAL,
				       "fatbin offset 0x%zx: entry %u (%s sm_%u): ZSTD frame holds 0x%llx bytes, the header says 0x%zx",
				       ent->offset, ent->index, fatbin_kind_name(ent->kind, kb, sizeof(kb)),
				       ent->arch, framed, usize);
	} else if (ent->flags & FATBIN_FLAG_LZ4 && usize / FB_LZ4_MAX_RATIO > ent->payload_size) {
		return err_set(e, EINVAL,
			       "fatbin offset 0x%zx: entry %u (%s sm_%u): LZ4 payload of 0x%zx bytes cannot hold the header's 0x%zx bytes (%d:1 at most)",
			       ent->offset, ent->index, fatbin_kind_name(ent->kind, kb, sizeof(kb)), ent->arch,
			       ent->payload_size, usize, FB_LZ4_MAX_RATIO);
	}
	buf = malloc(usize + 1);
	if (!buf)
		return err_set(e, ENOMEM, "fatbin offset 0x%zx: entry %u: out of memory for 0x%zx bytes",
			       ent->offset, ent->index, usize);
	if (ent->flags & FATBIN_FLAG_ZSTD) {
		size_t got = fb_zstd_decompress(buf, usize, ent->payload, ent->payload_size);
		if (ZSTD_isError(got)) {
			free(buf);
			return err_set(e, EINVAL, "fatbin offset 0x%zx: entry %u (%s sm_%u): ZSTD payload: %s",
				       ent->offset, ent->index, fatbin_kind_name(ent->kind, kb, sizeof(kb)),
				       ent->arch, ZSTD_getErrorName(got));
		}
		if (got != usize) {
			free(buf);
			return err_set(e, EINVAL,
				       "fatbin offset 0x%zx: entry %u (%s sm_%u): ZSTD payload decompressed to 0x%zx bytes, the header says 0x%zx",
				       ent->offset, ent->index, fatbin_kind_name(ent->kind, kb, sizeof(kb)),
				       ent->arch, got, usize);
		}
	} else if (ent->flags & FATBIN_FLAG_LZ4) {
		/* LZ4 block format (no frame); both sizes fit in an int
		 * (FATBIN_MAX_SIZE, FATBIN_MAX_UNCOMPRESSED). */
		int got = LZ4_decompress_safe((const char *)ent->payload, (char *)buf,
					      (int)ent->payload_size, (int)usize);
		if (got < 0 || (size_t)got != usize) {
			free(buf);
			if (got < 0)
				return err_set(e, EINVAL,
					       "fatbin offset 0x%zx: entry %u (%s sm_%u): LZ4 payload is corrupt or larger than the header's 0x%zx bytes",
					       ent->offset, ent->index,
					       fatbin_kind_name(ent->kind, kb, sizeof(kb)), ent->arch, usize);
			return err_set(e, EINVAL,
				       "fatbin offset 0x%zx: entry %u (%s sm_%u): LZ4 payload decompressed to 0x%x bytes, the header says 0x%zx",
				       ent->offset, ent->index, fatbin_kind_name(ent->kind, kb, sizeof(kb)),
				       ent->arch, (unsigned)got, usize);
		}
	} else {
		memcpy(buf, ent->payload, usize);
	}
	buf[usize] = '\0';
	*out = buf;
	*out_len = usize;
	return 0;
}

int fatbin_ptx_runs_on(unsigned arch, uint64_t flags, unsigned device_sm)
{
	if (flags & FATBIN_FLAG_ARCH_SPECIFIC)
		return arch == device_sm;
	if (flags & FATBIN_FLAG_FAMILY_SPECIFIC)
		return arch / 10 == device_sm / 10 && arch <= device_sm;
	return arch <= device_sm;
}

/* Order among usable PTX: higher arch, then the more specific variant. */
static int fb_ptx_rank_above(const struct fatbin_entry *a, const struct fatbin_entry *b)
{
	int spec_a = a->flags & FATBIN_FLAG_ARCH_SPECIFIC ? 2 : a->flags & FATBIN_FLAG_FAMILY_SPECIFIC ? 1 : 0;
	int spec_b = b->flags & FATBIN_FLAG_ARCH_SPECIFIC ? 2 : b->flags & FATBIN_FLAG_FAMILY_SPECIFIC ? 1 : 0;

	if (a->arch != b->arch)
		return a->arch > b->arch;
	return spec_a > spec_b;
}

static const char *fb_arch_suffix(uint64_t flags)
{
	return flags & FATBIN_FLAG_ARCH_SPECIFIC ? "a" : flags & FATBIN_FLAG_FAMILY_SPECIFIC ? "f" : "";
}

int fatbin_best_ptx(const void *image, size_t len, unsigned device_sm, char **ptx,
		    size_t *ptx_len, struct fatbin_entry *chosen, struct err *e)
{
	struct fatbin_iter it;
	struct fatbin_entry ent, best;
	char present[256] = "";
	size_t used = 0;
	int have = 0, rc;

	*ptx = NULL;
	*ptx_len = 0;
	rc = fatbin_iter_init(&it, image, len, e);
	if (rc)
		return rc;
	/* Walk the whole chain: a corrupt chain is an error even past the PTX. */
	while ((rc = fatbin_iter_next(&it, &ent, e)) == 1) {
		if (ent.kind != FATBIN_KIND_PTX)
			continue;
		if (used < sizeof(present))
			used += (size_t)snprintf(present + used, sizeof(present) - used, "%scompute_%u%s",
						 used ? ", " : "", ent.arch, fb_arch_suffix(ent.flags));
		if (fatbin_ptx_runs_on(ent.arch, ent.flags, device_sm) &&
		    (!have || fb_ptx_rank_above(&ent, &best))) {
			best = ent;
			have = 1;
		}
	}
	if (rc < 0)
		return rc;
	if (!have)
		return err_set(e, ENOENT, "fatbin: no PTX for sm_%u (%u entries; PTX present: %s)",
			       device_sm, it.entries, used ? present : "none");

	uint8_t *text;
	size_t text_len;
	rc = fatbin_entry_contents(&best, &text, &text_len, e);
	if (rc)
		return rc;
	/* PTX is stored NUL-terminated and NUL-padded. */
	text_len = strnlen((const char *)text, text_len);
	if (text_len == 0) {
		free(text);
		return err_set(e, EINVAL, "fatbin offset 0x%zx: entry %u (PTX compute_%u): empty PTX text",
			       best.offset, best.index, best.arch);
	}
	*ptx = (char *)text;
	*ptx_len = text_len;
	if (chosen)
		*chosen = best;
	return 0;
}
