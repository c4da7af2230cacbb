/* SPDX-License-Identifier: MIT */
/*
 * map.c - what every map type shares: definition checks, the storage header,
 * creating and opening storage, and dispatch to the type's ops.
 */
#include "map_impl.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Limits that keep size arithmetic far from overflow; Linux's are similar. */
enum { MAP_MAX_KEY_SIZE = 512 };
#define MAP_MAX_VALUE_SIZE (1ull << 26)
#define MAP_MAX_STORAGE (1ull << 40)
enum { MAP_MAX_CPUS = 4096 };

/*
 * Flags accepted: those of map.h, and Linux flags that only tune the
 * kernel's implementation or the syscall-side access and so mean nothing
 * here (BPF_F_NO_COMMON_LRU 2, BPF_F_NUMA_NODE 4, BPF_F_RDONLY 8,
 * BPF_F_WRONLY 16, BPF_F_ZERO_SEED 64, BPF_F_WRONLY_PROG 256).  Hash maps
 * are always preallocated, with or without MAP_F_NO_PREALLOC.
 */
#define MAP_FLAGS_KNOWN                                                        \
	((uint32_t)(MAP_F_NO_PREALLOC | MAP_F_RDONLY_PROG | MAP_F_MMAPABLE | 2 | 4 | 8 | 16 | \
		    64 | 256))

static const struct map_ops *map_ops_of(uint32_t type)
{
	switch (type) {
	case MAP_TYPE_ARRAY:
	case MAP_TYPE_PERCPU_ARRAY: return &map_array_ops;
	case MAP_TYPE_HASH:
	case MAP_TYPE_PERCPU_HASH:
	case MAP_TYPE_LRU_HASH: return &map_hash_ops;
	case MAP_TYPE_RINGBUF: return &map_ringbuf_ops;
	case MAP_TYPE_GPU_BLOCK_ARRAY: return &map_block_array_ops;
	}
	return NULL;
}

unsigned map_configured_cpus(void)
{
	static _Atomic unsigned cached;
	unsigned n = atomic_load_explicit(&cached, memory_order_relaxed);

	if (!n) {
		long c = sysconf(_SC_NPROCESSORS_CONF);
		n = c < 1 ? 1 : c > MAP_MAX_CPUS ? MAP_MAX_CPUS : (unsigned)c;
		atomic_store_explicit(&cached, n, memory_order_relaxed);
	}
	return n;
}

unsigned map_this_cpu(const struct map *map)
{
	int cpu = sched_getcpu();
	return cpu < 0 ? 0 : (unsigned)cpu % map->nr_cpus;
}

void map_lock(_Atomic uint32_t *lock)
{
	for (unsigned spins = 0;; spins++) {
		if (!atomic_load_explicit(lock, memory_order_relaxed) &&
		    !atomic_exchange_explicit(lock, 1, memory_order_acquire))
			return;
		if (spins >= 64) {
			sched_yield();
			spins = 0;
		}
	}
}

void map_unlock(_Atomic uint32_t *lock)
{
	atomic_store_explicit(lock, 0, memory_order_release);
}

int map_def_check(const struct map_def *def, struct err *e)
{
	const char *name = def->name;
	const struct map_ops *ops = map_ops_of(def->type);

	if (!memchr(def->name, '\0', sizeof(def->name)))
		return err_set(e, EINVAL, "map: name longer than %d bytes", MAP_NAME_LEN - 1);
	if (!ops)
		return err_set(e, EINVAL, "map '%s': unsupported map type %u", name, def->type);
	if (def->flags & ~MAP_FLAGS_KNOWN)
		return err_set(e, EINVAL, "map '%s': unsupported flags 0x%x", name,
			       def->flags & ~MAP_FLAGS_KNOWN);
	if (def->max_entries == 0)
		return err_set(e, EINVAL, "map '%s': max_entries is 0", name);
	if (def->key_size > MAP_MAX_KEY_SIZE)
		return err_set(e, E2BIG, "map '%s': key_size %u is over %d", name,
			       def->key_size, MAP_MAX_KEY_SIZE);
	if (def->value_size > MAP_MAX_VALUE_SIZE)
		return err_set(e, E2BIG, "map '%s': value_size %u is over %llu", name,
			       def->value_size, MAP_MAX_VALUE_SIZE);
	int err = ops->check(def, e);
	if (err)
		return err;
	uint64_t size = MAP_HDR_SIZE + ops->area_size(def, map_configured_cpus());
	if (size > MAP_MAX_STORAGE)
		return err_set(e, E2BIG, "map '%s': needs %llu bytes of storage, over the limit of %llu",
			       name, (unsigned long long)size, MAP_MAX_STORAGE);
	return 0;
}

static uint64_t map_size_for(const struct map_def *def, unsigned nr_cpus)
{
	return map_round_line(MAP_HDR_SIZE + map_ops_of(def->type)->area_size(def, nr_cpus));
}

size_t map_storage_size(const struct map_def *def)
{
	if (map_def_check(def, NULL))
		return 0;
	return map_size_for(def, map_configured_cpus());
}

static void map_format(struct map *map, uint64_t size)
{
	struct map_hdr *hdr = (struct map_hdr *)map->base;

	memset(map->base, 0, size);
	hdr->version = MAP_LAYOUT_VERSION;
	hdr->nr_cpus = map->nr_cpus;
	hdr->size = size;
	hdr->def = map->def;
	if (map->ops->format)
		map->ops->format(map);
	/* The magic goes last: another process that sees it sees a whole map. */
	atomic_store_explicit((_Atomic uint64_t *)&hdr->magic, MAP_MAGIC, memory_order_release);
}

/* An existing block must hold a map with the same layout as def. */
static int map_check_storage(const struct map_def *def, const struct map_hdr *hdr,
			     struct err *e)
{
	const char *name = def->name;
	uint64_t magic = atomic_load_explicit((const _Atomic uint64_t *)&hdr->magic,
					      memory_order_acquire);

	if (magic != MAP_MAGIC)
		return err_set(e, EINVAL, "map '%s': storage holds no formatted map (bad magic)", name);
	if (hdr->version != MAP_LAYOUT_VERSION)
		return err_set(e, EINVAL, "map '%s': storage layout version %u, expected %u", name,
			       hdr->version, MAP_LAYOUT_VERSION);
#define MAP_SAME(field)                                                                    \
	if (hdr->def.field != def->field)                                                  \
		return err_set(e, EINVAL, "map '%s': storage has " #field " %u, expected %u",  \
			       name, hdr->def.field, def->field);
	MAP_SAME(type)
	MAP_SAME(key_size)
	MAP_SAME(value_size)
	MAP_SAME(max_entries)
	MAP_SAME(flags)
#undef MAP_SAME
	if (hdr->nr_cpus == 0 || hdr->nr_cpus > MAP_MAX_CPUS ||
	    hdr->size != map_size_for(def, hdr->nr_cpus))
		return err_set(e, EINVAL, "map '%s': storage header is corrupt (size %llu, %u CPUs)",
			       name, (unsigned long long)hdr->size, hdr->nr_cpus);
	return 0;
}

static int map_new_handle(const struct map_def *def, void *storage, unsigned nr_cpus,
			  struct map **out, struct err *e)
{
	struct map *map = calloc(1, sizeof(*map));

	if (!map)
		return err_set(e, ENOMEM, "map '%s': out of memory", def->name);
	map->def = *def;
	map->ops = map_ops_of(def->type);
	map->base = storage;
	map->nr_cpus = nr_cpus;
	*out = map;
	return 0;
}

static int map_open_storage_n(const struct map_def *def, void *storage, int format,
			      unsigned nr_cpus, struct map **out, struct err *e)
{
	int err = map_def_check(def, e);

	*out = NULL;
	if (err)
		return err;
	if ((uintptr_t)storage % MAP_ALIGN)
		return err_set(e, EINVAL, "map '%s': storage at %p is not %d-byte aligned",
			       def->name, storage, MAP_ALIGN);
	if (!format)
		nr_cpus = ((const struct map_hdr *)storage)->nr_cpus;
	if (!format && (err = map_check_storage(def, storage, e)))
		return err;
	err = map_new_handle(def, storage, nr_cpus, out, e);
	if (!err && format)
		map_format(*out, map_size_for(def, nr_cpus));
	return err;
}

int map_open_storage(const struct map_def *def, void *storage, int format,
		     struct map **out, struct err *e)
{
	return map_open_storage_n(def, storage, format, map_configured_cpus(), out, e);
}

static unsigned map_clamp_cpus(const struct map_def *def, unsigned nr_cpus)
{
	if (def->type != MAP_TYPE_PERCPU_ARRAY && def->type != MAP_TYPE_PERCPU_HASH)
		return map_configured_cpus(); /* as map_open_storage: unused by the layout */
	return nr_cpus == 0 ? map_configured_cpus() : nr_cpus > MAP_MAX_CPUS ? MAP_MAX_CPUS : nr_cpus;
}

size_t map_storage_size_cpus(const struct map_def *def, unsigned nr_cpus)
{
	if (map_def_check(def, NULL))
		return 0;
	uint64_t size = map_size_for(def, map_clamp_cpus(def, nr_cpus));
	return size > MAP_MAX_STORAGE ? 0 : (size_t)size;
}

int map_format_storage_cpus(const struct map_def *def, void *storage, unsigned nr_cpus,
			    struct map **out, struct err *e)
{
	return map_open_storage_n(def, storage, 1, map_clamp_cpus(def, nr_cpus), out, e);
}

int map_create(const struct map_def *def, struct map **out, struct err *e)
{
	int err = map_def_check(def, e);

	*out = NULL;
	if (err)
		return err;
	uint64_t size = map_size_for(def, map_configured_cpus());
	/* Anonymous mappings are zeroed, aligned, and committed lazily, which
	 * matters for large preallocated maps that stay mostly empty. */
	void *storage = mmap(NULL, size, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (storage == MAP_FAILED)
		return err_set(e, ENOMEM, "map '%s': cannot allocate %llu bytes of storage",
			       def->name, (unsigned long long)size);
	err = map_new_handle(def, storage, map_configured_cpus(), out, e);
	if (err) {
		munmap(storage, size);
		return err;
	}
	(*out)->owns_storage = 1;
	map_format(*out, size);
	return 0;
}

void map_free(struct map *map)
{
	if (!map)
		return;
	if (map->owns_storage)
		munmap(map->base, ((struct map_hdr *)map->base)->size);
	free(map);
}

const struct map_def *map_get_def(const struct map *map)
{
	return &map->def;
}

static int map_is_percpu(uint32_t type)
{
	return type == MAP_TYPE_PERCPU_ARRAY || type == MAP_TYPE_PERCPU_HASH;
}

unsigned map_nr_cpus(const struct map *map)
{
	return map_is_percpu(map->def.type) ? map->nr_cpus : 1;
}

unsigned map_def_nr_cpus(const struct map_def *def)
{
	return map_is_percpu(def->type) ? map_configured_cpus() : 1;
}

void *map_lookup(struct map *map, const void *key)
{
	return map->ops->lookup ? map->ops->lookup(map, key) : NULL;
}

static int map_update_flags_ok(uint64_t flags)
{
	return flags <= MAP_EXIST;
}

int map_update(struct map *map, const void *key, const void *value, uint64_t flags)
{
	if (!map->ops->update || !map_update_flags_ok(flags))
		return -EINVAL;
	return map->ops->update(map, key, value, flags, 0);
}

int map_delete(struct map *map, const void *key)
{
	return map->ops->delete ? map->ops->delete(map, key) : -EINVAL;
}

int map_lookup_copy(struct map *map, const void *key, void *value)
{
	return map->ops->lookup_copy ? map->ops->lookup_copy(map, key, value) : -EINVAL;
}

int map_update_all_cpus(struct map *map, const void *key, const void *value, uint64_t flags)
{
	if (!map->ops->update || !map_update_flags_ok(flags))
		return -EINVAL;
	return map->ops->update(map, key, value, flags, 1);
}

int map_get_next_key(struct map *map, const void *key, void *next_key)
{
	return map->ops->get_next_key ? map->ops->get_next_key(map, key, next_key) : -EINVAL;
}
