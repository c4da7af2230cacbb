/* SPDX-License-Identifier: MIT */
/*
 * tool_memtrace.c - memtrace's summary: bytes, thread accesses and warp
 * instructions per kind (load, store, atomic), and the heat map: a bar per
 * 2 MiB region (base address) with its thread accesses, in address order,
 * the MT_HEAT_ROWS busiest when there are more.  memtrace_block (its counts
 * gathered per block, tools/memtrace.h) gives the same summary from its own
 * heat map's layout.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/map.h"
#include "hist.h"
#include "tools.h"
#include "../../tools/memtrace.h"

#define MT_HEAT_ROWS 64

struct mt_totals {
	uint64_t bytes, accesses, instrs;
};

struct mt_region {
	uint64_t base, accesses;
};

struct mt_heat {
	struct mt_region r[MTB_MAX_REGIONS > MT_MAX_REGIONS ? MTB_MAX_REGIONS : MT_MAX_REGIONS];
	size_t n;
	uint64_t untracked;
};

/*
 * The tag (region + 1) of heat map slot `slot` of `slots`, from the OR of
 * the tags (ones) and of their complements (zeros) of every region counted
 * there, `mask` the bits they have: one region leaves ones = its tag and
 * zeros = ~ones; 0 when more than one region met there (some bit in both).
 */
static uint64_t mt_region_tag(uint64_t ones, uint64_t zeros, uint64_t mask, uint32_t slot,
			      uint32_t slots)
{
	if (!ones || (ones & zeros) || ((ones | zeros) & mask) != mask ||
	    ((ones - 1) & (slots - 1)) != slot)
		return 0;
	return ones;
}

/* A slot's n accesses: to its region, or untracked when it has none. */
static void mt_heat_add(struct mt_heat *h, uint64_t tag, uint64_t n)
{
	if (tag)
		h->r[h->n++] = (struct mt_region){(tag - 1) << MT_REGION_SHIFT, n};
	else
		h->untracked += n;
}

/* memtrace_block's heat map (memtrace.h): a slot's per-SM bits ORed, its
 * per-SM accesses summed; a slot whose bits show more than one region is
 * counted as untracked. */
static int mt_heat_bits(const struct object *obj, struct mt_heat *h)
{
	struct map *bits = tool_map(obj, "region_bits", 4, sizeof(struct mt_region_bits));
	struct map *accesses = tool_map(obj, "region_accesses", 4, 8);
	if (!bits || !accesses)
		return -1;
	unsigned cpus = map_nr_cpus(bits);
	struct mt_region_bits *b = calloc(cpus, sizeof(*b));
	if (!b)
		return -1;
	for (uint32_t slot = 0; slot < MTB_MAX_REGIONS; slot++) {
		uint64_t n, ones = 0, zeros = 0;
		if (tool_map_sum(accesses, &slot, &n, 1) || !n || map_lookup_copy(bits, &slot, b))
			continue;
		for (unsigned c = 0; c < cpus; c++) {
			ones |= b[c].ones;
			zeros |= b[c].zeros;
		}
		mt_heat_add(h, mt_region_tag(ones, zeros, ~0ull, slot, MTB_MAX_REGIONS), n);
	}
	free(b);
	return 0;
}

/*
 * memtrace's counts (memtrace.h): per slot, its lanes per kind and size
 * class summed over SMs give the kinds' traffic and the slot's accesses,
 * its bits ORed over SMs its region; partial warps and other sizes from
 * `odd`.
 */
static int mt_read_slots(const struct object *obj, struct mt_totals t[MT_KINDS],
			 struct mt_heat *h)
{
	struct map *lanes = tool_map(obj, "region_lanes", 4, sizeof(struct mt_slot));
	struct map *odd = tool_map(obj, "odd", 4, sizeof(struct mt_odd));
	if (!lanes || !odd)
		return -1;
	unsigned cpus = map_nr_cpus(lanes);
	struct mt_slot *v = calloc(cpus, sizeof(*v));
	uint64_t full[MT_KINDS] = {0};
	if (!v)
		return -1;
	for (uint32_t slot = 0; slot <= MT_MAX_REGIONS; slot++) {
		uint64_t n = 0, bits = 0;
		if (map_lookup_copy(lanes, &slot, v))
			continue;
		for (unsigned cpu = 0; cpu < cpus; cpu++) {
			bits |= v[cpu].w[0];
			for (uint32_t k = 0; k < MT_KINDS; k++)
				for (uint32_t c = 0; c < MT_CLASSES; c++) {
					uint64_t l = v[cpu].w[MT_WORD(k, c)];
					n += l;
					if (MT_WORD(k, c) == MT_WORD_OTHER)
						continue; /* other sizes: `odd` has their traffic */
					t[k].accesses += l;
					t[k].bytes += l << c;
					full[k] += l;
				}
		}
		if (n)
			mt_heat_add(h, slot < MT_MAX_REGIONS ? mt_region_tag(bits & 0xffffffffu, bits >> 32,
									      0xffffffffu, slot,
									      MT_MAX_REGIONS)
							     : 0,
				    n);
	}
	free(v);
	for (uint32_t k = 0; k < MT_KINDS; k++) {
		uint64_t o[sizeof(struct mt_odd) / 8];
		struct mt_odd od;
		tool_map_sum(odd, &k, o, sizeof(o) / 8);
		memcpy(&od, o, sizeof(od));
		t[k].instrs = (full[k] + od.missing) / 32 + od.other_instrs;
		t[k].accesses += od.other_lanes;
		t[k].bytes += od.other_bytes;
	}
	return 0;
}

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

/* memtrace_block's counts (memtrace.h): the per-kind traffic counters
 * (their SPREAD_SLOTS copies) and its heat map. */
static int mt_read_block(const struct object *obj, struct mt_totals t[MT_KINDS],
			 struct mt_heat *h)
{
	struct map *traffic = tool_map(obj, "traffic", 4, sizeof(struct mt_traffic));
	if (!traffic || mt_heat_bits(obj, h))
		return -1;
	for (uint32_t k = 0; k < MT_KINDS; k++)
		for (uint32_t c = 0; c < SPREAD_SLOTS; c++) {
			uint32_t key = k * SPREAD_SLOTS + c;
			uint64_t words[sizeof(struct mt_traffic) / 8];
			struct mt_traffic v;
			tool_map_sum(traffic, &key, words, sizeof(words) / 8);
			memcpy(&v, words, sizeof(v));
			mt_traffic_add(&t[k], &v);
		}
	return 0;
}

/* Busiest first; among equals the lowest address (the rows shown do not
 * depend on which slots the regions took). */
static int mt_by_accesses(const void *a, const void *b)
{
	const struct mt_region *x = a, *y = b;
	if (x->accesses != y->accesses)
		return x->accesses < y->accesses ? 1 : -1;
	return x->base < y->base ? -1 : x->base > y->base;
}

static int mt_by_base(const void *a, const void *b)
{
	const struct mt_region *x = a, *y = b;
	return x->base < y->base ? -1 : x->base > y->base;
}

int tool_memtrace_event(FILE *out, const struct object *obj, const char *map,
			const void *data, size_t size, int json)
{
	return 1; /* memtrace has no ring buffer */
}

int tool_memtrace_block_event(FILE *out, const struct object *obj, const char *map,
			      const void *data, size_t size, int json)
{
	return 1; /* no ring buffer either */
}

/* The summary, with the counts read by read (the tool's layout). */
static int mt_summary(FILE *out, const struct object *obj, int json,
		      int (*read)(const struct object *, struct mt_totals *, struct mt_heat *),
		      unsigned slots)
{
	static const char *const kind[] = {"load", "store", "atomic"};
	struct mt_heat *h = calloc(1, sizeof(*h));
	struct mt_totals t[MT_KINDS] = {{0}};
	uint64_t base[MT_HEAT_ROWS], count[MT_HEAT_ROWS], untracked;
	if (!h || read(obj, t, h)) {
		free(h);
		return 1;
	}
	untracked = h->untracked;
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
			fprintf(out, "%" PRIu64 " accesses to regions that found no slot (more than "
				"%u regions, or collisions)\n", untracked, slots);
		hist_bars_print(out, "accesses_per_2MiB", base, count, rows, 1, 0);
	}
	free(h);
	return 0;
}

int tool_memtrace_summary(FILE *out, const struct object *obj, const struct session_status *st,
			  int json)
{
	return mt_summary(out, obj, json, mt_read_slots, MT_MAX_REGIONS);
}

int tool_memtrace_block_summary(FILE *out, const struct object *obj,
				const struct session_status *st, int json)
{
	return mt_summary(out, obj, json, mt_read_block, MTB_MAX_REGIONS);
}
