/* SPDX-License-Identifier: MIT */
/*
 * tool_launch.c - the launch table (include/bpf/gpuext_launch.h) on the CLI
 * side: the agent's rows (kernel, grid, block, stream per launch id), the
 * device records of each launch counted and timed by id, and per launch at
 * the end: its kernel, grid, records and their durations.
 *
 * Ids are dense from 1, so launches are an array indexed by id.  A device
 * record may come before its launch's row (the two ring buffers are drained
 * one after the other), so counting never needs the row; a launch whose row
 * never came (its ring buffer was full, or id 0: a kernel that could not
 * take the id) prints without a kernel name.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/gpuext_launch.h"
#include "tools.h"

struct tool_launch {
	struct gpuext_launch row;
	char *kernel;          /* NULL: no row came */
	struct tool_dur dur;   /* the launch's device records (or histogram) */
	uint64_t first_ns, last_ns; /* earliest start, latest end among them */
	int timed;             /* first/last known: records, not a histogram */
};

static struct {
	struct tool_launch *l; /* [id] */
	size_t cap;
	uint64_t rows;         /* rows received */
} tl;

void tool_launch_reset(void)
{
	for (size_t i = 0; i < tl.cap; i++)
		free(tl.l[i].kernel);
	free(tl.l);
	memset(&tl, 0, sizeof(tl));
}

/* The launch of id, grown into; NULL when out of memory or absurd. */
static struct tool_launch *tool_launch_at(uint64_t id)
{
	if (id >= tl.cap) {
		if (id >= (1u << 28))
			return NULL;
		size_t cap = tl.cap ? tl.cap : 64;
		while (cap <= id)
			cap *= 2;
		struct tool_launch *l = realloc(tl.l, cap * sizeof(*l));
		if (!l)
			return NULL;
		memset(l + tl.cap, 0, (cap - tl.cap) * sizeof(*l));
		tl.l = l;
		tl.cap = cap;
	}
	return &tl.l[id];
}

static const char *const tool_launch_kinds[] = {"kernel", "cooperative", "ex", "graph-node"};

static const char *tool_launch_kind(uint32_t k)
{
	return k < sizeof(tool_launch_kinds) / sizeof(tool_launch_kinds[0]) ? tool_launch_kinds[k]
									      : "?";
}

int tool_launch_row(FILE *out, const char *map, const void *data, size_t size, int json)
{
	struct gpuext_launch row;
	if (strcmp(map, GPUEXT_LAUNCHES_MAP) || size <= sizeof(row))
		return 1;
	memcpy(&row, data, sizeof(row));
	const char *name = (const char *)data + sizeof(row);
	size_t len = strnlen(name, size - sizeof(row));
	struct tool_launch *l = tool_launch_at(row.id);
	tl.rows++;
	if (l) {
		free(l->kernel);
		l->row = row;
		l->kernel = strndup(name, len);
	}
	fprintf(out,
		json ? "{\"launch\":%" PRIu64 ",\"kernel\":\"%.*s\",\"grid\":[%u,%u,%u],"
		       "\"block\":[%u,%u,%u],\"shmem\":%u,\"stream\":%" PRIu64 ",\"kind\":\"%s\","
		       "\"host_ns\":%" PRIu64 "}\n"
		     : "launch=%" PRIu64 " kernel=%.*s grid=%u,%u,%u block=%u,%u,%u shmem=%u "
		       "stream=0x%" PRIx64 " kind=%s host_ns=%" PRIu64 "\n",
		(uint64_t)row.id, (int)len, name, row.grid[0], row.grid[1], row.grid[2],
		row.block[0], row.block[1], row.block[2], row.shmem, (uint64_t)row.stream,
		tool_launch_kind(row.kind), (uint64_t)row.host_ns);
	return 0;
}

const struct gpuext_launch *tool_launch_find(uint64_t id)
{
	return id < tl.cap && tl.l[id].kernel ? &tl.l[id].row : NULL;
}

uint64_t tool_launch_count(uint64_t id, uint64_t start_ns, uint64_t end_ns)
{
	struct tool_launch *l = tool_launch_at(id);
	if (!l)
		return end_ns >= start_ns ? end_ns - start_ns : 0;
	if (!l->timed || start_ns < l->first_ns)
		l->first_ns = start_ns;
	if (!l->timed || end_ns > l->last_ns)
		l->last_ns = end_ns;
	l->timed = 1;
	return tool_dur_add(&l->dur, start_ns, end_ns);
}

void tool_launch_hist(uint64_t id, const uint64_t *count, size_t buckets)
{
	struct tool_launch *l = tool_launch_at(id);
	for (size_t i = 0; l && i < buckets && i < HIST_LOG2_BUCKETS; i++) {
		l->dur.hist.count[i] += count[i];
		l->dur.n += count[i];
	}
}

void tool_launch_print(FILE *out, const char *noun, int json)
{
	uint64_t launches = 0;
	for (size_t id = 0; id < tl.cap; id++) {
		const struct tool_launch *l = &tl.l[id];
		if (!l->dur.n && !l->kernel)
			continue;
		launches++;
		const struct gpuext_launch *r = &l->row;
		/* the span from the first start to the last end, when records gave it */
		uint64_t span = l->last_ns > l->first_ns ? l->last_ns - l->first_ns : 0;
		if (json) {
			fprintf(out, "{\"launch\":%zu,\"kernel\":\"%s\",\"grid\":[%u,%u,%u],"
				     "\"block\":[%u,%u,%u],\"%s\":%" PRIu64 ",",
				id, l->kernel ? l->kernel : "", r->grid[0], r->grid[1], r->grid[2],
				r->block[0], r->block[1], r->block[2], noun, l->dur.n);
			if (l->timed)
				fprintf(out, "\"span_ns\":%" PRIu64 ",", span);
			fputs("\"dur_ns\":", out);
			hist_log2_print(out, "dur_ns", &l->dur.hist, 1);
			fputs("}\n", out);
			continue;
		}
		fprintf(out, "launch %zu: %s grid=%u,%u,%u block=%u,%u,%u: %" PRIu64 " %s",
			id, l->kernel ? l->kernel : "(no launch table row)", r->grid[0], r->grid[1],
			r->grid[2], r->block[0], r->block[1], r->block[2], l->dur.n, noun);
		if (l->timed)
			fprintf(out, " in %" PRIu64 " ns", span);
		fputs("\n", out);
		if (l->dur.n)
			hist_log2_print(out, "dur_ns", &l->dur.hist, 0);
	}
	if (json)
		fprintf(out, "{\"launches\":%" PRIu64 ",\"launch_rows\":%" PRIu64 "}\n", launches,
			tl.rows);
	else
		fprintf(out, "%" PRIu64 " launches (%" PRIu64 " launch table rows)\n", launches,
			tl.rows);
}
