/* SPDX-License-Identifier: MIT */
/*
 * agent_launch_id.c - launch ids: what each launch of an instrumented
 * kernel passes besides the application's parameters, and the launch table.
 *
 * The injector appends `.param .u64` to an instrumented kernel's list
 * (ptx_inject_opts.launch_param); bpf_gpu_launch_id() reads it.  So every
 * launch of the instrumented function passes one more parameter: with
 * kernelParams, an array of the kernel's own count plus one pointer (the
 * driver reads as many as the function has, so the count comes from the
 * PTX, not from the application); with `extra`, the parameter buffer copied
 * into one that holds the id at the parameter's offset, and its size fixed.
 * The driver copies both at the call (a graph node's at its creation), so
 * the storage lives on the wrapper's stack for the call only.
 *
 * Ids are one counter of the process, from 1; a launch that cannot carry
 * one (an `extra` list with keys this code does not know) runs the original
 * kernel, uninstrumented (noticed once).  The launch table is a ring
 * buffer of the session that the object defines under GPUEXT_LAUNCHES_MAP:
 * one record per id, written at the launch call, read by the CLI.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "agent_impl.h"

static uint64_t agent_launch_last; /* the last id given (__atomic builtins) */

/* The launch table's map, or NULL; looked up once. */
static struct map *agent_launch_table(void)
{
	static struct map *table;
	static int looked;
	if (__atomic_load_n(&looked, __ATOMIC_ACQUIRE))
		return table;
	const struct session *s = agent_session;
	for (size_t i = 0; s && i < s->obj->map_cnt; i++)
		if (!strcmp(s->obj->maps[i].def.name, GPUEXT_LAUNCHES_MAP) &&
		    map_get_def(s->obj->maps[i].map)->type == MAP_TYPE_RINGBUF)
			table = s->obj->maps[i].map;
	__atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
	return table;
}

static int agent_launch_refuse(const struct agent_kernel *k, const char *why)
{
	static int told;
	if (!__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
		agent_notice("kernel %s: a launch runs uninstrumented: %s (said once)", k->name, why);
	return -1;
}

/* kernelParams: the application's n pointers, then the id's. */
static int agent_launch_params(struct agent_launch_args *a, const struct agent_kernel *k,
			       void **params)
{
	size_t n = k->lid.params;
	void **p = a->small;
	if (n && !params) /* the driver refuses it: with the original function */
		return agent_launch_refuse(k, "it passes no parameters");
	if (n + 1 > AGENT_LAUNCH_SMALL && !(p = a->heap = malloc((n + 1) * sizeof(*p))))
		return agent_launch_refuse(k, "out of memory");
	if (n)
		memcpy(p, params, n * sizeof(*p));
	p[n] = &a->id;
	a->params = p;
	return 0;
}

/* extra = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE,
 * &size, CU_LAUNCH_PARAM_END} in any order: the same with a copy of buf
 * that has the id at its offset. */
static int agent_launch_buffer(struct agent_launch_args *a, const struct agent_kernel *k,
			       void **extra)
{
	const void *buf = NULL;
	const size_t *size = NULL;
	for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
		if (i == 4) /* two keys, then the end */
			return agent_launch_refuse(k, "its `extra` list is longer than the driver's");
		if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			buf = extra[i + 1];
		else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
			size = extra[i + 1];
		else
			return agent_launch_refuse(k, "its `extra` list has a key gpuext does not know");
	}
	if (!buf || !size)
		return agent_launch_refuse(k, "its `extra` list has no parameter buffer");
	size_t off = k->lid.offset, keep = *size < off ? *size : off;
	unsigned char *copy = a->heap = calloc(1, off + 8);
	if (!copy)
		return agent_launch_refuse(k, "out of memory");
	memcpy(copy, buf, keep);
	memcpy(copy + off, &a->id, 8);
	a->size = off + 8;
	a->extra_copy[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
	a->extra_copy[1] = copy;
	a->extra_copy[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
	a->extra_copy[3] = &a->size;
	a->extra_copy[4] = CU_LAUNCH_PARAM_END;
	a->extra = a->extra_copy;
	return 0;
}

int agent_launch_args_make(struct agent_launch_args *a, const struct agent_kernel *k,
			   void **params, void **extra)
{
	a->params = params;
	a->extra = extra;
	a->id = __atomic_add_fetch(&agent_launch_last, 1, __ATOMIC_RELAXED);
	if (!k->lid.added)
		return 0;
	if (params || !extra) /* no parameters at all: only the id */
		return agent_launch_params(a, k, params);
	return agent_launch_buffer(a, k, extra);
}

void agent_launch_args_free(struct agent_launch_args *a)
{
	free(a->heap);
	a->heap = NULL;
}

void agent_launch_note(const struct agent_launch_args *a, const struct agent_kernel *k,
		       const unsigned dims[6], unsigned shmem, CUstream s,
		       enum gpuext_launch_kind kind)
{
	struct map *table = agent_launch_table();
	if (!table)
		return;
	size_t name = strlen(k->name) + 1;
	struct gpuext_launch *r = map_ringbuf_reserve(table, sizeof(*r) + name, 0);
	if (!r)
		return; /* full: counted as a drop, as any ring buffer's */
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	*r = (struct gpuext_launch){.id = a->id,
				    .host_ns = (uint64_t)ts.tv_sec * 1000000000ull +
					       (uint64_t)ts.tv_nsec,
				    .stream = (uint64_t)(uintptr_t)s,
				    .grid = {dims[0], dims[1], dims[2]},
				    .block = {dims[3], dims[4], dims[5]},
				    .shmem = shmem,
				    .kind = kind};
	memcpy(r + 1, k->name, name);
	map_ringbuf_submit(r, 0);
}
