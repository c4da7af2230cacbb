/* SPDX-License-Identifier: MIT */
/*
 * session_writer.c - stands in for the agent in `gpuext run` tests: opens
 * the session named by GPUEXT_SESSION, writes argv[1..] as ring buffer
 * records (one per argument, the string's bytes) into the first ring buffer
 * and adds 1 per record to element 0 of the first array map, the way the
 * agent forwards device records and mirrors device maps (session.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/session.h"

int main(int argc, char **argv)
{
	const char *name = getenv(SESSION_ENV);
	struct session *s;
	struct err e = {{0}};
	if (!name || session_open(name, &s, &e)) {
		fprintf(stderr, "session_writer: %s\n", name ? e.msg : "no " SESSION_ENV);
		return 1;
	}
	struct map *rb = NULL, *arr = NULL;
	for (size_t i = 0; i < s->obj->map_cnt; i++) {
		const struct map_def *d = &s->obj->maps[i].def;
		if (d->type == MAP_TYPE_RINGBUF && !rb)
			rb = s->obj->maps[i].map;
		if (d->type == MAP_TYPE_ARRAY && !s->obj->maps[i].init && !arr)
			arr = s->obj->maps[i].map;
	}
	uint32_t zero = 0;
	uint64_t *count = arr ? map_lookup(arr, &zero) : NULL;
	for (int i = 1; i < argc; i++) {
		if (rb)
			map_ringbuf_output(rb, argv[i], strlen(argv[i]), 0);
		if (count)
			__atomic_fetch_add(count, 1, __ATOMIC_RELAXED);
	}
	session_close(s);
	return 0;
}
