/* SPDX-License-Identifier: MIT */
/*
 * map_impl.h - what the map files share (map.c, map_array.c, map_hash.c,
 * map_ringbuf.c); not part of map.h's interface.
 *
 * Storage layout, common to every type:
 *
 *   offset 0                 struct map_hdr (magic, the definition, CPU
 *                            slots, total size): what map_open_storage()
 *                            checks before trusting a block
 *   offset MAP_HDR_SIZE      the type's own area, laid out by its ops
 *
 * Every offset inside the block is relative to its start, so the block
 * means the same in every process that maps it, at any address.
 */
#ifndef GPUEXT_BPF_MAP_IMPL_H
#define GPUEXT_BPF_MAP_IMPL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "map.h"

enum {
	MAP_ALIGN = 64,    /* storage and every hot field start on a cache line */
	MAP_HDR_SIZE = 192,
};

#define MAP_MAGIC 0x70616d7478657067ull /* "gpextmap" */
#define MAP_LAYOUT_VERSION 2u

struct map_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t nr_cpus;    /* per-CPU slots, fixed when formatted */
	uint64_t size;       /* map_storage_size() when formatted */
	struct map_def def;  /* copy of the definition, name included */
};
_Static_assert(sizeof(struct map_hdr) <= MAP_HDR_SIZE, "map header too large");

struct map_ops {
	/* Extra checks on top of map_def_check's common ones. */
	int (*check)(const struct map_def *def, struct err *e);
	/* Bytes of the type's area (after the header), for nr_cpus slots. */
	uint64_t (*area_size)(const struct map_def *def, unsigned nr_cpus);
	/* Lay out a zeroed area (NULL: zeroes are the initial state). */
	void (*format)(struct map *map);
	void *(*lookup)(struct map *map, const void *key);
	/* all_cpus: value holds every CPU's slot (user side), else one value
	 * for the calling CPU (program side). */
	int (*update)(struct map *map, const void *key, const void *value,
		      uint64_t flags, int all_cpus);
	int (*delete)(struct map *map, const void *key);
	int (*lookup_copy)(struct map *map, const void *key, void *value);
	int (*get_next_key)(struct map *map, const void *key, void *next_key);
};

struct map {
	struct map_def def;
	const struct map_ops *ops;
	unsigned char *base;  /* the storage block in this process */
	unsigned nr_cpus;     /* from the header */
	int owns_storage;     /* map_create()d: free the block with the handle */
};

extern const struct map_ops map_array_ops;  /* array, per-CPU array */
extern const struct map_ops map_hash_ops;   /* hash, per-CPU hash, LRU hash */
extern const struct map_ops map_ringbuf_ops;
extern const struct map_ops map_block_array_ops; /* GPU block-local array */

static inline void *map_area(const struct map *map)
{
	return map->base + MAP_HDR_SIZE;
}

static inline uint64_t map_round8(uint64_t n)
{
	return (n + 7) & ~(uint64_t)7;
}

static inline uint64_t map_round_line(uint64_t n)
{
	return (n + MAP_ALIGN - 1) & ~(uint64_t)(MAP_ALIGN - 1);
}

/* Value slot of the calling CPU in a per-CPU map (sched_getcpu()). */
unsigned map_this_cpu(const struct map *map);

/* CPU slots a new per-CPU map gets: the configured CPUs. */
unsigned map_configured_cpus(void);

/*
 * A spinlock that lives in the storage: a 32-bit word, 0 free, 1 held.
 * Works across processes because it is only atomics on shared memory;
 * spinning yields the CPU after a while, since holders can be preempted on
 * machines with fewer cores than threads.
 */
void map_lock(_Atomic uint32_t *lock);
void map_unlock(_Atomic uint32_t *lock);

#endif /* GPUEXT_BPF_MAP_IMPL_H */
