/* SPDX-License-Identifier: MIT */
/*
 * tool_launchlat.c - launchlat's summary: the launches the API probes saw,
 * the kernel records CUPTI delivered and how many were joined with their
 * launching call, the log2 histogram of launch call to GPU start, and per
 * kernel its records, those joined, their average and max latency.  Without kernel records it says
 * CUPTI gave none (absent, refused, or no kernel ran) and prints no
 * histogram.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/map.h"
#include "cli.h"
#include "hist.h"
#include "tools.h"
#include "../../tools/launchlat.h"

#define LT_TEXT_ROWS 30 /* kernels listed in text (JSON has all) */

struct lt_row {
	uint32_t hash;
	struct lt_kernel k;
};

static int lt_by_count(const void *a, const void *b)
{
	const struct lt_row *x = a, *y = b;
	if (x->k.records != y->k.records)
		return x->k.records < y->k.records ? 1 : -1;
	return strcmp(x->k.name, y->k.name);
}

int tool_launchlat_event(FILE *out, const struct object *obj, const char *map,
			 const void *data, size_t size, int json)
{
	return 1; /* launchlat has no ring buffer */
}

int tool_launchlat_summary(FILE *out, const struct object *obj, const struct session_status *st,
			   int json)
{
	struct map *stats = tool_map(obj, "stats", 4, 8);
	struct map *hist = tool_map(obj, "hist", 4, 8);
	struct map *kernels = tool_map(obj, "kernels", 4, sizeof(struct lt_kernel));
	struct {
		struct lt_row *r;
		size_t n;
	} rows = {0};
	uint64_t s[LT_STAT_COUNT] = {0};
	struct hist_log2 h = {{0}};

	if (!stats || !hist || !kernels)
		return 1;
	rows.r = tool_map_collect(kernels, sizeof(struct lt_row), offsetof(struct lt_row, k),
				  &rows.n);
	for (uint32_t i = 0; i < LT_STAT_COUNT; i++)
		map_lookup_copy(stats, &i, &s[i]);
	for (uint32_t b = 0; b < LT_BUCKETS && b < HIST_LOG2_BUCKETS; b++)
		map_lookup_copy(hist, &b, &h.count[b]);
	if (rows.r)
		qsort(rows.r, rows.n, sizeof(*rows.r), lt_by_count);
	int cupti = s[LT_KERNELS] != 0;
	if (json) {
		fprintf(out, "{\"tool\":\"launchlat\",\"cupti\":%s,\"api_launches\":%" PRIu64
			",\"kernel_records\":%" PRIu64 ",\"joined\":%" PRIu64 ",\"negative\":%" PRIu64
			",\"kernels_untracked\":%" PRIu64 ",\"latency_ns\":",
			cupti ? "true" : "false", s[LT_API_LAUNCHES], s[LT_KERNELS], s[LT_JOINED],
			s[LT_NEGATIVE], s[LT_NAMES_LOST]);
		hist_log2_print(out, "latency_ns", &h, 1);
		fputs(",\"kernels\":[", out);
		for (size_t i = 0; i < rows.n; i++) {
			fprintf(out, "%s{\"name_hash\":%u,\"records\":%" PRIu64 ",\"count\":%" PRIu64
				",\"ns\":%" PRIu64 ",\"max_ns\":%" PRIu64 ",\"name\":", i ? "," : "",
				rows.r[i].hash, (uint64_t)rows.r[i].k.records,
				(uint64_t)rows.r[i].k.count, (uint64_t)rows.r[i].k.ns,
				(uint64_t)rows.r[i].k.max_ns);
			cli_json_str(out, rows.r[i].k.name);
			fputs("}", out);
		}
		fputs("]}\n", out);
		free(rows.r);
		return 0;
	}
	if (!cupti) {
		fprintf(out, "launchlat: no kernel records from CUPTI (CUPTI absent or refused: "
			"see the agent's 'gpuext:' lines; or no kernel ran); %" PRIu64
			" launch calls seen by the API probes\n", s[LT_API_LAUNCHES]);
		free(rows.r);
		return 0;
	}
	fprintf(out, "%" PRIu64 " launch calls (API probes), %" PRIu64
		" kernels on the GPU (CUPTI), %" PRIu64 " joined with their launch call",
		s[LT_API_LAUNCHES], s[LT_KERNELS], s[LT_JOINED]);
	if (s[LT_NEGATIVE])
		fprintf(out, ", %" PRIu64 " before their call (clock error; counted as 0)",
			s[LT_NEGATIVE]);
	fputs("\n", out);
	hist_log2_print(out, "latency_ns", &h, 0);
	fprintf(out, "%10s %10s %12s %12s  %s\n", "kernels", "joined", "avg_ns", "max_ns",
		"name");
	for (size_t i = 0; i < rows.n && i < LT_TEXT_ROWS; i++)
		fprintf(out, "%10" PRIu64 " %10" PRIu64 " %12" PRIu64 " %12" PRIu64 "  %s\n",
			(uint64_t)rows.r[i].k.records, (uint64_t)rows.r[i].k.count,
			(uint64_t)(rows.r[i].k.count ? rows.r[i].k.ns / rows.r[i].k.count : 0),
			(uint64_t)rows.r[i].k.max_ns, rows.r[i].k.name);
	if (rows.n > LT_TEXT_ROWS)
		fprintf(out, "... %zu more kernels (--json lists all)\n", rows.n - LT_TEXT_ROWS);
	free(rows.r);
	return 0;
}
