/* SPDX-License-Identifier: MIT */
/*
 * tool_warpretsnoop.c - warpretsnoop's output (kernelretsnoop per warp):
 * one line (or JSON object) per warp record and per launch table row as
 * they arrive; at the end per launch its kernel, grid, warps and their
 * durations (tool_launch.c), then the number of warps and a log2 histogram
 * of their durations.
 */
#include <inttypes.h>
#include <string.h>

#include "tools.h"
#include "../../tools/warpretsnoop.h"

static struct tool_dur wrs;

void tool_warpretsnoop_reset(void)
{
	memset(&wrs, 0, sizeof(wrs));
	tool_launch_reset();
}

int tool_warpretsnoop_event(FILE *out, const struct object *obj, const char *map,
			      const void *data, size_t size, int json)
{
	struct wrs_event ev;
	if (!tool_launch_row(out, map, data, size, json))
		return 0;
	if (size != sizeof(ev))
		return 1; /* not ours: the generic hex output */
	memcpy(&ev, data, sizeof(ev));
	tool_dur_add(&wrs, ev.start_ns, ev.end_ns);
	uint64_t dur = tool_launch_count(ev.launch, ev.start_ns, ev.end_ns);
	fprintf(out,
		json ? "{\"block\":[%u,%u,%u],\"warp\":%u,\"launch\":%" PRIu64 ",\"sm\":%u,"
		       "\"lanes\":%u,\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64
		       ",\"dur_ns\":%" PRIu64 "}\n"
		     : "block=%u,%u,%u warp=%u launch=%" PRIu64 " sm=%u lanes=%u start_ns=%" PRIu64
		       " end_ns=%" PRIu64 " dur_ns=%" PRIu64 "\n",
		ev.block[0], ev.block[1], ev.block[2], ev.warp, (uint64_t)ev.launch, ev.sm,
		ev.lanes, (uint64_t)ev.start_ns, (uint64_t)ev.end_ns, dur);
	return 0;
}

int tool_warpretsnoop_summary(FILE *out, const struct object *obj,
				const struct session_status *st, int json)
{
	tool_launch_print(out, "warps", json);
	tool_dur_print(out, &wrs, "warps", json);
	return 0;
}
