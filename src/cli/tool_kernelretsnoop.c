/* SPDX-License-Identifier: MIT */
/*
 * tool_kernelretsnoop.c - kernelretsnoop's output, at the end (the device
 * aggregates, tools/kernelretsnoop.bpf.c): per launch its kernel, grid,
 * blocks and the log2 histogram of their durations (the launch table's
 * rows, printed as they come, name them); one line (or JSON object) per
 * block of the last launch that ran each block index, with its end relative
 * to the earliest start among them; the number of blocks of all launches
 * and the log2 histogram of their durations; a log2 histogram of the
 * recorded blocks' ends relative to that earliest start.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

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

static int krs_add_hist(void *arg, const void *key, const void *value)
{
	struct hist_log2 *h = arg;
	struct krs_hist k;
	memcpy(&k, value, sizeof(k));
	for (int i = 0; i < KRS_BUCKETS; i++)
		h->count[i] += k.count[i];
	return 0;
}

/* The durations of one launch slot (key / SPREAD_SLOTS) into h[slot]. */
static int krs_add_launch(void *arg, const void *key, const void *value)
{
	struct hist_log2 *h = arg;
	uint32_t k;
	memcpy(&k, key, sizeof(k));
	return k / SPREAD_SLOTS < KRS_MAX_LAUNCHES ? krs_add_hist(&h[k / SPREAD_SLOTS], key, value)
						   : 0;
}

int tool_kernelretsnoop_event(FILE *out, const struct object *obj, const char *map,
			      const void *data, size_t size, int json)
{
	return tool_launch_row(out, map, data, size, json); /* the only ring buffer */
}

/* Per launch (tool_launch.c), from the device's histograms of launch ids
 * 1..KRS_MAX_LAUNCHES-1; then how many blocks slot 0 counted (later
 * launches, kernels without an id). */
static int krs_print_launches(FILE *out, struct map *durs, int json)
{
	struct hist_log2 *per = calloc(KRS_MAX_LAUNCHES, sizeof(*per));
	if (!per)
		return 1;
	tool_map_each(durs, krs_add_launch, per);
	for (uint64_t id = 1; id < KRS_MAX_LAUNCHES; id++) {
		uint64_t n = 0;
		for (int i = 0; i < KRS_BUCKETS; i++)
			n += per[id].count[i];
		if (n)
			tool_launch_hist(id, per[id].count, KRS_BUCKETS);
	}
	tool_launch_print(out, "blocks", json);
	uint64_t rest = 0;
	for (int i = 0; i < KRS_BUCKETS; i++)
		rest += per[0].count[i];
	fprintf(out, json ? "{\"blocks_other_launches\":%" PRIu64 "}\n"
			  : "%" PRIu64 " blocks of launches without a histogram of their own (ids from %d, "
			    "or no id)\n", rest, KRS_MAX_LAUNCHES);
	free(per);
	return 0;
}

int tool_kernelretsnoop_summary(FILE *out, const struct object *obj,
				const struct session_status *st, int json)
{
	struct map *blocks = tool_map(obj, "blocks", 4, sizeof(struct krs_block));
	struct map *durs = tool_map(obj, "durations", 4, sizeof(struct krs_hist));
	struct krs_recs s = {calloc(KRS_MAX_BLOCKS, sizeof(struct krs_block)), 0, 0};
	struct hist_log2 all = {{0}}, ends = {{0}};
	struct tool_dur rec = {0, 0, {{0}}};
	if (!blocks || !durs || !s.r) {
		free(s.r);
		return 1;
	}
	tool_map_each(blocks, krs_collect, &s);
	tool_map_each(durs, krs_add_hist, &all);
	if (krs_print_launches(out, durs, json)) {
		free(s.r);
		return 1;
	}
	for (size_t i = 0; i < s.n; i++) {
		const struct krs_block *b = &s.r[i];
		uint64_t dur = tool_dur_add(&rec, b->start_ns, b->end_ns);
		uint64_t end_rel = b->end_ns >= s.first_ns ? b->end_ns - s.first_ns : 0;
		hist_log2_add(&ends, end_rel, 1);
		fprintf(out,
			json ? "{\"block\":[%u,%u,%u],\"sm\":%u,\"threads\":%u,\"warps\":%u,"
			       "\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64 ",\"dur_ns\":%" PRIu64
			       ",\"end_rel_ns\":%" PRIu64 "}\n"
			     : "block=%u,%u,%u sm=%u threads=%u warps=%u start_ns=%" PRIu64
			       " end_ns=%" PRIu64 " dur_ns=%" PRIu64 " end_rel_ns=%" PRIu64 "\n",
			b->block[0], b->block[1], b->block[2], b->sm, b->threads, b->warps,
			(uint64_t)b->start_ns, (uint64_t)b->end_ns, dur, end_rel);
	}
	uint64_t total = 0;
	for (int i = 0; i < HIST_LOG2_BUCKETS; i++)
		total += all.count[i];
	if (json) {
		fprintf(out, "{\"blocks\":%" PRIu64 ",\"recorded\":%" PRIu64
			",\"clock_backwards\":%" PRIu64 ",\"dur_ns\":", total, rec.n, rec.backwards);
		hist_log2_print(out, "dur_ns", &all, 1);
		fputs(",\"end_rel_ns\":", out);
		hist_log2_print(out, "end_rel_ns", &ends, 1);
		fputs("}\n", out);
	} else {
		fprintf(out, "%" PRIu64 " blocks in all launches; %" PRIu64 " recorded above (the last "
			"run of each block index)", total, rec.n);
		if (rec.backwards)
			fprintf(out, ", %" PRIu64 " with exit before entry (counted as 0 ns)",
				rec.backwards);
		fputs("\n", out);
		hist_log2_print(out, "dur_ns", &all, 0);
		hist_log2_print(out, "end_rel_ns", &ends, 0);
	}
	free(s.r);
	return 0;
}
