/* SPDX-License-Identifier: MIT */
/*
 * tool_smload.c - smload's summary: per SM the blocks, warps and the
 * warp-time, the imbalance as max / mean over the SMs that ran at least one
 * block, and a bar per SM of its warp-time.  Warp-time is the sum over the
 * SM's blocks of warps x (last exit - entry) (smload.h): the warp slots the
 * blocks held.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "tools.h"
#include "../../tools/smload.h"

struct sl_sms {
	uint64_t sm[SL_MAX_SM], blocks[SL_MAX_SM], warps[SL_MAX_SM], threads[SL_MAX_SM],
		busy[SL_MAX_SM];
	size_t n;
};

static int sl_one(void *arg, const void *key, const void *value)
{
	struct sl_sms *s = arg;
	struct sl_load l;
	uint32_t k;
	memcpy(&k, key, 4);
	memcpy(&l, value, sizeof(l));
	if (!l.blocks)
		return 0;
	/* an SM's SPREAD_SLOTS copies are consecutive keys (arrays are walked
	 * in key order): add them up */
	uint32_t sm = k / SPREAD_SLOTS;
	if (!s->n || s->sm[s->n - 1] != sm) {
		if (s->n == SL_MAX_SM)
			return 0;
		s->sm[s->n] = sm;
		s->blocks[s->n] = s->warps[s->n] = s->threads[s->n] = s->busy[s->n] = 0;
		s->n++;
	}
	s->blocks[s->n - 1] += l.blocks;
	s->warps[s->n - 1] += l.warps;
	s->threads[s->n - 1] += l.threads;
	s->busy[s->n - 1] += l.warp_ns;
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
	uint64_t wmax, wsum, bmax, bsum, nblocks = 0;
	double wimb = sl_imbalance(s->warps, s->n, &wmax, &wsum);
	double bimb = sl_imbalance(s->busy, s->n, &bmax, &bsum);
	for (size_t i = 0; i < s->n; i++)
		nblocks += s->blocks[i];
	if (json) {
		fprintf(out, "{\"sms\":%zu,\"blocks\":%" PRIu64 ",\"warps\":%" PRIu64
			",\"busy_ns\":%" PRIu64 ",\"warps_max_over_mean\":%.3f,"
			"\"busy_max_over_mean\":%.3f,\"per_sm\":[",
			s->n, nblocks, wsum, bsum, wimb, bimb);
		for (size_t i = 0; i < s->n; i++)
			fprintf(out, "%s{\"sm\":%" PRIu64 ",\"blocks\":%" PRIu64 ",\"warps\":%" PRIu64
				",\"threads\":%" PRIu64 ",\"busy_ns\":%" PRIu64 "}", i ? "," : "",
				s->sm[i], s->blocks[i], s->warps[i], s->threads[i], s->busy[i]);
		fputs("]}\n", out);
	} else {
		fprintf(out, "SMs used %zu, blocks %" PRIu64 ", warps %" PRIu64 ", warp-time %" PRIu64
			" ns\n", s->n, nblocks, wsum, bsum);
		fprintf(out, "imbalance (max/mean): warp-time %.3f, warps %.3f\n", bimb, wimb);
		fputs("\n", out);
		hist_bars_print(out, "busy_ns_per_sm", s->sm, s->busy, s->n, 0, 0);
	}
	free(s);
	return 0;
}
