/* SPDX-License-Identifier: MIT */
/*
 * tool_dur.c - durations of start/end records (kernelretsnoop's warps,
 * blockretsnoop's blocks): how many, how many with the end before the start
 * (a clock that went backwards: counted as 0 ns), a log2 histogram.
 */
#include <inttypes.h>
#include <string.h>

#include "hist.h"
#include "tools.h"

uint64_t tool_dur_add(struct tool_dur *d, uint64_t start_ns, uint64_t end_ns)
{
	uint64_t dur = end_ns >= start_ns ? end_ns - start_ns : 0;
	d->n++;
	d->backwards += end_ns < start_ns;
	hist_log2_add(&d->hist, dur, 1);
	return dur;
}

void tool_dur_print(FILE *out, const struct tool_dur *d, const char *noun, int json)
{
	if (json) {
		fprintf(out, "{\"%s\":%" PRIu64 ",\"clock_backwards\":%" PRIu64 ",\"dur_ns\":",
			noun, d->n, d->backwards);
		hist_log2_print(out, "dur_ns", &d->hist, 1);
		fputs("}\n", out);
		return;
	}
	fprintf(out, "%" PRIu64 " %s", d->n, noun);
	if (d->backwards)
		fprintf(out, " (%" PRIu64 " with exit before entry: counted as 0 ns)", d->backwards);
	fputs("\n", out);
	hist_log2_print(out, "dur_ns", &d->hist, 0);
}
