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

struct tool_collect {
	char *v;
	size_t n, cap, elem, value_off, key_size, value_size;
};

static int tool_collect_one(void *arg, const void *key, const void *value)
{
	struct tool_collect *c = arg;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		char *v = realloc(c->v, cap * c->elem);
		if (!v)
			return -1;
		c->v = v;
		c->cap = cap;
	}
	char *dst = c->v + c->n++ * c->elem;
	memset(dst, 0, c->elem);
	memcpy(dst, key, c->key_size);
	memcpy(dst + c->value_off, value, c->value_size);
	return 0;
}

void *tool_map_collect(struct map *m, size_t elem_size, size_t value_off, size_t *n)
{
	const struct map_def *d = map_get_def(m);
	struct tool_collect c = {.elem = elem_size, .value_off = value_off,
				 .key_size = d->key_size, .value_size = d->value_size};
	*n = 0;
	if (d->key_size > value_off || value_off + d->value_size > elem_size)
		return NULL;
	if (tool_map_each(m, tool_collect_one, &c)) {
		free(c.v);
		return NULL;
	}
	*n = c.n;
	return c.v;
}
