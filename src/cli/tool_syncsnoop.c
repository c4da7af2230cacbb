/* SPDX-License-Identifier: MIT */
/*
 * tool_syncsnoop.c - syncsnoop's summary: per blocking call, count, total,
 * average and max ns blocked and a log2 histogram of the ns; then the top
 * callers (call site and call) by total time blocked.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/map.h"
#include "hist.h"
#include "tools.h"
#include "../../tools/syncsnoop.h"

#define SS_TOP 20 /* callers listed in text (JSON has all) */

struct ss_row {
	struct ss_caller_key k;
	struct ss_caller c;
};

static int ss_by_ns(const void *a, const void *b)
{
	const struct ss_row *x = a, *y = b;
	if (x->c.ns != y->c.ns)
		return x->c.ns < y->c.ns ? 1 : -1;
	if (x->k.site != y->k.site)
		return x->k.site < y->k.site ? -1 : 1;
	return (x->k.call > y->k.call) - (x->k.call < y->k.call);
}

/* Call c's histogram of ns blocked, and its name in the output. */
static void ss_read_hist(struct map *hist, uint32_t c, struct hist_log2 *h, char *name,
			 size_t len)
{
	memset(h, 0, sizeof(*h));
	for (uint32_t b = 0; b < SS_BUCKETS; b++) {
		uint32_t key = c * SS_BUCKETS + b;
		uint64_t v = 0;
		if (!map_lookup_copy(hist, &key, &v))
			h->count[b] = v;
	}
	snprintf(name, len, "ns[%s]", tool_call_name(c));
}

int tool_syncsnoop_event(FILE *out, const struct object *obj, const char *map,
			 const void *data, size_t size, int json)
{
	return 1; /* only `trace` records, which --trace takes */
}

int tool_syncsnoop_summary(FILE *out, const struct object *obj, const struct session_status *st,
			   int json)
{
	struct map *hist = tool_map(obj, "hist", 4, 8);
	struct map *totals = tool_map(obj, "totals", 4, sizeof(struct ss_total));
	struct map *callers = tool_map(obj, "callers", sizeof(struct ss_caller_key),
				       sizeof(struct ss_caller));
	struct {
		struct ss_row *r;
		size_t n;
	} rows = {0};
	int first = 1;

	if (!hist || !totals || !callers)
		return 1;
	rows.r = tool_map_collect(callers, sizeof(struct ss_row), offsetof(struct ss_row, c),
				  &rows.n);
	if (rows.r)
		qsort(rows.r, rows.n, sizeof(*rows.r), ss_by_ns);
	if (json)
		fputs("{\"tool\":\"syncsnoop\",\"calls\":[", out);
	else
		fprintf(out, "%-24s %10s %16s %12s %14s\n", "call", "count", "total_ns", "avg_ns",
			"max_ns");
	for (uint32_t c = 1; c < CALL_COUNT; c++) {
		struct ss_total t = {0};
		if (map_lookup_copy(totals, &c, &t) || !t.count)
			continue;
		struct hist_log2 h;
		char name[96];
		ss_read_hist(hist, c, &h, name, sizeof(name));
		if (json) {
			fprintf(out, "%s{\"call\":\"%s\",\"count\":%" PRIu64 ",\"ns\":%" PRIu64
				",\"max_ns\":%" PRIu64 ",\"failed\":%" PRIu64 ",\"hist\":",
				first ? "" : ",", tool_call_name(c), (uint64_t)t.count, (uint64_t)t.ns,
				(uint64_t)t.max_ns, (uint64_t)t.failed);
			hist_log2_print(out, name, &h, 1);
			fputs("}", out);
		} else {
			fprintf(out, "%-24s %10" PRIu64 " %16" PRIu64 " %12" PRIu64 " %14" PRIu64 "%s\n",
				tool_call_name(c), (uint64_t)t.count, (uint64_t)t.ns,
				(uint64_t)(t.ns / t.count), (uint64_t)t.max_ns,
				t.failed ? " (some failed)" : "");
		}
		first = 0;
	}
	if (json) {
		fputs("],\"callers\":[", out);
		for (size_t i = 0; i < rows.n; i++)
			fprintf(out, "%s{\"site\":%" PRIu64 ",\"call\":\"%s\",\"count\":%" PRIu64
				",\"ns\":%" PRIu64 "}", i ? "," : "", (uint64_t)rows.r[i].k.site,
				tool_call_name(rows.r[i].k.call), (uint64_t)rows.r[i].c.count,
				(uint64_t)rows.r[i].c.ns);
		fputs("]}\n", out);
		free(rows.r);
		return 0;
	}
	if (first)
		fputs("(no blocking calls)\n", out);
	fputs("\n", out);
	for (uint32_t c = 1; c < CALL_COUNT; c++) {
		struct ss_total t = {0};
		if (map_lookup_copy(totals, &c, &t) || !t.count)
			continue;
		struct hist_log2 h;
		char name[96];
		ss_read_hist(hist, c, &h, name, sizeof(name));
		hist_log2_print(out, name, &h, 0);
	}
	fprintf(out, "top callers by time blocked (%zu call sites):\n", rows.n);
	for (size_t i = 0; i < rows.n && i < SS_TOP; i++)
		fprintf(out, "  0x%-16" PRIx64 " %-24s %10" PRIu64 " calls %16" PRIu64 " ns\n",
			(uint64_t)rows.r[i].k.site, tool_call_name(rows.r[i].k.call),
			(uint64_t)rows.r[i].c.count, (uint64_t)rows.r[i].c.ns);
	free(rows.r);
	return 0;
}
