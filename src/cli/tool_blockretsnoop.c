/* SPDX-License-Identifier: MIT */
/*
 * tool_blockretsnoop.c - blockretsnoop's output: one line (or JSON object)
 * per block record and per launch table row as they arrive; at the end per
 * launch its kernel, grid, blocks and their durations (tool_launch.c), then
 * the number of blocks and a log2 histogram of their durations.
 */
#include <inttypes.h>
#include <string.h>

#include "tools.h"
#include "../../tools/blockretsnoop.h"

static struct tool_dur brs;

void tool_blockretsnoop_reset(void)
{
	memset(&brs, 0, sizeof(brs));
	tool_launch_reset();
}

int tool_blockretsnoop_event(FILE *out, const struct object *obj, const char *map,
			     const void *data, size_t size, int json)
{
	struct brs_event ev;
	if (!tool_launch_row(out, map, data, size, json))
		return 0;
	if (size != sizeof(ev))
		return 1; /* not ours: the generic hex output */
	memcpy(&ev, data, sizeof(ev));
	tool_dur_add(&brs, ev.start_ns, ev.end_ns);
	uint64_t dur = tool_launch_count(ev.launch, ev.start_ns, ev.end_ns);
	fprintf(out,
		json ? "{\"block\":[%u,%u,%u],\"launch\":%" PRIu64 ",\"sm\":%u,\"threads\":%u,"
		       "\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64 ",\"dur_ns\":%" PRIu64 "}\n"
		     : "block=%u,%u,%u launch=%" PRIu64 " sm=%u threads=%u start_ns=%" PRIu64
		       " end_ns=%" PRIu64 " dur_ns=%" PRIu64 "\n",
		ev.block[0], ev.block[1], ev.block[2], (uint64_t)ev.launch, ev.sm, ev.threads,
		(uint64_t)ev.start_ns, (uint64_t)ev.end_ns, dur);
	return 0;
}

int tool_blockretsnoop_summary(FILE *out, const struct object *obj,
			       const struct session_status *st, int json)
{
	tool_launch_print(out, "blocks", json);
	tool_dur_print(out, &brs, "blocks", json);
	return 0;
}
