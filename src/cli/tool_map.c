/* SPDX-License-Identifier: MIT */
/* tool_map.c - reading a tool's maps from the session (tools.h). */
#include <stdlib.h>
#include <string.h>

#include "bpf/map.h"
#include "bpf/object.h"
#include "cli.h"
#include "tools.h"

struct map *tool_map(const struct object *obj, const char *name, uint32_t key_size,
		     uint32_t value_size)
{
	struct object_map *om = object_find_map(obj, name);
	if (!om) {
		cli_error("%s: no map '%s' (not this tool's object?)", obj->name, name);
		return NULL;
	}
	const struct map_def *d = map_get_def(om->map);
	if (d->key_size != key_size || d->value_size != value_size) {
		cli_error("%s: map '%s' has key %u / value %u bytes, the tool expects %u / %u",
			  obj->name, name, d->key_size, d->value_size, key_size, value_size);
		return NULL;
	}
	return om->map;
}

int tool_map_each(struct map *m, int (*fn)(void *arg, const void *key, const void *value),
		  void *arg)
{
	const struct map_def *d = map_get_def(m);
	size_t stride = (d->value_size + 7) & ~(size_t)7;
	unsigned char *key = calloc(1, d->key_size), *next = calloc(1, d->key_size);
	unsigned char *val = calloc(map_nr_cpus(m), stride);
	int ret = 0;
	if (!key || !next || !val) {
		ret = -1;
		goto out;
	}
	for (int err = map_get_next_key(m, NULL, next); !err; err = map_get_next_key(m, key, next)) {
		memcpy(key, next, d->key_size);
		if (map_lookup_copy(m, key, val))
			continue; /* deleted meanwhile */
		if ((ret = fn(arg, key, val)))
			break;
	}
out:
	free(key);
	free(next);
	free(val);
	return ret;
}
