/* SPDX-License-Identifier: MIT */
/*
 * map_array.c - array and per-CPU array maps, and the block-local array's
 * host side.
 *
 * The area is max_entries values, each rounded up to 8 bytes (Linux's
 * element size, so that 8-byte atomics on values are aligned); a per-CPU
 * array holds nr_cpus such values per index, the CPUs of one index side by
 * side.  Elements always exist: update never allocates and delete is
 * refused, so arrays need no lock: value updates are plain copies, as in
 * Linux, and programs that need atomicity use atomic instructions.
 */
#include "map_impl.h"

#include <errno.h>
#include <string.h>

enum { MAP_PERCPU_MAX_VALUE = 32768 }; /* Linux's per-CPU unit limit */

static int array_is_percpu(const struct map *map)
{
	return map->def.type == MAP_TYPE_PERCPU_ARRAY;
}

static uint64_t array_stride(const struct map_def *def)
{
	return map_round8(def->value_size);
}

static int array_check(const struct map_def *def, struct err *e)
{
	if (def->key_size != 4)
		return err_set(e, EINVAL, "map '%s': array key_size must be 4, not %u",
			       def->name, def->key_size);
	if (def->value_size == 0)
		return err_set(e, EINVAL, "map '%s': value_size is 0", def->name);
	if (def->type == MAP_TYPE_PERCPU_ARRAY && def->value_size > MAP_PERCPU_MAX_VALUE)
		return err_set(e, E2BIG, "map '%s': per-CPU value_size %u is over %d", def->name,
			       def->value_size, MAP_PERCPU_MAX_VALUE);
	uint64_t bytes = (uint64_t)def->max_entries * array_stride(def);
	if (def->type == MAP_TYPE_GPU_BLOCK_ARRAY && bytes > MAP_BLOCK_ARRAY_MAX_BYTES)
		return err_set(e, E2BIG,
			       "map '%s': block-local array of %u x %u bytes needs %llu bytes of "
			       "each block's shared memory, over the limit of %u", def->name,
			       def->max_entries, def->value_size, (unsigned long long)bytes,
			       MAP_BLOCK_ARRAY_MAX_BYTES);
	return 0;
}

static uint64_t array_area_size(const struct map_def *def, unsigned nr_cpus)
{
	unsigned slots = def->type == MAP_TYPE_PERCPU_ARRAY ? nr_cpus : 1;
	return (uint64_t)def->max_entries * slots * array_stride(def);
}

/* Index from a key, or -1 when out of range. */
static int64_t array_index(const struct map *map, const void *key)
{
	uint32_t idx;

	memcpy(&idx, key, sizeof(idx));
	return idx < map->def.max_entries ? (int64_t)idx : -1;
}

static unsigned char *array_slot(const struct map *map, uint64_t idx, unsigned cpu)
{
	unsigned slots = array_is_percpu(map) ? map->nr_cpus : 1;
	return (unsigned char *)map_area(map) + (idx * slots + cpu) * array_stride(&map->def);
}

static void *array_lookup(struct map *map, const void *key)
{
	int64_t idx = array_index(map, key);

	if (idx < 0)
		return NULL;
	return array_slot(map, idx, array_is_percpu(map) ? map_this_cpu(map) : 0);
}

static int array_update(struct map *map, const void *key, const void *value, uint64_t flags,
			int all_cpus)
{
	int64_t idx = array_index(map, key);
	uint32_t vsize = map->def.value_size;

	if (idx < 0)
		return -E2BIG;
	if (flags == MAP_NOEXIST)
		return -EEXIST;
	if (!array_is_percpu(map)) {
		memcpy(array_slot(map, idx, 0), value, vsize);
	} else if (!all_cpus) {
		memcpy(array_slot(map, idx, map_this_cpu(map)), value, vsize);
	} else {
		for (unsigned cpu = 0; cpu < map->nr_cpus; cpu++)
			memcpy(array_slot(map, idx, cpu),
			       (const unsigned char *)value + cpu * array_stride(&map->def), vsize);
	}
	return 0;
}

static int array_delete(struct map *map, const void *key)
{
	return -EINVAL; /* elements of an array always exist */
}

static int array_lookup_copy(struct map *map, const void *key, void *value)
{
	int64_t idx = array_index(map, key);
	unsigned slots = array_is_percpu(map) ? map->nr_cpus : 1;

	if (idx < 0)
		return -ENOENT;
	for (unsigned cpu = 0; cpu < slots; cpu++)
		memcpy((unsigned char *)value + cpu * array_stride(&map->def),
		       array_slot(map, idx, cpu), map->def.value_size);
	return 0;
}

static int array_get_next_key(struct map *map, const void *key, void *next_key)
{
	int64_t idx = key ? array_index(map, key) : -1;
	uint32_t next = idx < 0 ? 0 : (uint32_t)idx + 1;

	if (next >= map->def.max_entries)
		return -ENOENT;
	memcpy(next_key, &next, sizeof(next));
	return 0;
}

void *map_array_base(struct map *map)
{
	return map->def.type == MAP_TYPE_ARRAY ? map_area(map) : NULL;
}

/*
 * The block-local array (MAP_TYPE_GPU_BLOCK_ARRAY).  Its values exist on the
 * GPU only, in the shared memory of each block of an instrumented kernel
 * (docs/device-maps.md "Block-local array"): the user side (gpuext, the
 * API) sees none.  A device program run on the host (tests, the
 * interpreter) sees one block's copy: this storage, which nothing zeroes
 * between runs.
 */
static int block_array_update(struct map *map, const void *key, const void *value,
			      uint64_t flags, int all_cpus)
{
	return all_cpus ? -EOPNOTSUPP : array_update(map, key, value, flags, 0);
}

static int block_array_lookup_copy(struct map *map, const void *key, void *value)
{
	return -EOPNOTSUPP;
}

static int block_array_get_next_key(struct map *map, const void *key, void *next_key)
{
	return -ENOENT; /* no keys to walk: no values on the host */
}

const struct map_ops map_block_array_ops = {
	.check = array_check,
	.area_size = array_area_size,
	.lookup = array_lookup,
	.update = block_array_update,
	.delete = array_delete,
	.lookup_copy = block_array_lookup_copy,
	.get_next_key = block_array_get_next_key,
};

/* Both array types: the type in the definition selects per-CPU slots. */
const struct map_ops map_array_ops = {
	.check = array_check,
	.area_size = array_area_size,
	.lookup = array_lookup,
	.update = array_update,
	.delete = array_delete,
	.lookup_copy = array_lookup_copy,
	.get_next_key = array_get_next_key,
};
