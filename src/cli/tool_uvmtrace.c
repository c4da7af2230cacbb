/* SPDX-License-Identifier: MIT */
/*
 * tool_uvmtrace.c - uvmtrace's output.  With --json every unified-memory
 * event is one line as it arrives (text prints none: a managed-memory
 * program has tens of thousands).  At the end: totals per kind (events:
 * records; count: for GPU faults the fault-buffer entries merged into
 * them); a timeline of UT_BINS equal slices of the run (faults and
 * migrated bytes per slice, a bar of the bytes); and per 2 MiB block, from
 * the tool's `blocks` map, faults and migrated bytes in address order
 * (text: the UT_BLOCK_ROWS busiest; JSON: every block), with a heat bar of
 * the bytes moved to the device.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/map.h"
#include "hist.h"
#include "tools.h"
#include "../../tools/uvmtrace.h"

#define UT_BINS 40
#define UT_BLOCK_ROWS 64
#define UT_MAX_EVENTS (4u << 20) /* kept for the timeline; more are counted only */

struct ut_ev {
	uint64_t start, bytes, count;
	uint32_t kind;
};

/* Totals per kind (index: GPUEXT_CUPTI_UVM_*, 0 for the rest). */
struct ut_total {
	uint64_t events, count, bytes;
};

static struct {
	struct ut_ev *ev;
	size_t n, cap;
	uint64_t untimed; /* events past UT_MAX_EVENTS */
	uint64_t first, last;
	struct ut_total total[9];
} ut;

void tool_uvmtrace_reset(void)
{
	free(ut.ev);
	memset(&ut, 0, sizeof(ut));
}

int tool_uvmtrace_event(FILE *out, const struct object *obj, const char *map,
			const void *data, size_t size, int json)
{
	struct gpuext_cupti_uvm u;
	if (size != sizeof(u))
		return 1;
	memcpy(&u, data, sizeof(u));
	struct ut_total *t = &ut.total[u.kind < 9 ? u.kind : 0];
	t->events++;
	t->count += u.count;
	t->bytes += u.bytes;
	if (!ut.n || u.start < ut.first)
		ut.first = u.start;
	if (u.end > ut.last)
		ut.last = u.end;
	if (ut.n == ut.cap && ut.cap < UT_MAX_EVENTS) {
		size_t cap = ut.cap ? ut.cap * 2 : 4096;
		struct ut_ev *ev = realloc(ut.ev, cap * sizeof(*ev));
		if (ev)
			ut.ev = ev, ut.cap = cap;
	}
	if (ut.n < ut.cap)
		ut.ev[ut.n++] = (struct ut_ev){u.start, u.bytes, u.count, u.kind};
	else
		ut.untimed++;
	if (json)
		fprintf(out, "{\"kind\":%u,\"start_ns\":%llu,\"end_ns\":%llu,\"address\":%llu,"
			"\"bytes\":%llu,\"count\":%llu,\"src\":%d,\"dst\":%d,\"flags\":%u}\n",
			u.kind, u.start, u.end, u.address, u.bytes, u.count, (int)u.src, (int)u.dst,
			u.flags);
	return 0;
}

static const char *const ut_kind_names[9] = {
	"other", "htod", "dtoh", "cpu_fault", "gpu_fault", "thrashing", "throttling",
	"remote_map", "dtod",
};

struct ut_row {
	uint64_t base;
	struct ut_block b;
};

struct ut_rows {
	struct ut_row *r;
	size_t n, cap;
};

static int ut_one(void *arg, const void *key, const void *value)
{
	struct ut_rows *rows = arg;
	if (rows->n == rows->cap)
		return 1;
	uint64_t k;
	memcpy(&k, key, 8);
	rows->r[rows->n].base = k << UT_BLOCK_SHIFT;
	memcpy(&rows->r[rows->n++].b, value, sizeof(struct ut_block));
	return 0;
}

static uint64_t ut_activity(const struct ut_row *r)
{
	return r->b.cpu_faults + r->b.gpu_faults + r->b.htod_count + r->b.dtoh_count;
}

static int ut_by_activity(const void *a, const void *b)
{
	uint64_t x = ut_activity(a), y = ut_activity(b);
	return x < y ? 1 : x > y ? -1 : 0;
}

static int ut_by_base(const void *a, const void *b)
{
	const struct ut_row *x = a, *y = b;
	return x->base < y->base ? -1 : x->base > y->base;
}

/* Per-slice faults and bytes: the timeline. */
struct ut_bin {
	uint64_t cpu_faults, gpu_faults, htod_bytes, dtoh_bytes;
};

static void ut_timeline(FILE *out, int json)
{
	struct ut_bin bin[UT_BINS] = {{0}};
	uint64_t span = ut.last > ut.first ? ut.last - ut.first : 1;
	uint64_t step = (span + UT_BINS - 1) / UT_BINS;
	uint64_t max = 0;
	for (size_t i = 0; i < ut.n; i++) {
		size_t b = (size_t)((ut.ev[i].start - ut.first) / step);
		struct ut_bin *x = &bin[b < UT_BINS ? b : UT_BINS - 1];
		switch (ut.ev[i].kind) {
		case GPUEXT_CUPTI_UVM_CPU_FAULT: x->cpu_faults++; break;
		case GPUEXT_CUPTI_UVM_GPU_FAULT: x->gpu_faults++; break;
		case GPUEXT_CUPTI_UVM_HTOD: x->htod_bytes += ut.ev[i].bytes; break;
		case GPUEXT_CUPTI_UVM_DTOH: x->dtoh_bytes += ut.ev[i].bytes; break;
		}
	}
	for (size_t b = 0; b < UT_BINS; b++)
		if (bin[b].htod_bytes + bin[b].dtoh_bytes > max)
			max = bin[b].htod_bytes + bin[b].dtoh_bytes;
	if (json) {
		fprintf(out, "\"timeline\":{\"start_ns\":%" PRIu64 ",\"step_ns\":%" PRIu64
			",\"bins\":[", ut.first, step);
		for (size_t b = 0; b < UT_BINS; b++)
			fprintf(out, "%s{\"cpu_faults\":%" PRIu64 ",\"gpu_faults\":%" PRIu64
				",\"htod_bytes\":%" PRIu64 ",\"dtoh_bytes\":%" PRIu64 "}", b ? "," : "",
				bin[b].cpu_faults, bin[b].gpu_faults, bin[b].htod_bytes,
				bin[b].dtoh_bytes);
		fputs("]}", out);
		return;
	}
	fprintf(out, "timeline (%d slices of %.1f us; bar: bytes migrated)\n", UT_BINS,
		(double)step / 1e3);
	fprintf(out, "%12s %10s %10s %10s %10s\n", "T_US", "CPU_FLT", "GPU_FLT", "HTOD_MIB",
		"DTOH_MIB");
	for (size_t b = 0; b < UT_BINS; b++) {
		uint64_t bytes = bin[b].htod_bytes + bin[b].dtoh_bytes;
		char bar[HIST_BAR_WIDTH + 1];
		size_t w = max ? (size_t)((bytes * HIST_BAR_WIDTH + max - 1) / max) : 0;
		memset(bar, ' ', HIST_BAR_WIDTH);
		memset(bar, '@', w);
		bar[HIST_BAR_WIDTH] = 0;
		fprintf(out, "%12.1f %10" PRIu64 " %10" PRIu64 " %10.2f %10.2f |%s|\n",
			(double)(b * step) / 1e3, bin[b].cpu_faults, bin[b].gpu_faults,
			(double)bin[b].htod_bytes / 1048576.0, (double)bin[b].dtoh_bytes / 1048576.0,
			bar);
	}
	fputs("\n", out);
}

int tool_uvmtrace_summary(FILE *out, const struct object *obj, const struct session_status *st,
			  int json)
{
	struct map *blocks = tool_map(obj, "blocks", 8, sizeof(struct ut_block));
	struct ut_rows rows = {calloc(UT_MAX_BLOCKS, sizeof(struct ut_row)), 0, UT_MAX_BLOCKS};
	uint64_t *base = calloc(UT_MAX_BLOCKS, sizeof(*base));
	uint64_t *heat = calloc(UT_MAX_BLOCKS, sizeof(*heat));
	if (!blocks || !rows.r || !base || !heat) {
		free(rows.r);
		free(base);
		free(heat);
		return 1;
	}
	tool_map_each(blocks, ut_one, &rows);
	size_t shown = rows.n;
	/* text shows the busiest UT_BLOCK_ROWS; JSON every block */
	if (!json && shown > UT_BLOCK_ROWS) {
		qsort(rows.r, rows.n, sizeof(rows.r[0]), ut_by_activity);
		shown = UT_BLOCK_ROWS;
	}
	qsort(rows.r, shown, sizeof(rows.r[0]), ut_by_base);
	for (size_t i = 0; i < shown; i++) {
		base[i] = rows.r[i].base;
		heat[i] = rows.r[i].b.htod_bytes;
	}
	if (json) {
		fputs("{\"totals\":{", out);
		for (int k = 0; k < 9; k++)
			fprintf(out, "%s\"%s\":{\"events\":%" PRIu64 ",\"count\":%" PRIu64
				",\"bytes\":%" PRIu64 "}", k ? "," : "", ut_kind_names[k],
				ut.total[k].events, ut.total[k].count, ut.total[k].bytes);
		fprintf(out, "},\"untimed\":%" PRIu64 ",\"blocks\":%zu,\"by_block\":[", ut.untimed,
			rows.n);
		for (size_t i = 0; i < shown; i++) {
			const struct ut_block *b = &rows.r[i].b;
			fprintf(out, "%s{\"block\":%" PRIu64 ",\"cpu_faults\":%llu,\"gpu_faults\":%llu,"
				"\"htod_bytes\":%llu,\"dtoh_bytes\":%llu,\"htod\":%llu,\"dtoh\":%llu,"
				"\"first_ns\":%llu,\"last_ns\":%llu}", i ? "," : "", rows.r[i].base,
				b->cpu_faults, b->gpu_faults, b->htod_bytes, b->dtoh_bytes,
				b->htod_count, b->dtoh_count, b->first_ns, b->last_ns);
		}
		fputs("],", out);
		ut_timeline(out, 1);
		fputs(",\"heat\":", out);
		hist_bars_print(out, "htod_bytes_per_2MiB", base, heat, shown, 1, 1);
		fputs("}\n", out);
		free(rows.r);
		free(base);
		free(heat);
		return 0;
	}
	fprintf(out, "%-11s %10s %12s %14s\n", "KIND", "EVENTS", "COUNT", "BYTES");
	for (int k = 1; k < 9; k++)
		if (ut.total[k].events)
			fprintf(out, "%-11s %10" PRIu64 " %12" PRIu64 " %14" PRIu64 "\n",
				ut_kind_names[k], ut.total[k].events, ut.total[k].count,
				ut.total[k].bytes);
	fputs("\n", out);
	if (ut.n)
		ut_timeline(out, 0);
	fprintf(out, "%zu blocks of 2 MiB%s\n", rows.n,
		rows.n > shown ? " (the busiest shown)" : "");
	if (shown) {
		fprintf(out, "%18s %10s %10s %10s %10s %12s %12s\n", "BLOCK", "CPU_FLT", "GPU_FLT",
			"HTOD_MIB", "DTOH_MIB", "FIRST_US", "LAST_US");
		for (size_t i = 0; i < shown; i++) {
			const struct ut_block *b = &rows.r[i].b;
			fprintf(out, "%#18" PRIx64 " %10llu %10llu %10.2f %10.2f %12.1f %12.1f\n",
				rows.r[i].base, b->cpu_faults, b->gpu_faults,
				(double)b->htod_bytes / 1048576.0, (double)b->dtoh_bytes / 1048576.0,
				(double)(int64_t)(b->first_ns - ut.first) / 1e3,
				(double)(int64_t)(b->last_ns - ut.first) / 1e3);
		}
		fputs("\n", out);
		hist_bars_print(out, "htod_bytes_per_2MiB", base, heat, shown, 1, 0);
	}
	free(rows.r);
	free(base);
	free(heat);
	return 0;
}
