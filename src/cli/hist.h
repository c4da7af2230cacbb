/* SPDX-License-Identifier: MIT */
/*
 * hist.h - bpftrace-style histograms and bar charts for the tools' output.
 *
 * Text: one line per bucket, "[lo, hi)   count |@@@@   |", bars scaled to
 * the largest count (HIST_BAR_WIDTH '@' for it), then a blank line.  JSON:
 * one object {"hist":NAME,"type":"log2"|"linear"|"bars","buckets":[...]},
 * no newline, so that a caller can nest it in its own object.
 */
#ifndef GPUEXT_CLI_HIST_H
#define GPUEXT_CLI_HIST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HIST_BAR_WIDTH 52

/* Bucket 0 holds 0, bucket i >= 1 holds [2^(i-1), 2^i). */
#define HIST_LOG2_BUCKETS 65

struct hist_log2 {
	uint64_t count[HIST_LOG2_BUCKETS];
};

void hist_log2_add(struct hist_log2 *h, uint64_t value, uint64_t n);
/* Prints the buckets from the lowest to the highest non-empty one. */
void hist_log2_print(FILE *out, const char *name, const struct hist_log2 *h, int json);

/* count[i] holds [min + i*step, min + (i+1)*step). */
void hist_linear_print(FILE *out, const char *name, const uint64_t *count, size_t n,
		       uint64_t min, uint64_t step, int json);

/* One bar per labelled value ("@name[label]: value |@@@|"), labels in hex
 * with hex set. */
void hist_bars_print(FILE *out, const char *name, const uint64_t *label,
		     const uint64_t *value, size_t n, int hex, int json);

/* "1K", "4M": the power-of-two suffix form bpftrace uses for bucket bounds. */
void hist_fmt_pow2(char *buf, size_t len, uint64_t v);

#endif
