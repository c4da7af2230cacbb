/* SPDX-License-Identifier: MIT */
/* hist.c - histogram and bar chart rendering (hist.h). */
#include "hist.h"

#include <inttypes.h>
#include <string.h>

void hist_log2_add(struct hist_log2 *h, uint64_t value, uint64_t n)
{
	unsigned b = 0;
	while (value) { /* bucket = bit length */
		b++;
		value >>= 1;
	}
	h->count[b] += n;
}

void hist_fmt_pow2(char *buf, size_t len, uint64_t v)
{
	static const char suffix[] = "KMGTPE";
	unsigned s = 0;
	while (v >= 1024 && !(v & 1023) && s < sizeof(suffix) - 1) {
		v >>= 10;
		s++;
	}
	if (s)
		snprintf(buf, len, "%" PRIu64 "%c", v, suffix[s - 1]);
	else
		snprintf(buf, len, "%" PRIu64, v);
}

static void hist_bar(FILE *out, uint64_t count, uint64_t max)
{
	unsigned w = max ? (unsigned)((count * (unsigned __int128)HIST_BAR_WIDTH) / max) : 0;
	char bar[HIST_BAR_WIDTH + 1];
	memset(bar, ' ', HIST_BAR_WIDTH);
	memset(bar, '@', w);
	bar[HIST_BAR_WIDTH] = 0;
	fprintf(out, "|%s|\n", bar);
}

static uint64_t hist_max(const uint64_t *c, size_t n)
{
	uint64_t m = 0;
	for (size_t i = 0; i < n; i++)
		m = c[i] > m ? c[i] : m;
	return m;
}

/* A JSON string of a name we made (tool and map names: no escapes needed
 * beyond quotes and backslashes, which are dropped). */
static void hist_json_name(FILE *out, const char *name)
{
	fputc('"', out);
	for (; *name; name++)
		if (*name != '"' && *name != '\\' && (unsigned char)*name >= 0x20)
			fputc(*name, out);
	fputc('"', out);
}

void hist_log2_print(FILE *out, const char *name, const struct hist_log2 *h, int json)
{
	size_t lo = 0, hi = 0;
	int any = 0;
	for (size_t i = 0; i < HIST_LOG2_BUCKETS; i++)
		if (h->count[i]) {
			if (!any)
				lo = i;
			hi = i;
			any = 1;
		}
	uint64_t max = hist_max(h->count, HIST_LOG2_BUCKETS);
	if (json) {
		fputs("{\"hist\":", out);
		hist_json_name(out, name);
		fputs(",\"type\":\"log2\",\"buckets\":[", out);
	} else {
		fprintf(out, "@%s:\n", name);
	}
	for (size_t i = lo; any && i <= hi; i++) {
		/* bucket 64 is [2^63, 2^64): its bound does not fit, print it as max */
		uint64_t min = i ? (uint64_t)1 << (i - 1) : 0;
		uint64_t end = i == 0 ? 1 : i < 64 ? (uint64_t)1 << i : UINT64_MAX;
		if (json) {
			fprintf(out, "%s{\"min\":%" PRIu64 ",\"max\":%" PRIu64 ",\"count\":%" PRIu64 "}",
				i > lo ? "," : "", min, end - 1, h->count[i]);
			continue;
		}
		char a[32], b[32], range[80];
		if (i == 0) {
			snprintf(range, sizeof(range), "[0]");
		} else if (i == 1) {
			snprintf(range, sizeof(range), "[1]");
		} else {
			hist_fmt_pow2(a, sizeof(a), min);
			if (i < 64)
				hist_fmt_pow2(b, sizeof(b), end);
			else
				snprintf(b, sizeof(b), "16E");
			snprintf(range, sizeof(range), "[%s, %s)", a, b);
		}
		fprintf(out, "%-20s %8" PRIu64 " ", range, h->count[i]);
		hist_bar(out, h->count[i], max);
	}
	fputs(json ? "]}" : "\n", out);
}

void hist_linear_print(FILE *out, const char *name, const uint64_t *count, size_t n,
		       uint64_t min, uint64_t step, int json)
{
	uint64_t max = hist_max(count, n);
	if (json) {
		fputs("{\"hist\":", out);
		hist_json_name(out, name);
		fputs(",\"type\":\"linear\",\"buckets\":[", out);
	} else {
		fprintf(out, "@%s:\n", name);
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t a = min + i * step, b = a + step;
		if (json) {
			fprintf(out, "%s{\"min\":%" PRIu64 ",\"max\":%" PRIu64 ",\"count\":%" PRIu64 "}",
				i ? "," : "", a, b - 1, count[i]);
			continue;
		}
		char range[64];
		snprintf(range, sizeof(range), "[%" PRIu64 ", %" PRIu64 ")", a, b);
		fprintf(out, "%-20s %8" PRIu64 " ", range, count[i]);
		hist_bar(out, count[i], max);
	}
	fputs(json ? "]}" : "\n", out);
}

void hist_bars_print(FILE *out, const char *name, const uint64_t *label,
		     const uint64_t *value, size_t n, int hex, int json)
{
	uint64_t max = hist_max(value, n);
	if (json) {
		fputs("{\"hist\":", out);
		hist_json_name(out, name);
		fputs(",\"type\":\"bars\",\"buckets\":[", out);
	}
	for (size_t i = 0; i < n; i++) {
		if (json) {
			fprintf(out, "%s{\"key\":%" PRIu64 ",\"count\":%" PRIu64 "}", i ? "," : "",
				label[i], value[i]);
			continue;
		}
		char key[96];
		snprintf(key, sizeof(key), hex ? "@%s[0x%" PRIx64 "]:" : "@%s[%" PRIu64 "]:", name,
			 label[i]);
		fprintf(out, "%-20s %12" PRIu64 " ", key, value[i]);
		hist_bar(out, value[i], max);
	}
	fputs(json ? "]}" : "\n", out);
}
