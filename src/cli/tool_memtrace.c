/* SPDX-License-Identifier: MIT */
/*
 * tool_memtrace.c - memtrace's summary: bytes, thread accesses and warp
 * instructions per kind (load, store, atomic), and the heat map: a bar per
 * 2 MiB region (base address) with its thread accesses, in address order,
 * the MT_HEAT_ROWS busiest when there are more.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/map.h"
#include "hist.h"
#include "tools.h"
#include "../../tools/memtrace.h"

#define MT_HEAT_ROWS 64

struct mt_region {
	uint64_t base, accesses;
};

struct mt_heat {
	struct mt_region r[MT_MAX_REGIONS];
	size_t n;
	uint64_t collided; /* accesses of slots several regions met in */
};

/* The regions of the heat map's slots (memtrace.h): a slot's per-SM bits
 * ORed, its per-SM accesses summed; a slot whose bits show more than one
 * region is counted as collided. */
static int mt_heat_read(struct map *accesses, struct map *bits, struct mt_heat *h)
{
	unsigned cpus = map_nr_cpus(bits);
	struct mt_region_bits *b = calloc(cpus, sizeof(*b));
	if (!b)
		return -1;
	for (uint32_t slot = 0; slot < MT_MAX_REGIONS; slot++) {
		uint64_t n, ones = 0, zeros = 0;
		if (tool_map_sum(accesses, &slot, &n, 1) || !n ||
		    map_lookup_copy(bits, &slot, b))
			continue;
		for (unsigned c = 0; c < cpus; c++) {
			ones |= b[c].ones;
			zeros |= b[c].zeros;
		}
		if ((ones & zeros) || ~(ones | zeros) || !ones)
			h->collided += n;
		else
			h->r[h->n++] = (struct mt_region){(ones - 1) << MT_REGION_SHIFT, n};
	}
	free(b);
	return 0;
}

static int mt_by_accesses(const void *a, const void *b)
{
	const struct mt_region *x = a, *y = b;
	return x->accesses < y->accesses ? 1 : x->accesses > y->accesses ? -1 : 0;
}

static int mt_by_base(const void *a, const void *b)
{
	const struct mt_region *x = a, *y = b;
	return x->base < y->base ? -1 : x->base > y->base;
}

struct mt_totals {
	uint64_t bytes, accesses, instrs;
};

/* What one traffic value counts (memtrace.h says how it is packed). */
static void mt_traffic_add(struct mt_totals *t, const struct mt_traffic *v)
{
	for (int c = 0; c < MT_SIZE_CLASSES; c++) {
		uint64_t lanes = 32 * v->full[c] + v->part_lanes[c];
		t->accesses += lanes;
		t->bytes += lanes << c;
		t->instrs += v->full[c];
	}
	t->instrs += v->part_instrs + v->other_instrs;
	t->accesses += v->other_lanes;
	t->bytes += v->other_bytes;
}

int tool_memtrace_event(FILE *out, const struct object *obj, const char *map,
			const void *data, size_t size, int json)
{
	return 1; /* memtrace has no ring buffer */
}

int tool_memtrace_summary(FILE *out, const struct object *obj, const struct session_status *st,
			  int json)
{
	static const char *const kind[] = {"load", "store", "atomic"};
	struct map *traffic = tool_map(obj, "traffic", 4, sizeof(struct mt_traffic));
	struct map *bits = tool_map(obj, "region_bits", 4, sizeof(struct mt_region_bits));
	struct map *accesses = tool_map(obj, "region_accesses", 4, 8);
	struct mt_heat *h = calloc(1, sizeof(*h));
	uint64_t base[MT_HEAT_ROWS], count[MT_HEAT_ROWS], untracked;
	if (!traffic || !bits || !accesses || !h || mt_heat_read(accesses, bits, h)) {
		free(h);
		return 1;
	}
	struct mt_totals t[3];
	for (uint32_t k = 0; k < 3; k++) { /* the kind's SPREAD_SLOTS copies */
		memset(&t[k], 0, sizeof(t[k]));
		for (uint32_t c = 0; c < SPREAD_SLOTS; c++) {
			uint32_t key = k * SPREAD_SLOTS + c;
			uint64_t words[sizeof(struct mt_traffic) / 8];
			struct mt_traffic v;
			tool_map_sum(traffic, &key, words, sizeof(words) / 8);
			memcpy(&v, words, sizeof(v));
			mt_traffic_add(&t[k], &v);
		}
	}
	untracked = h->collided;
	size_t rows = h->n;
	if (rows > MT_HEAT_ROWS) {
		qsort(h->r, h->n, sizeof(h->r[0]), mt_by_accesses);
		rows = MT_HEAT_ROWS;
	}
	qsort(h->r, rows, sizeof(h->r[0]), mt_by_base);
	for (size_t i = 0; i < rows; i++) {
		base[i] = h->r[i].base;
		count[i] = h->r[i].accesses;
	}
	if (json) {
		fputs("{", out);
		for (int k = 0; k < 3; k++)
			fprintf(out, "\"%s\":{\"bytes\":%" PRIu64 ",\"accesses\":%" PRIu64
				",\"instructions\":%" PRIu64 "},", kind[k], (uint64_t)t[k].bytes,
				(uint64_t)t[k].accesses, (uint64_t)t[k].instrs);
		fprintf(out, "\"regions\":%zu,\"untracked_accesses\":%" PRIu64 ",\"heat\":", h->n,
			untracked);
		hist_bars_print(out, "accesses_per_2MiB", base, count, rows, 1, 1);
		fputs("}\n", out);
	} else {
		fprintf(out, "%-8s %16s %16s %16s\n", "kind", "bytes", "accesses", "warp_instrs");
		for (int k = 0; k < 3; k++)
			fprintf(out, "%-8s %16" PRIu64 " %16" PRIu64 " %16" PRIu64 "\n", kind[k],
				(uint64_t)t[k].bytes, (uint64_t)t[k].accesses, (uint64_t)t[k].instrs);
		fprintf(out, "\n%zu regions of 2 MiB touched%s\n", h->n,
			h->n > rows ? " (the busiest shown)" : "");
		if (untracked)
			fprintf(out, "%" PRIu64 " accesses to regions that shared a slot (regions "
				"a multiple of %d apart)\n", untracked, MT_MAX_REGIONS);
		hist_bars_print(out, "accesses_per_2MiB", base, count, rows, 1, 0);
	}
	free(h);
	return 0;
}
