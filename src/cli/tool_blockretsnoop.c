/* SPDX-License-Identifier: MIT */
/*
 * tool_blockretsnoop.c - blockretsnoop's output: one line (or JSON object)
 * per block record as it arrives; at the end the number of blocks and a
 * log2 histogram of their durations.
 */
#include <inttypes.h>
#include <string.h>

#include "tools.h"
#include "../../tools/blockretsnoop.h"

static struct tool_dur brs;

void tool_blockretsnoop_reset(void)
{
	memset(&brs, 0, sizeof(brs));
}

int tool_blockretsnoop_event(FILE *out, const struct object *obj, const char *map,
			     const void *data, size_t size, int json)
{
	struct brs_event ev;
	if (size != sizeof(ev))
		return 1; /* not ours: the generic hex output */
	memcpy(&ev, data, sizeof(ev));
	uint64_t dur = tool_dur_add(&brs, ev.start_ns, ev.end_ns);
	fprintf(out,
		json ? "{\"block\":[%u,%u,%u],\"sm\":%u,\"threads\":%u,"
		       "\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64 ",\"dur_ns\":%" PRIu64 "}\n"
		     : "block=%u,%u,%u sm=%u threads=%u start_ns=%" PRIu64 " end_ns=%" PRIu64
		       " dur_ns=%" PRIu64 "\n",
		ev.block[0], ev.block[1], ev.block[2], ev.sm, ev.threads, (uint64_t)ev.start_ns,
		(uint64_t)ev.end_ns, dur);
	return 0;
}

int tool_blockretsnoop_summary(FILE *out, const struct object *obj,
			       const struct session_status *st, int json)
{
	tool_dur_print(out, &brs, "blocks", json);
	return 0;
}
