/* SPDX-License-Identifier: MIT */
/*
 * tool_launchlate.c - launchlate's output: pairs each cuLaunchKernel record
 * (host CLOCK_MONOTONIC) with the next first-block record (GPU %globaltimer)
 * in launch order, prints the latency of each launch and, at the end, their
 * log2 histogram.
 *
 * Clock correlation: %globaltimer counts ns of the Unix epoch (the driver
 * sets it from the host's real-time clock), so GPU time + (CLOCK_MONOTONIC -
 * CLOCK_REALTIME), read once on the host, is host monotonic time.  The error
 * is the driver's sync error of %globaltimer against CLOCK_REALTIME, which
 * tests/gpu/tools.sh measures (docs/tools.md).  GPUEXT_GLOBALTIMER_OFFSET_NS
 * overrides the offset; a timer that does not look like epoch time (before
 * 2001) is reported raw and the launch is counted as unconverted.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hist.h"
#include "tools.h"
#include "../../tools/launchlate.h"

/* Launches waiting for their first block: more than this outstanding means
 * records were lost; the oldest are dropped. */
#define LL_PENDING 4096
/* 2001-09-09 in epoch ns: a %globaltimer below this is not epoch time. */
#define LL_EPOCH_MIN 1000000000000000000ull

static struct {
	uint64_t pending[LL_PENDING];
	size_t head, cnt;
	int64_t offset;
	int have_offset;
	uint64_t launches, matched, unconverted, negative, lost;
	struct hist_log2 lat;
} ll;

void tool_launchlate_reset(int64_t offset_ns, int have_offset)
{
	memset(&ll, 0, sizeof(ll));
	ll.offset = offset_ns;
	ll.have_offset = have_offset;
}

static int64_t ll_clock_offset(void)
{
	const char *env = getenv("GPUEXT_GLOBALTIMER_OFFSET_NS");
	if (env)
		return strtoll(env, NULL, 0);
	struct timespec m, r;
	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_REALTIME, &r);
	return ((int64_t)m.tv_sec - r.tv_sec) * 1000000000 + (m.tv_nsec - r.tv_nsec);
}

int tool_launchlate_event(FILE *out, const struct object *obj, const char *map,
			  const void *data, size_t size, int json)
{
	struct ll_event ev;
	if (size != sizeof(ev))
		return 1;
	memcpy(&ev, data, sizeof(ev));
	if (ev.kind == LL_HOST_LAUNCH) {
		ll.launches++;
		if (ll.cnt == LL_PENDING) { /* drop the oldest */
			ll.head = (ll.head + 1) % LL_PENDING;
			ll.cnt--;
			ll.lost++;
		}
		ll.pending[(ll.head + ll.cnt++) % LL_PENDING] = ev.ts;
		return 0;
	}
	if (ev.kind != LL_DEVICE_ENTRY)
		return 1;
	if (!ll.cnt) { /* a kernel launched by another API (cuLaunchCooperativeKernel...) */
		ll.lost++;
		return 0;
	}
	uint64_t host = ll.pending[ll.head];
	ll.head = (ll.head + 1) % LL_PENDING;
	ll.cnt--;
	ll.matched++;
	if (ev.ts < LL_EPOCH_MIN && !ll.have_offset) {
		ll.unconverted++;
		fprintf(out, json ? "{\"launch\":%" PRIu64 ",\"gpu_ts\":%" PRIu64 ",\"sm\":%u}\n"
				  : "launch %" PRIu64 ": gpu timer %" PRIu64 " (not epoch time: "
				    "no latency) sm=%u\n",
			ll.matched, (uint64_t)ev.ts, ev.sm);
		return 0;
	}
	if (!ll.have_offset) {
		ll.offset = ll_clock_offset();
		ll.have_offset = 1;
	}
	int64_t lat = (int64_t)(ev.ts + (uint64_t)ll.offset - host);
	if (lat < 0)
		ll.negative++;
	hist_log2_add(&ll.lat, lat < 0 ? 0 : (uint64_t)lat, 1);
	fprintf(out, json ? "{\"launch\":%" PRIu64 ",\"latency_ns\":%" PRId64 ",\"sm\":%u}\n"
			  : "launch %" PRIu64 ": latency_ns=%" PRId64 " sm=%u\n",
		ll.matched, lat, ev.sm);
	return 0;
}

int tool_launchlate_summary(FILE *out, const struct object *obj,
			    const struct session_status *st, int json)
{
	if (json) {
		fprintf(out, "{\"launches\":%" PRIu64 ",\"matched\":%" PRIu64 ",\"unmatched\":%" PRIu64
			",\"lost\":%" PRIu64 ",\"unconverted\":%" PRIu64 ",\"negative\":%" PRIu64
			",\"clock_offset_ns\":%" PRId64 ",\"latency_ns\":",
			ll.launches, ll.matched, (uint64_t)ll.cnt, ll.lost, ll.unconverted,
			ll.negative, ll.offset);
		hist_log2_print(out, "latency_ns", &ll.lat, 1);
		fputs("}\n", out);
		return 0;
	}
	fprintf(out, "%" PRIu64 " launches, %" PRIu64 " matched with their first block",
		ll.launches, ll.matched);
	if (ll.cnt || ll.lost)
		fprintf(out, ", %zu without a first block, %" PRIu64 " records unpaired", ll.cnt,
			ll.lost);
	if (ll.negative)
		fprintf(out, ", %" PRIu64 " negative (clock error; counted as 0)", ll.negative);
	if (ll.unconverted)
		fprintf(out, ", %" PRIu64 " on a GPU timer that is not epoch time", ll.unconverted);
	fputs("\n", out);
	hist_log2_print(out, "latency_ns", &ll.lat, 0);
	return 0;
}
