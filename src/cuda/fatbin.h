/* SPDX-License-Identifier: MIT */
/*
 * fatbin.h - CUDA fatbin containers, parsed in process.
 *
 * A fatbin is what nvcc embeds in a binary and what an application hands to
 * cuModuleLoadData / cuLibraryLoadData: one or more fatbin headers, each
 * followed by a chain of entries (PTX text or ELF cubins, one per target
 * arch, maybe LZ4- or ZSTD-compressed).  cudart passes a small wrapper
 * struct that points to the fatbin instead of the bytes themselves; both
 * are accepted.  The layout (measured from nvcc 13's output) is in
 * docs/fatbin.md.
 *
 * Everything here treats the fatbin as untrusted: every field is checked
 * against the bytes that exist, no size is believed before it is checked,
 * and decompression is bounded.  Errors name the offset (from the start of
 * the fatbin data) and the field: "fatbin offset 0x1270: entry 2: compressed
 * size 0x1fa past the payload (0x180 bytes)".
 */
#ifndef GPUEXT_CUDA_FATBIN_H
#define GPUEXT_CUDA_FATBIN_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/err.h"

#define FATBIN_WRAPPER_MAGIC 0x466243b1u /* cudart's wrapper struct */
#define FATBIN_MAGIC 0xba55ed50u         /* a fatbin header */

/* Pass as len when only a pointer is known (an application's
 * cuModuleLoadData image): the fatbin's own header then gives its length,
 * bounded by FATBIN_MAX_SIZE, and only that one fatbin is read. */
#define FATBIN_LEN_UNKNOWN SIZE_MAX
#define FATBIN_MAX_SIZE (1ull << 30)
/* No entry decompresses to more than this (the largest cubins are tens of
 * MiB); a larger claimed size is an error, not an allocation. */
#define FATBIN_MAX_UNCOMPRESSED (256u << 20)

enum fatbin_kind {
	FATBIN_KIND_PTX = 1,
	FATBIN_KIND_ELF = 2,
};

/* Entry flags (the 64-bit field at entry offset 40). */
#define FATBIN_FLAG_64BIT 0x1ull
#define FATBIN_FLAG_DEBUG 0x2ull
#define FATBIN_FLAG_LINUX 0x10ull
#define FATBIN_FLAG_LZ4 0x2000ull
#define FATBIN_FLAG_ZSTD 0x8000ull
#define FATBIN_FLAG_ARCH_SPECIFIC 0x100000ull   /* sm_90a: that arch only */
#define FATBIN_FLAG_FAMILY_SPECIFIC 0x200000ull /* sm_100f: that family only */

/* One entry, as read from its header.  Pointers point into the fatbin. */
struct fatbin_entry {
	size_t offset;            /* of the entry header, from the fatbin data start */
	unsigned index;           /* 0, 1, ... over the whole image */
	unsigned fatbin;          /* which concatenated fatbin holds it: 0, 1, ... */
	unsigned kind;            /* enum fatbin_kind, or another value as found */
	unsigned header_size;     /* bytes of the entry header (64, 80, 104, ...) */
	unsigned arch;            /* 75 for sm_75 / compute_75 */
	unsigned version_major;   /* PTX entries: the PTX ISA version (9.0) */
	unsigned version_minor;
	uint64_t flags;           /* FATBIN_FLAG_* */
	const uint8_t *payload;   /* the stored bytes (compressed or not) */
	size_t payload_size;      /* bytes stored: compressed size if compressed */
	size_t uncompressed_size; /* bytes after decompression (= payload_size if none) */
	const char *name;         /* the source file name (-G builds), not NUL-terminated */
	size_t name_len;
	const char *options;      /* PTX entries: ptxas options ("-g ..."), not NUL-terminated */
	size_t options_len;
};

/* Walks the entries of one image (a wrapper or fatbin bytes). */
struct fatbin_iter {
	const uint8_t *data; /* the first fatbin header */
	size_t len;          /* bytes known to be readable at data */
	size_t pos;          /* the next entry header, or the next fatbin header */
	size_t fatbin_end;   /* end of the current fatbin; 0 before the first */
	unsigned fatbins;    /* fatbin headers read so far */
	unsigned entries;    /* entries returned so far */
	int single;          /* read one fatbin only (length unknown) */
};

/* Start iterating: image is the fatbin bytes (len bytes readable, or
 * FATBIN_LEN_UNKNOWN) or, with FATBIN_LEN_UNKNOWN only, a wrapper (magic
 * 0x466243b1) whose data pointer is followed: a wrapper in bytes of known
 * length (a file) holds a pointer of another process and is an error.  With
 * the length unknown, the fatbin's header gives it.  0 or -errno. */
int fatbin_iter_init(struct fatbin_iter *it, const void *image, size_t len, struct err *e);

/* The next entry: 1 with *ent filled, 0 at the end, or -errno.  The entry's
 * header and stored payload are checked to lie inside the fatbin; its
 * sizes and compression fields are checked for consistency. */
int fatbin_iter_next(struct fatbin_iter *it, struct fatbin_entry *ent, struct err *e);

/* The entry's contents, decompressed (LZ4 or ZSTD) into a malloc'd buffer
 * with one NUL byte appended (not counted in *out_len).  Fails when the
 * data does not decompress to exactly the size the header claims. */
int fatbin_entry_contents(const struct fatbin_entry *ent, uint8_t **out, size_t *out_len,
			  struct err *e);

/* Whether PTX compiled for `arch` with `flags` can be JIT-compiled for a
 * device of compute capability device_sm (e.g. 90): generic PTX is forward
 * compatible, arch-specific (sm_90a) PTX needs that exact arch,
 * family-specific (sm_100f) PTX the same major version. */
int fatbin_ptx_runs_on(unsigned arch, uint64_t flags, unsigned device_sm);

/* The PTX best suited to the device: among the PTX entries that run on
 * device_sm, the one with the highest arch (at equal arch, arch-specific
 * before family-specific before generic).  *ptx: malloc'd NUL-terminated
 * text (the text up to its first NUL), *ptx_len its strlen; *chosen (may be
 * NULL) the entry it came from.  -ENOENT with a message listing the PTX
 * archs present when none fits; other errors as fatbin_iter_next. */
int fatbin_best_ptx(const void *image, size_t len, unsigned device_sm, char **ptx,
		    size_t *ptx_len, struct fatbin_entry *chosen, struct err *e);

/* "PTX", "ELF" or "kind 7". */
const char *fatbin_kind_name(unsigned kind, char *buf, size_t size);

#endif /* GPUEXT_CUDA_FATBIN_H */
