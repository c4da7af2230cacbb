/* SPDX-License-Identifier: MIT */
/*
 * tool_kernelretsnoop.c - kernelretsnoop's output, at the end, from the
 * records the device stored (tools/kernelretsnoop.bpf.c): per launch its
 * kernel, grid, the blocks recorded for it and the log2 histogram of their
 * durations (the launch table's rows, printed as they come, name them);
 * one line (or JSON object) per block of the last launch that ran each
 * block index, with its end relative to the earliest start among them;
 * the log2 histograms of their durations and of their ends relative to
 * that earliest start.
 *
 * The device stores only the block's linear index: its (x, y, z), threads
 * and warps come from its launch's row (grid and block dims).  A record
 * whose launch has no row (the launch table's ring buffer was full, or
 * launch id 0) prints `block=? index=N` (JSON "block":null,"index":N) and
 * no threads or warps, which only the row could give.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/gpuext_launch.h"
#include "tools.h"
#include "../../tools/kernelretsnoop.h"

struct krs_recs {
	struct krs_block *r;
	size_t n;
	uint64_t first_ns; /* earliest start among them */
};

static int krs_collect(void *arg, const void *key, const void *value)
{
	struct krs_recs *s = arg;
	struct krs_block b;
	memcpy(&b, value, sizeof(b));
	if (!b.end_ns)
		return 0; /* array: every index is a key */
	s->r[s->n++] = b;
	if (s->n == 1 || b.start_ns < s->first_ns)
		s->first_ns = b.start_ns;
	return 0;
}

int tool_kernelretsnoop_event(FILE *out, const struct object *obj, const char *map,
			      const void *data, size_t size, int json)
{
	return tool_launch_row(out, map, data, size, json); /* the only ring buffer */
}

/* One record's line (or JSON object), joined with its launch's row. */
static void krs_print_block(FILE *out, const struct krs_block *b, uint64_t dur, uint64_t end_rel,
			    int json)
{
	uint32_t index = KRS_BLOCK_INDEX(b->block_sm), sm = KRS_BLOCK_SM(b->block_sm);
	const struct gpuext_launch *row = tool_launch_find(b->launch);
	uint64_t gx = row ? row->grid[0] : 0, gy = row ? row->grid[1] : 0;
	if (gx && gy) { /* (a row of no blocks, which the driver refuses, places none) */
		uint64_t threads = (uint64_t)row->block[0] * row->block[1] * row->block[2];
		fprintf(out,
			json ? "{\"block\":[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "],\"launch\":%" PRIu64
			       ",\"sm\":%u,\"threads\":%" PRIu64 ",\"warps\":%" PRIu64 ","
			     : "block=%" PRIu64 ",%" PRIu64 ",%" PRIu64 " launch=%" PRIu64
			       " sm=%u threads=%" PRIu64 " warps=%" PRIu64 " ",
			index % gx, index / gx % gy, index / (gx * gy), (uint64_t)b->launch, sm,
			threads, (threads + 31) / 32);
	} else {
		fprintf(out,
			json ? "{\"block\":null,\"index\":%u,\"launch\":%" PRIu64 ",\"sm\":%u,"
			     : "block=? index=%u launch=%" PRIu64 " sm=%u ",
			index, (uint64_t)b->launch, sm);
	}
	fprintf(out,
		json ? "\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64 ",\"dur_ns\":%" PRIu64
		       ",\"end_rel_ns\":%" PRIu64 "}\n"
		     : "start_ns=%" PRIu64 " end_ns=%" PRIu64 " dur_ns=%" PRIu64 " end_rel_ns=%" PRIu64
		       "\n",
		(uint64_t)b->start_ns, (uint64_t)b->end_ns, dur, end_rel);
}

int tool_kernelretsnoop_summary(FILE *out, const struct object *obj,
				const struct session_status *st, int json)
{
	struct map *blocks = tool_map(obj, "blocks", 4, sizeof(struct krs_block));
	struct krs_recs s = {calloc(KRS_MAX_BLOCKS, sizeof(struct krs_block)), 0, 0};
	struct hist_log2 ends = {{0}};
	struct tool_dur rec = {0, 0, {{0}}};
	if (!blocks || !s.r) {
		free(s.r);
		return 1;
	}
	tool_map_each(blocks, krs_collect, &s);
	for (size_t i = 0; i < s.n; i++)
		tool_launch_count(s.r[i].launch, s.r[i].start_ns, s.r[i].end_ns);
	tool_launch_print(out, "blocks", json);
	for (size_t i = 0; i < s.n; i++) {
		const struct krs_block *b = &s.r[i];
		uint64_t dur = tool_dur_add(&rec, b->start_ns, b->end_ns);
		uint64_t end_rel = b->end_ns >= s.first_ns ? b->end_ns - s.first_ns : 0;
		hist_log2_add(&ends, end_rel, 1);
		krs_print_block(out, b, dur, end_rel, json);
	}
	if (json) {
		fprintf(out, "{\"recorded\":%" PRIu64 ",\"clock_backwards\":%" PRIu64 ",\"dur_ns\":",
			rec.n, rec.backwards);
		hist_log2_print(out, "dur_ns", &rec.hist, 1);
		fputs(",\"end_rel_ns\":", out);
		hist_log2_print(out, "end_rel_ns", &ends, 1);
		fputs("}\n", out);
	} else {
		fprintf(out, "%" PRIu64 " blocks recorded above (the last run of each block index)",
			rec.n);
		if (rec.backwards)
			fprintf(out, ", %" PRIu64 " with exit before entry (counted as 0 ns)",
				rec.backwards);
		fputs("\n", out);
		hist_log2_print(out, "dur_ns", &rec.hist, 0);
		hist_log2_print(out, "end_rel_ns", &ends, 0);
	}
	free(s.r);
	return 0;
}
