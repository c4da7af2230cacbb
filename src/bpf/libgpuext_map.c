/* SPDX-License-Identifier: MIT */
/*
 * libgpuext_map.c - the public map API: maps of their own and an object's
 * maps, element access with libbpf's size checks, ring buffer consumption.
 */
#include "libgpuext_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(struct gpuext_map_def) == sizeof(struct map_def) &&
		       sizeof(((struct gpuext_map_def *)0)->name) == MAP_NAME_LEN,
	       "public and internal map definitions must match");

void api_map_def_export(struct gpuext_map_def *out, const struct map_def *def)
{
	out->type = def->type;
	out->key_size = def->key_size;
	out->value_size = def->value_size;
	out->max_entries = def->max_entries;
	out->flags = def->flags;
	memcpy(out->name, def->name, sizeof(out->name));
}

struct map *api_map_handle(const struct gpuext_map *map, const char *op)
{
	struct map *m = map->own ? map->own : map->omap->map;

	if (!m)
		api_warn("map '%s': %s: the object is not loaded (gpuext_object__load)",
			 map->def.name, op);
	return m;
}

GPUEXT_API struct gpuext_map *gpuext_map__create(enum gpuext_map_type type, const char *name,
						 uint32_t key_size, uint32_t value_size,
						 uint32_t max_entries, uint32_t flags)
{
	struct map_def def = {.type = type, .key_size = key_size, .value_size = value_size,
			      .max_entries = max_entries, .flags = flags};
	struct gpuext_map *map;
	struct err e;
	int err;

	if (name && strlen(name) >= sizeof(def.name)) {
		api_warn("map '%s': name longer than %zu bytes", name, sizeof(def.name) - 1);
		errno = EINVAL;
		return NULL;
	}
	if (name)
		strcpy(def.name, name);
	if (!(map = calloc(1, sizeof(*map)))) {
		errno = ENOMEM;
		return NULL;
	}
	if ((err = map_create(&def, &map->own, &e))) {
		api_warn("%s", e.msg);
		free(map);
		errno = -err;
		return NULL;
	}
	api_map_def_export(&map->def, &def);
	return map;
}

GPUEXT_API void gpuext_map__destroy(struct gpuext_map *map)
{
	/* An object's maps belong to the object (gpuext_object__close). */
	if (!map || !map->own)
		return;
	map_free(map->own);
	free(map);
}

GPUEXT_API const struct gpuext_map_def *gpuext_map__def(const struct gpuext_map *map)
{
	return &map->def;
}

GPUEXT_API unsigned gpuext_map__nr_cpus(const struct gpuext_map *map)
{
	struct map *m = map->own ? map->own : map->omap->map;
	/* Before load: what the map will get when it is created. */
	return m ? map_nr_cpus(m) : map_def_nr_cpus(&map->omap->def);
}

static int api_check_sizes(const struct gpuext_map *map, struct map *m, const char *op,
			   size_t key_sz, size_t value_sz, int has_value)
{
	const struct gpuext_map_def *d = &map->def;
	int percpu = d->type == GPUEXT_MAP_TYPE_PERCPU_ARRAY || d->type == GPUEXT_MAP_TYPE_PERCPU_HASH;
	size_t want = percpu ? (size_t)map_nr_cpus(m) * ((d->value_size + 7u) & ~7u) : d->value_size;

	if (key_sz != d->key_size) {
		api_warn("map '%s': %s: key size %zu, the map's is %u", d->name, op, key_sz,
			 d->key_size);
		return -EINVAL;
	}
	if (d->type == GPUEXT_MAP_TYPE_GPU_BLOCK_ARRAY && has_value) {
		api_warn("map '%s': %s: a block-local array's values live in each GPU block's "
			 "shared memory while the block runs; the host has none", d->name, op);
		return -EOPNOTSUPP;
	}
	if (has_value && value_sz != want) {
		api_warn("map '%s': %s: value size %zu, expected %zu%s", d->name, op, value_sz, want,
			 percpu ? " (per-CPU: nr_cpus values, each rounded up to 8)" : "");
		return -EINVAL;
	}
	return 0;
}

GPUEXT_API int gpuext_map__lookup_elem(const struct gpuext_map *map, const void *key,
				       size_t key_sz, void *value, size_t value_sz,
				       uint64_t flags)
{
	struct map *m = api_map_handle(map, "lookup");
	int err = m ? api_check_sizes(map, m, "lookup", key_sz, value_sz, 1) : -EINVAL;

	if (!err && flags)
		err = -EINVAL;
	return err ? err : map_lookup_copy(m, key, value);
}

GPUEXT_API int gpuext_map__update_elem(const struct gpuext_map *map, const void *key,
				       size_t key_sz, const void *value, size_t value_sz,
				       uint64_t flags)
{
	struct map *m = api_map_handle(map, "update");
	int err = m ? api_check_sizes(map, m, "update", key_sz, value_sz, 1) : -EINVAL;

	return err ? err : map_update_all_cpus(m, key, value, flags);
}

GPUEXT_API int gpuext_map__delete_elem(const struct gpuext_map *map, const void *key,
				       size_t key_sz, uint64_t flags)
{
	struct map *m = api_map_handle(map, "delete");
	int err = m ? api_check_sizes(map, m, "delete", key_sz, 0, 0) : -EINVAL;

	if (!err && flags)
		err = -EINVAL;
	return err ? err : map_delete(m, key);
}

GPUEXT_API int gpuext_map__get_next_key(const struct gpuext_map *map, const void *cur_key,
					void *next_key, size_t key_sz)
{
	struct map *m = api_map_handle(map, "get_next_key");
	int err = m ? api_check_sizes(map, m, "get_next_key", key_sz, 0, 0) : -EINVAL;

	return err ? err : map_get_next_key(m, cur_key, next_key);
}

GPUEXT_API int gpuext_map__ringbuf_consume(const struct gpuext_map *map, gpuext_ringbuf_fn_t fn,
					   void *ctx)
{
	struct map *m = api_map_handle(map, "ringbuf_consume");

	if (!m)
		return -EINVAL;
	if (map->def.type != GPUEXT_MAP_TYPE_RINGBUF) {
		api_warn("map '%s': ringbuf_consume: not a ring buffer", map->def.name);
		return -EINVAL;
	}
	return map_ringbuf_consume(m, fn, ctx);
}
