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

/* Add CPU slots 1.. of val (cpus x stride bytes) into slot 0, word by word. */
static void tool_sum_cpus(unsigned char *val, unsigned cpus, size_t stride)
{
	for (unsigned c = 1; c < cpus; c++)
		for (size_t w = 0; w + 8 <= stride; w += 8) {
			uint64_t a, b;
			memcpy(&a, val + w, 8);
			memcpy(&b, val + c * stride + w, 8);
			a += b;
			memcpy(val + w, &a, 8);
		}
}

static int tool_is_percpu(const struct map_def *d)
{
	return d->type == MAP_TYPE_PERCPU_ARRAY || d->type == MAP_TYPE_PERCPU_HASH;
}

int tool_map_each(struct map *m, int (*fn)(void *arg, const void *key, const void *value),
		  void *arg)
{
	const struct map_def *d = map_get_def(m);
	size_t stride = (d->value_size + 7) & ~(size_t)7;
	unsigned cpus = map_nr_cpus(m);
	unsigned char *key = calloc(1, d->key_size), *next = calloc(1, d->key_size);
	unsigned char *val = calloc(cpus, stride);
	int ret = 0;
	if (!key || !next || !val) {
		ret = -1;
		goto out;
	}
	for (int err = map_get_next_key(m, NULL, next); !err; err = map_get_next_key(m, key, next)) {
		memcpy(key, next, d->key_size);
		if (map_lookup_copy(m, key, val))
			continue; /* deleted meanwhile */
		if (tool_is_percpu(d))
			tool_sum_cpus(val, cpus, stride);
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

int tool_map_sum(struct map *m, const void *key, uint64_t *out, size_t words)
{
	const struct map_def *d = map_get_def(m);
	size_t stride = (d->value_size + 7) & ~(size_t)7;
	unsigned cpus = map_nr_cpus(m);
	unsigned char *val = calloc(cpus, stride);
	int ret = -1;

	memset(out, 0, words * 8);
	if (val && !map_lookup_copy(m, key, val)) {
		if (tool_is_percpu(d))
			tool_sum_cpus(val, cpus, stride);
		memcpy(out, val, words * 8 < stride ? words * 8 : stride);
		ret = 0;
	}
	free(val);
	return ret;
}
