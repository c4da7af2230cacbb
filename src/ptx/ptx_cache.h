/* SPDX-License-Identifier: MIT */
/*
 * ptx_cache.h - a persistent cache of compiled (instrumented) modules.
 *
 * The driver's JIT compile of an instrumented kernel is most of what its
 * first launch costs (7-120 ms on an H200).  The same application run again
 * with the same programs produces the same PTX, so the cubin the driver made
 * the first time is kept on disk, like the driver's own ComputeCache, and
 * loaded instead of compiling (~0.1 ms).
 *
 * An entry is one file, <dir>/<64-bit hash hex>.gxc:
 *   struct ptx_cache_hdr, then the tag, the PTX, the cubin
 * The tag names everything besides the PTX that the cubin depends on (GPU
 * architecture, driver version, JIT options, the prebuilt runtime linked
 * in).  A lookup compares the stored tag and PTX byte for byte with the
 * ones asked for and checks a checksum over the whole entry, so a
 * corrupt, truncated, colliding or foreign entry is never used: it is a
 * miss (with the reason), and the caller compiles and stores afresh.
 * Entries are written to a temporary file and renamed into place, so
 * concurrent processes see either no entry or a whole one.
 */
#ifndef GPUEXT_PTX_CACHE_H
#define GPUEXT_PTX_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/err.h"

#define PTX_CACHE_MAGIC "GXJITC1"

struct ptx_cache_hdr {
	char magic[8];      /* PTX_CACHE_MAGIC, NUL-padded */
	uint32_t tag_len;   /* bytes of the tag (no NUL) */
	uint32_t reserved;  /* 0 */
	uint64_t ptx_len;   /* bytes of the PTX (no NUL) */
	uint64_t cubin_len; /* bytes of the cubin */
	uint64_t sum;       /* FNV-1a 64 over tag, PTX and cubin */
};

/* Largest entry read back (a bigger file is not an entry of ours). */
enum { PTX_CACHE_MAX_ENTRY = 64 << 20 };

/*
 * The cache folder from the environment: $GPUEXT_CACHE_PATH, else
 * $XDG_CACHE_HOME/gpuext, else $HOME/.cache/gpuext.  0, or -1 when caching
 * is off (GPUEXT_CACHE_DISABLE=1, or no folder can be named).
 */
int ptx_cache_dir(char *out, size_t len);

/*
 * The cubin stored for (tag, ptx) in dir, malloc'd (*len its size), or NULL:
 * no entry (*why NULL), or an entry that is not valid for this request
 * (*why says what is wrong with it: it is then ignored, not deleted).
 */
void *ptx_cache_get(const char *dir, const char *tag, const char *ptx, size_t *len,
		    const char **why);

/* Store cubin for (tag, ptx) in dir (created, mode 0700, if missing). */
int ptx_cache_put(const char *dir, const char *tag, const char *ptx, const void *cubin,
		  size_t len, struct err *e);

/* The entry's file name for (tag, ptx): "<dir>/<hash>.gxc". */
int ptx_cache_path(const char *dir, const char *tag, const char *ptx, char *out, size_t len);

#endif /* GPUEXT_PTX_CACHE_H */
