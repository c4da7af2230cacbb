/* SPDX-License-Identifier: MIT */
/*
 * tool_smload.c - smload's summary: per SM the warps and the warp-time, the
 * imbalance as max / mean over the SMs that ran at least one warp, and a bar
 * per SM of its warp-time.  Warp-time is the SM's thread-time (smload.h) / 32:
 * for full warps, the sum of the warps' run times.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "tools.h"
#include "../../tools/smload.h"

struct sl_sms {
	uint64_t sm[SL_MAX_SM], warps[SL_MAX_SM], threads[SL_MAX_SM], busy[SL_MAX_SM];
	struct sl_load sum[SL_MAX_SM]; /* the SM's copies added up */
	size_t n;
	uint64_t running; /* threads that entered and have not left (yet) */
};

static int sl_one(void *arg, const void *key, const void *value)
{
	struct sl_sms *s = arg;
	struct sl_load l;
	uint32_t k;
	memcpy(&k, key, 4);
	memcpy(&l, value, sizeof(l));
	if (!l.warps)
		return 0;
	/* an SM's SPREAD_SLOTS copies are consecutive keys (arrays are walked
	 * in key order); the time sums are modulo 2^64, so they add up too */
	uint32_t sm = k / SPREAD_SLOTS;
	if (!s->n || s->sm[s->n - 1] != sm) {
		if (s->n == SL_MAX_SM)
			return 0;
		s->sm[s->n] = sm;
		memset(&s->sum[s->n], 0, sizeof(s->sum[0]));
		s->n++;
	}
	struct sl_load *t = &s->sum[s->n - 1];
	t->warps += l.warps;
	t->threads += l.threads;
	t->exit_threads += l.exit_threads;
	t->entry_lane_ns += l.entry_lane_ns;
	t->exit_lane_ns += l.exit_lane_ns;
	return 0;
}

/* Per SM: warps, threads and warp-time.  Threads still running make the
 * time sums meaningless: counted, and their SM's time left at 0. */
static void sl_finish(struct sl_sms *s)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct sl_load *t = &s->sum[i];
		int done = t->exit_threads == t->threads;
		s->running += done ? 0 : t->threads - t->exit_threads;
		s->warps[i] = t->warps;
		s->threads[i] = t->threads;
		s->busy[i] = done ? (t->exit_lane_ns - t->entry_lane_ns) / 32 : 0;
	}
}

/* max / mean of v[0..n): 0 when empty or all zero. */
static double sl_imbalance(const uint64_t *v, size_t n, uint64_t *max, uint64_t *sum)
{
	*max = *sum = 0;
	for (size_t i = 0; i < n; i++) {
		*sum += v[i];
		*max = v[i] > *max ? v[i] : *max;
	}
	return *sum ? (double)*max * (double)n / (double)*sum : 0;
}

int tool_smload_event(FILE *out, const struct object *obj, const char *map, const void *data,
		      size_t size, int json)
{
	return 1; /* smload has no ring buffer */
}

int tool_smload_summary(FILE *out, const struct object *obj, const struct session_status *st,
			int json)
{
	struct map *per_sm = tool_map(obj, "per_sm", 4, sizeof(struct sl_load));
	struct sl_sms *s = calloc(1, sizeof(*s));
	if (!per_sm || !s) {
		free(s);
		return 1;
	}
	tool_map_each(per_sm, sl_one, s);
	sl_finish(s);
	uint64_t wmax, wsum, bmax, bsum;
	double wimb = sl_imbalance(s->warps, s->n, &wmax, &wsum);
	double bimb = sl_imbalance(s->busy, s->n, &bmax, &bsum);
	if (json) {
		fprintf(out, "{\"sms\":%zu,\"warps\":%" PRIu64 ",\"busy_ns\":%" PRIu64
			",\"running_threads\":%" PRIu64 ",\"warps_max_over_mean\":%.3f,"
			"\"busy_max_over_mean\":%.3f,\"per_sm\":[",
			s->n, wsum, bsum, s->running, wimb, bimb);
		for (size_t i = 0; i < s->n; i++)
			fprintf(out, "%s{\"sm\":%" PRIu64 ",\"warps\":%" PRIu64 ",\"threads\":%" PRIu64
				",\"busy_ns\":%" PRIu64 "}", i ? "," : "", s->sm[i], s->warps[i],
				s->threads[i], s->busy[i]);
		fputs("]}\n", out);
	} else {
		fprintf(out, "SMs used %zu, warps %" PRIu64 ", warp-time %" PRIu64 " ns\n", s->n,
			wsum, bsum);
		fprintf(out, "imbalance (max/mean): warp-time %.3f, warps %.3f\n", bimb, wimb);
		if (s->running)
			fprintf(out, "%" PRIu64 " threads had not exited: their SMs' time is 0\n",
				s->running);
		fputs("\n", out);
		hist_bars_print(out, "busy_ns_per_sm", s->sm, s->busy, s->n, 0, 0);
	}
	free(s);
	return 0;
}
