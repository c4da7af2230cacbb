/* SPDX-License-Identifier: MIT */
/*
 * tool_kernelsnoop.c - kernelsnoop's output: one line (or JSON object) per
 * kernel as its CUPTI record arrives; at the end the number of kernels,
 * a table per kernel name (launches, total, mean and max GPU time, the
 * busiest first) and a log2 histogram of durations.
 *
 * Times in the lines are relative to the first kernel's start (ms) so that
 * a person can read them; JSON carries the absolute CLOCK_MONOTONIC ns.
 * "launch" is the GPU start minus the launching call's start (when CUPTI's
 * record of the call was joined; "-" otherwise).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hist.h"
#include "tools.h"
#include "../../tools/kernelsnoop.h"

/* Distinct kernel names kept for the summary; more share one "(others)" row. */
#define KS_MAX_NAMES 4096
#define KS_TABLE_ROWS 32

struct ks_name {
	uint32_t hash;
	int used;
	char name[GPUEXT_CUPTI_NAME_LEN];
	uint64_t count, total_ns, max_ns;
};

static struct {
	uint64_t kernels, backwards, first_start;
	struct hist_log2 dur;
	struct ks_name *names; /* KS_MAX_NAMES slots, open addressing by hash */
	size_t name_cnt;
	struct ks_name others;
} ks;

void tool_kernelsnoop_reset(void)
{
	free(ks.names);
	memset(&ks, 0, sizeof(ks));
}

/* The row of rec's name: found or added; the "(others)" row when full. */
static struct ks_name *ks_row(const struct gpuext_cupti_kernel *k)
{
	if (!ks.names && !(ks.names = calloc(KS_MAX_NAMES, sizeof(*ks.names))))
		return &ks.others;
	for (size_t i = 0; i < KS_MAX_NAMES; i++) {
		struct ks_name *n = &ks.names[(k->name_hash + i) % KS_MAX_NAMES];
		if (n->used && n->hash == k->name_hash && !strcmp(n->name, k->name))
			return n;
		if (!n->used) {
			if (ks.name_cnt + 1 >= KS_MAX_NAMES / 2) /* keep probes short */
				return &ks.others;
			n->used = 1;
			n->hash = k->name_hash;
			memcpy(n->name, k->name, sizeof(n->name));
			ks.name_cnt++;
			return n;
		}
	}
	return &ks.others;
}

int tool_kernelsnoop_event(FILE *out, const struct object *obj, const char *map,
			   const void *data, size_t size, int json)
{
	struct gpuext_cupti_kernel k;
	if (size != sizeof(k))
		return 1; /* not ours: the generic hex output */
	memcpy(&k, data, sizeof(k));
	k.name[sizeof(k.name) - 1] = 0;
	uint64_t dur = k.end >= k.start ? k.end - k.start : 0;
	ks.backwards += k.end < k.start;
	if (!ks.kernels++)
		ks.first_start = k.start;
	hist_log2_add(&ks.dur, dur, 1);
	struct ks_name *row = ks_row(&k);
	row->count++;
	row->total_ns += dur;
	if (dur > row->max_ns)
		row->max_ns = dur;
	const char *cut = k.flags & GPUEXT_CUPTI_KERNEL_NAME_TRUNCATED ? "..." : "";
	if (json) {
		fprintf(out, "{\"kernel\":");
		cli_json_str(out, k.name);
		fprintf(out, ",\"truncated\":%s,\"start_ns\":%llu,\"end_ns\":%llu,\"dur_ns\":%" PRIu64
			",\"device\":%u,\"context\":%u,\"stream\":%u,\"correlation_id\":%u,"
			"\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"registers\":%u,"
			"\"static_shared\":%u,\"dynamic_shared\":%u,\"graph_node\":%llu",
			*cut ? "true" : "false", k.start, k.end, dur, k.device, k.context, k.stream,
			k.correlation_id, k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y,
			k.block_z, k.registers, k.static_shared, k.dynamic_shared, k.graph_node);
		if (k.api_start)
			fprintf(out, ",\"api_start_ns\":%llu,\"api_end_ns\":%llu,\"api_tid\":%u",
				k.api_start, k.api_end, k.api_tid);
		fputs("}\n", out);
		return 0;
	}
	if (ks.kernels == 1)
		fprintf(out, "%12s %12s %10s %6s %16s %14s %5s %s\n", "TIME_MS", "DUR_US",
			"LAUNCH_US", "STREAM", "GRID", "BLOCK", "REGS", "KERNEL");
	char grid[40], block[40], launch[24] = "-";
	snprintf(grid, sizeof(grid), "%u,%u,%u", k.grid_x, k.grid_y, k.grid_z);
	snprintf(block, sizeof(block), "%u,%u,%u", k.block_x, k.block_y, k.block_z);
	if (k.api_start)
		snprintf(launch, sizeof(launch), "%.3f", ((double)k.start - (double)k.api_start) / 1e3);
	fprintf(out, "%12.3f %12.3f %10s %6u %16s %14s %5u %s%s\n",
		(double)(k.start - ks.first_start) / 1e6, (double)dur / 1e3, launch, k.stream,
		grid, block, k.registers, k.name, cut);
	return 0;
}

static int ks_by_total(const void *a, const void *b)
{
	const struct ks_name *x = *(struct ks_name *const *)a, *y = *(struct ks_name *const *)b;
	return x->total_ns < y->total_ns ? 1 : x->total_ns > y->total_ns ? -1
	       : strcmp(x->name, y->name);
}

int tool_kernelsnoop_summary(FILE *out, const struct object *obj,
			     const struct session_status *st, int json)
{
	struct ks_name **rows = calloc(ks.name_cnt + 1, sizeof(*rows));
	size_t n = 0;
	if (!rows)
		return 1;
	for (size_t i = 0; ks.names && i < KS_MAX_NAMES; i++)
		if (ks.names[i].used)
			rows[n++] = &ks.names[i];
	qsort(rows, n, sizeof(*rows), ks_by_total);
	if (ks.others.count) {
		snprintf(ks.others.name, sizeof(ks.others.name), "(others)");
		rows[n++] = &ks.others;
	}
	if (json) {
		fprintf(out, "{\"kernels\":%" PRIu64 ",\"names\":%zu,\"clock_backwards\":%" PRIu64
			",\"by_name\":[", ks.kernels, ks.name_cnt, ks.backwards);
		for (size_t i = 0; i < n; i++) {
			fprintf(out, "%s{\"kernel\":", i ? "," : "");
			cli_json_str(out, rows[i]->name);
			fprintf(out, ",\"count\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64
				"}", rows[i]->count, rows[i]->total_ns, rows[i]->max_ns);
		}
		fputs("],\"dur_ns\":", out);
		hist_log2_print(out, "dur_ns", &ks.dur, 1);
		fputs("}\n", out);
		free(rows);
		return 0;
	}
	fprintf(out, "\n%" PRIu64 " kernels, %zu distinct names", ks.kernels, ks.name_cnt);
	if (ks.backwards)
		fprintf(out, " (%" PRIu64 " ending before they start: counted as 0 ns)",
			ks.backwards);
	fputs("\n", out);
	if (n) {
		fprintf(out, "%8s %14s %12s %12s  %s\n", "COUNT", "TOTAL_US", "MEAN_US", "MAX_US",
			"KERNEL");
		for (size_t i = 0; i < n && i < KS_TABLE_ROWS; i++)
			fprintf(out, "%8" PRIu64 " %14.3f %12.3f %12.3f  %s\n", rows[i]->count,
				(double)rows[i]->total_ns / 1e3,
				(double)rows[i]->total_ns / 1e3 / (double)rows[i]->count,
				(double)rows[i]->max_ns / 1e3, rows[i]->name);
		if (n > KS_TABLE_ROWS)
			fprintf(out, "(%zu more names)\n", n - KS_TABLE_ROWS);
		fputs("\n", out);
	}
	hist_log2_print(out, "dur_ns", &ks.dur, 0);
	free(rows);
	return 0;
}
