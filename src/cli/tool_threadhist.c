/* SPDX-License-Identifier: MIT */
/*
 * tool_threadhist.c - threadhist's summary: threads, warps and blocks in
 * total, a bar per SM (threads), and a log2 histogram of threads per block
 * (every block of every launch), all from the device's count of blocks per
 * SM and exact size (tools/threadhist.h).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/map.h"
#include "hist.h"
#include "tools.h"
#include "../../tools/threadhist.h"

struct th_sms {
	uint64_t sm[TH_MAX_SM], threads[TH_MAX_SM], warps[TH_MAX_SM];
	size_t n;
	struct hist_log2 sizes; /* blocks by threads, all SMs */
	uint64_t blocks;
};

static int th_sm_one(void *arg, const void *key, const void *value)
{
	struct th_sms *s = arg;
	uint64_t blocks;
	uint32_t k;
	memcpy(&k, key, 4);
	memcpy(&blocks, value, sizeof(blocks));
	if (!blocks)
		return 0; /* array: every (SM, size) is a key */
	/* an SM's sizes are consecutive keys (arrays are walked in key
	 * order): add them up */
	uint32_t sm = k / TH_SIZES, size = k % TH_SIZES + 1;
	if (!s->n || s->sm[s->n - 1] != sm) {
		if (s->n == TH_MAX_SM)
			return 0;
		s->sm[s->n] = sm;
		s->threads[s->n] = s->warps[s->n] = 0;
		s->n++;
	}
	s->threads[s->n - 1] += blocks * size;
	s->warps[s->n - 1] += blocks * ((size + 31) / 32);
	hist_log2_add(&s->sizes, size, blocks);
	s->blocks += blocks;
	return 0;
}

int tool_threadhist_event(FILE *out, const struct object *obj, const char *map,
			  const void *data, size_t size, int json)
{
	return 1; /* threadhist has no ring buffer */
}

int tool_threadhist_summary(FILE *out, const struct object *obj,
			    const struct session_status *st, int json)
{
	struct map *per_sm = tool_map(obj, "sm_blocks", 4, sizeof(uint64_t));
	struct th_sms *sms = calloc(1, sizeof(*sms));
	uint64_t threads = 0, warps = 0;
	if (!per_sm || !sms) {
		free(sms);
		return 1;
	}
	tool_map_each(per_sm, th_sm_one, sms);
	for (size_t i = 0; i < sms->n; i++) {
		threads += sms->threads[i];
		warps += sms->warps[i];
	}
	if (json) {
		fprintf(out, "{\"threads\":%" PRIu64 ",\"warps\":%" PRIu64 ",\"blocks\":%" PRIu64
			",\"per_sm\":[", threads, warps, sms->blocks);
		for (size_t i = 0; i < sms->n; i++)
			fprintf(out, "%s{\"sm\":%" PRIu64 ",\"threads\":%" PRIu64 ",\"warps\":%" PRIu64 "}",
				i ? "," : "", sms->sm[i], sms->threads[i], sms->warps[i]);
		fputs("],\"threads_per_block\":", out);
		hist_log2_print(out, "threads_per_block", &sms->sizes, 1);
		fputs("}\n", out);
	} else {
		fprintf(out, "threads %" PRIu64 ", warps %" PRIu64 ", blocks %" PRIu64
			", SMs used %zu\n\n", threads, warps, sms->blocks, sms->n);
		hist_bars_print(out, "threads_per_sm", sms->sm, sms->threads, sms->n, 0, 0);
		hist_log2_print(out, "threads_per_block", &sms->sizes, 0);
	}
	free(sms);
	return 0;
}
