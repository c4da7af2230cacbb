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
	if (l.warps && s->n < SL_MAX_SM) {
		/* modulo 2^64 (smload.h); threads still running make it wrong:
		 * counted, and their SM's time left at 0 */
		uint64_t thread_ns = l.exit_lane_ns - l.entry_lane_ns;
		int done = l.exit_threads == l.threads;
		s->running += done ? 0 : l.threads - l.exit_threads;
		s->sm[s->n] = k;
		s->warps[s->n] = l.warps;
		s->threads[s->n] = l.threads;
		s->busy[s->n++] = done ? thread_ns / 32 : 0;
	}
	return 0;
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
