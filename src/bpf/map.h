/* SPDX-License-Identifier: MIT */
/*
 * map.h - eBPF maps whose storage can be shared by several processes.
 *
 * A map is two things:
 *   - its storage: one contiguous, position-independent block of memory
 *     (a header, then the map's data; every internal link is an offset from
 *     the start of the block, never a pointer).  It may be private memory or
 *     lie in a shared mapping used by several processes at once; all updates
 *     use atomics or locks that live inside the block, so it is safe under
 *     concurrent use from any number of threads and processes.
 *   - a handle (struct map): process-local, holds the storage's address in
 *     this process.  Programs receive the handle's address through LD_IMM64.
 *
 * Types and flags carry Linux's numbers (BPF_MAP_TYPE_*, BPF_ANY, ...), since
 * that is what clang-compiled objects contain.
 */
#ifndef GPUEXT_BPF_MAP_H
#define GPUEXT_BPF_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

enum map_type {
	MAP_TYPE_HASH = 1,
	MAP_TYPE_ARRAY = 2,
	MAP_TYPE_PERCPU_HASH = 5,
	MAP_TYPE_PERCPU_ARRAY = 6,
	MAP_TYPE_LRU_HASH = 9,
	MAP_TYPE_RINGBUF = 27,
	/* gpuext's own types start at MAP_TYPE_GPUEXT_FIRST, far above Linux's */
	MAP_TYPE_GPU_BLOCK_ARRAY = 256, /* an array in each GPU block's shared memory */
};
enum { MAP_TYPE_GPUEXT_FIRST = 256 };

/*
 * A block-local array (MAP_TYPE_GPU_BLOCK_ARRAY) lives in the static shared
 * memory of each block of an instrumented kernel (docs/device-maps.md): its
 * max_entries x value_size (each rounded up to 8) must fit beside the
 * kernel's own.  The host sees no values: user-side lookups and updates
 * fail with -EOPNOTSUPP, and there are no keys to walk (map_array.c).
 */
#define MAP_BLOCK_ARRAY_MAX_BYTES (32u * 1024)

/* Update flags (BPF_ANY, BPF_NOEXIST, BPF_EXIST). */
enum { MAP_ANY = 0, MAP_NOEXIST = 1, MAP_EXIST = 2 };

/* Map flags (map_def.flags) that gpuext understands. */
enum { MAP_F_NO_PREALLOC = 1u << 0, MAP_F_RDONLY_PROG = 1u << 7, MAP_F_MMAPABLE = 1u << 10 };

enum { MAP_NAME_LEN = 64 };

struct map_def {
	uint32_t type;        /* enum map_type */
	uint32_t key_size;    /* 4 for arrays, 0 for ring buffers */
	uint32_t value_size;  /* 0 for ring buffers */
	uint32_t max_entries; /* ring buffer: data bytes, a power of 2 >= page size */
	uint32_t flags;
	char name[MAP_NAME_LEN];
};

struct map; /* process-local handle */

/* Check a definition: known type, sizes and entries in range.  */
int map_def_check(const struct map_def *def, struct err *e);

/* Bytes of storage the map needs (0 if the definition is invalid). */
size_t map_storage_size(const struct map_def *def);

/* A map in private memory, zero-initialised. */
int map_create(const struct map_def *def, struct map **out, struct err *e);

/*
 * A handle on storage the caller provides (e.g. in a shared mapping), which
 * must be map_storage_size() bytes and 64-byte aligned.  With format set the
 * storage is initialised; otherwise it must already hold a map of the same
 * definition (checked against the header).  The storage outlives the handle.
 */
int map_open_storage(const struct map_def *def, void *storage, int format,
		     struct map **out, struct err *e);

/*
 * The same with nr_cpus CPU slots for per-CPU maps (0: the configured CPUs;
 * nr_cpus is ignored for other types): storage that a GPU's per-SM maps are mirrored into
 * needs a slot per SM (session.c).  Always formats; opening it again with
 * map_open_storage(format 0) reads the slot count from the storage.
 */
size_t map_storage_size_cpus(const struct map_def *def, unsigned nr_cpus);
int map_format_storage_cpus(const struct map_def *def, void *storage, unsigned nr_cpus,
			    struct map **out, struct err *e);

void map_free(struct map *map);

const struct map_def *map_get_def(const struct map *map);
/* Number of per-CPU value slots (1 for maps that are not per-CPU). */
unsigned map_nr_cpus(const struct map *map);
/* The same for a map not yet created from def (the configured CPUs). */
unsigned map_def_nr_cpus(const struct map_def *def);

/*
 * Program-side operations (what the helpers call).  lookup returns a pointer
 * into the storage (for per-CPU maps: the slot of the calling CPU), or NULL.
 * Values stay valid after a delete until the element is reused (Linux's
 * preallocated-map semantics).  Return 0 or a negative errno.
 */
void *map_lookup(struct map *map, const void *key);
int map_update(struct map *map, const void *key, const void *value, uint64_t flags);
int map_delete(struct map *map, const void *key);

/*
 * User-side operations (what `gpuext` and libgpuext call).  For per-CPU maps
 * the value buffer holds map_nr_cpus() values, each rounded up to 8 bytes.
 * get_next_key with key NULL gives the first key; -ENOENT after the last.
 */
int map_lookup_copy(struct map *map, const void *key, void *value);
int map_update_all_cpus(struct map *map, const void *key, const void *value, uint64_t flags);
int map_get_next_key(struct map *map, const void *key, void *next_key);

/* Array maps with one element, used for .data/.rodata/.bss: the value. */
void *map_array_base(struct map *map);

/*
 * Ring buffers (Linux's BPF_MAP_TYPE_RINGBUF semantics: 8-byte record
 * header, records 8-byte aligned, reserve/commit/discard, one consumer).
 */
void *map_ringbuf_reserve(struct map *map, uint64_t size, uint64_t flags);
void map_ringbuf_submit(void *record, uint64_t flags);
void map_ringbuf_discard(void *record, uint64_t flags);
int map_ringbuf_output(struct map *map, const void *data, uint64_t size, uint64_t flags);
uint64_t map_ringbuf_query(struct map *map, uint64_t flags);
/* Records the consumer has not yet seen are passed to fn in order; fn
 * returning non-zero stops.  Returns the number consumed or -errno. */
typedef int (*map_ringbuf_fn)(void *arg, const void *data, size_t size);
int map_ringbuf_consume(struct map *map, map_ringbuf_fn fn, void *arg);
/* Records dropped because the buffer was full (counted by reserve/output). */
uint64_t map_ringbuf_dropped(struct map *map);

#endif /* GPUEXT_BPF_MAP_H */
