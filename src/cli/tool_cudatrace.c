/* SPDX-License-Identifier: MIT */
/*
 * tool_cudatrace.c - cudatrace's summary: allocations and frees per memory
 * kind, bytes copied per direction, memsets, launches per kernel, and the
 * leak report: what was allocated and never freed when the application
 * exited (each with its size, kind, thread and call site), with a log2
 * histogram of the leaked sizes and the leaked bytes per call site.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/map.h"
#include "cli.h"
#include "hist.h"
#include "tools.h"
#include "../../tools/cudatrace.h"

/* Rows of the text output's per-kernel and per-leak lists (JSON has all). */
#define CT_TEXT_ROWS 40

struct ct_leak {
	uint64_t addr;
	struct ct_alloc a;
};

struct ct_kern {
	uint64_t handle;
	struct trace_kernel k;
};

/* What tool_map_collect gave (NULL when empty). */
struct ct_list {
	void *v;
	size_t n;
};

static int ct_by_size(const void *a, const void *b)
{
	const struct ct_leak *x = a, *y = b;
	if (x->a.size != y->a.size)
		return x->a.size < y->a.size ? 1 : -1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int ct_by_launches(const void *a, const void *b)
{
	const struct ct_kern *x = a, *y = b;
	if (x->k.launches != y->k.launches)
		return x->k.launches < y->k.launches ? 1 : -1;
	return strcmp(x->k.name, y->k.name);
}

/* Leaked bytes per call site, the largest first. */
struct ct_site {
	uint64_t site, count, bytes;
};

static int ct_site_by_bytes(const void *a, const void *b)
{
	const struct ct_site *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return x->site < y->site ? -1 : x->site > y->site;
}

static int ct_site_by_addr(const void *a, const void *b)
{
	const struct ct_site *x = a, *y = b;
	return x->site < y->site ? -1 : x->site > y->site;
}

/* Groups the leaks by call site into out (room for n): sorted by site,
 * then merged, then ordered by bytes. */
static size_t ct_sites(const struct ct_leak *l, size_t n, struct ct_site *out)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		out[i] = (struct ct_site){l[i].a.site, 1, l[i].a.size};
	if (!n)
		return 0;
	qsort(out, n, sizeof(*out), ct_site_by_addr);
	for (size_t i = 0; i < n; i++) {
		if (m && out[m - 1].site == out[i].site) {
			out[m - 1].count++;
			out[m - 1].bytes += out[i].bytes;
		} else {
			out[m++] = out[i];
		}
	}
	qsort(out, m, sizeof(*out), ct_site_by_bytes);
	return m;
}

int tool_cudatrace_event(FILE *out, const struct object *obj, const char *map,
			 const void *data, size_t size, int json)
{
	return 1; /* only `trace` records, which --trace takes */
}

static void ct_print_json(FILE *out, const uint64_t *s, const struct ct_list *leaks,
			  const struct ct_list *kerns, const struct ct_site *sites, size_t nsites,
			  const struct hist_log2 *h, uint64_t leak_bytes)
{
	fputs("{\"tool\":\"cudatrace\",\"allocs\":{", out);
	for (uint32_t k = 0; k < CM_COUNT; k++)
		fprintf(out, "%s\"%s\":{\"count\":%" PRIu64 ",\"bytes\":%" PRIu64
			",\"freed\":%" PRIu64 ",\"freed_bytes\":%" PRIu64 "}", k ? "," : "",
			tool_mem_name(k), s[CT_ALLOCS + k], s[CT_ALLOC_BYTES + k], s[CT_FREES + k],
			s[CT_FREE_BYTES + k]);
	fputs("},\"copies\":{", out);
	for (uint32_t d = 0; d < CD_COUNT; d++)
		fprintf(out, "%s\"%s\":{\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 "}", d ? "," : "",
			tool_dir_name(d), s[CT_COPIES + d], s[CT_COPY_BYTES + d]);
	fprintf(out, "},\"memsets\":{\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 "},\"launches\":%" PRIu64
		",\"failed_calls\":%" PRIu64 ",\"frees_untracked\":%" PRIu64
		",\"allocs_untracked\":%" PRIu64 ",\"launches_unnamed\":%" PRIu64
		",\"unpaired\":%" PRIu64 ",\"kernels\":[",
		s[CT_MEMSETS], s[CT_MEMSET_BYTES], s[CT_LAUNCHES], s[CT_FAILED],
		s[CT_FREE_UNTRACKED], s[CT_ALLOCS_LOST], s[CT_KERNELS_LOST], s[CT_UNPAIRED]);
	const struct ct_kern *k = kerns->v;
	for (size_t i = 0; i < kerns->n; i++) {
		fprintf(out, "%s{\"handle\":%" PRIu64 ",\"launches\":%" PRIu64 ",\"name\":",
			i ? "," : "", k[i].handle, (uint64_t)k[i].k.launches);
		cli_json_str(out, k[i].k.name);
		fputs("}", out);
	}
	fprintf(out, "],\"leaks\":{\"count\":%zu,\"bytes\":%" PRIu64 ",\"list\":[", leaks->n,
		leak_bytes);
	const struct ct_leak *l = leaks->v;
	for (size_t i = 0; i < leaks->n; i++)
		fprintf(out, "%s{\"addr\":%" PRIu64 ",\"size\":%" PRIu64 ",\"kind\":\"%s\",\"tid\":%u"
			",\"site\":%" PRIu64 "}", i ? "," : "", l[i].addr, (uint64_t)l[i].a.size,
			tool_mem_name(l[i].a.kind), l[i].a.tid, (uint64_t)l[i].a.site);
	fputs("],\"sites\":[", out);
	for (size_t i = 0; i < nsites; i++)
		fprintf(out, "%s{\"site\":%" PRIu64 ",\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 "}",
			i ? "," : "", sites[i].site, sites[i].count, sites[i].bytes);
	fputs("],\"size\":", out);
	hist_log2_print(out, "leak_bytes", h, 1);
	fputs("}}\n", out);
}

static void ct_print_text(FILE *out, const uint64_t *s, const struct ct_list *leaks,
			  const struct ct_list *kerns, const struct ct_site *sites, size_t nsites,
			  const struct hist_log2 *h, uint64_t leak_bytes)
{
	fprintf(out, "%-8s %10s %16s %10s %16s\n", "memory", "allocs", "bytes", "frees",
		"bytes_freed");
	for (uint32_t k = 0; k < CM_COUNT; k++)
		fprintf(out, "%-8s %10" PRIu64 " %16" PRIu64 " %10" PRIu64 " %16" PRIu64 "\n",
			tool_mem_name(k), s[CT_ALLOCS + k], s[CT_ALLOC_BYTES + k], s[CT_FREES + k],
			s[CT_FREE_BYTES + k]);
	fprintf(out, "\n%-8s %10s %16s\n", "copy", "calls", "bytes");
	for (uint32_t d = 0; d < CD_COUNT; d++)
		fprintf(out, "%-8s %10" PRIu64 " %16" PRIu64 "\n", tool_dir_name(d),
			s[CT_COPIES + d], s[CT_COPY_BYTES + d]);
	fprintf(out, "%-8s %10" PRIu64 " %16" PRIu64 "\n", "memset", s[CT_MEMSETS],
		s[CT_MEMSET_BYTES]);
	fprintf(out, "\n%" PRIu64 " launches of %zu kernels\n", s[CT_LAUNCHES], kerns->n);
	const struct ct_kern *k = kerns->v;
	for (size_t i = 0; i < kerns->n && i < CT_TEXT_ROWS; i++)
		fprintf(out, "  %10" PRIu64 "  %s\n", (uint64_t)k[i].k.launches,
			k[i].k.name[0] ? k[i].k.name : "(name unknown)");
	if (kerns->n > CT_TEXT_ROWS)
		fprintf(out, "  ... %zu more kernels (--json lists all)\n", kerns->n - CT_TEXT_ROWS);
	fprintf(out, "\nleaks at exit (allocated, never freed): %zu allocations, %" PRIu64
		" bytes\n", leaks->n, leak_bytes);
	const struct ct_leak *l = leaks->v;
	for (size_t i = 0; i < leaks->n && i < CT_TEXT_ROWS; i++)
		fprintf(out, "  %12" PRIu64 " bytes  %-7s at 0x%" PRIx64 "  tid %u  site 0x%" PRIx64
			"\n", (uint64_t)l[i].a.size, tool_mem_name(l[i].a.kind), l[i].addr,
			l[i].a.tid, (uint64_t)l[i].a.site);
	if (leaks->n > CT_TEXT_ROWS)
		fprintf(out, "  ... %zu more (--json lists all)\n", leaks->n - CT_TEXT_ROWS);
	if (leaks->n) {
		fputs("\nleaked bytes per call site:\n", out);
		for (size_t i = 0; i < nsites && i < CT_TEXT_ROWS; i++)
			fprintf(out, "  0x%-16" PRIx64 " %8" PRIu64 " allocations %16" PRIu64
				" bytes\n", sites[i].site, sites[i].count, sites[i].bytes);
		fputs("\n", out);
		hist_log2_print(out, "leak_bytes", h, 0);
	}
	if (s[CT_FAILED] || s[CT_FREE_UNTRACKED] || s[CT_ALLOCS_LOST] || s[CT_KERNELS_LOST] ||
	    s[CT_UNPAIRED])
		fprintf(out, "\n%" PRIu64 " failed calls, %" PRIu64 " frees of untracked pointers, %"
			PRIu64 " allocations and %" PRIu64 " launches not tracked (table full), %"
			PRIu64 " returns without their entry\n", s[CT_FAILED],
			s[CT_FREE_UNTRACKED], s[CT_ALLOCS_LOST], s[CT_KERNELS_LOST], s[CT_UNPAIRED]);
}

int tool_cudatrace_summary(FILE *out, const struct object *obj, const struct session_status *st,
			   int json)
{
	struct map *stats = tool_map(obj, "stats", 4, 8);
	struct map *allocs = tool_map(obj, "allocs", 8, sizeof(struct ct_alloc));
	struct map *kernels = tool_map(obj, "kernels", 8, sizeof(struct trace_kernel));
	struct ct_list leaks = {0}, kerns = {0};
	struct ct_site *sites = NULL;
	struct hist_log2 h = {{0}};
	uint64_t s[CT_STAT_COUNT] = {0}, leak_bytes = 0;
	int ret = 1;

	if (!stats || !allocs || !kernels)
		return 1;
	for (uint32_t i = 0; i < CT_STAT_COUNT; i++)
		map_lookup_copy(stats, &i, &s[i]);
	leaks.v = tool_map_collect(allocs, sizeof(struct ct_leak), offsetof(struct ct_leak, a),
				   &leaks.n);
	kerns.v = tool_map_collect(kernels, sizeof(struct ct_kern), offsetof(struct ct_kern, k),
				   &kerns.n);
	if (leaks.n)
		qsort(leaks.v, leaks.n, sizeof(struct ct_leak), ct_by_size);
	if (kerns.n)
		qsort(kerns.v, kerns.n, sizeof(struct ct_kern), ct_by_launches);
	const struct ct_leak *l = leaks.v;
	for (size_t i = 0; i < leaks.n; i++) {
		leak_bytes += l[i].a.size;
		hist_log2_add(&h, l[i].a.size, 1);
	}
	sites = calloc(leaks.n + 1, sizeof(*sites));
	if (!sites)
		goto out;
	size_t nsites = ct_sites(l, leaks.n, sites);
	if (json)
		ct_print_json(out, s, &leaks, &kerns, sites, nsites, &h, leak_bytes);
	else
		ct_print_text(out, s, &leaks, &kerns, sites, nsites, &h, leak_bytes);
	ret = 0;
out:
	free(leaks.v);
	free(kerns.v);
	free(sites);
	return ret;
}
