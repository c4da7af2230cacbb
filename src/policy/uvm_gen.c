/* SPDX-License-Identifier: MIT */
/*
 * uvm_gen.c - synthetic access traces with the patterns that set workloads
 * apart under oversubscription (docs/policies.md):
 *
 *   seq     sequential scan of the whole footprint, once per pass
 *   random  uniformly random pages
 *   moe     periodic sequential, like MoE prefill: every launch scans a
 *           shared part and the 4 experts (of 32) its tokens route to;
 *           experts are picked with a skewed, seeded popularity
 *   decode  sparse random, like decode: a few pages of every block of the
 *           weights per step, biased to a hot part (hot experts, recent KV)
 *   dnn     block-periodic, like DNN training: layers forward then
 *           backward, every iteration
 *   mix     two processes: pid 1 reads random pages of a hot third,
 *           pid 2 streams through the rest (what pid-aware policies are for)
 *
 * One record per 4 KiB page touched; timestamps advance ns_per_access per
 * record; a launch id per kernel-like phase.  Deterministic for a seed.
 */
#include <errno.h>
#include <string.h>

#include "uvm_sim.h"

const char *const uvm_gen_patterns[][2] = {
	{"seq", "sequential scan of the whole footprint, once per pass"},
	{"random", "uniformly random 4 KiB pages"},
	{"moe", "periodic sequential (MoE prefill): shared part + 4 of 32 experts per launch"},
	{"decode", "sparse random (decode): few pages per block, skewed to a hot part"},
	{"dnn", "block-periodic (DNN training): layers forward then backward"},
	{"mix", "two processes: random reads of a hot third (pid 1), a stream (pid 2)"},
	{NULL, NULL},
};

/* The managed allocation the workloads touch: 2 MiB aligned, like cudaMallocManaged. */
#define UVM_GEN_BASE 0x7f0000000000ull

struct uvm_gen {
	const struct uvm_gen_opts *o;
	struct uvm_trace *t;
	uint64_t pages;
	uint64_t rng;
	uint64_t ts;
	uint32_t launch;
	uint32_t pid;
};

/* splitmix64: small, fast, good enough for workload shapes. */
static uint64_t uvm_gen_rand(struct uvm_gen *g)
{
	uint64_t z = (g->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0. */
static uint64_t uvm_gen_below(struct uvm_gen *g, uint64_t n)
{
	return uvm_gen_rand(g) % n;
}

static int uvm_gen_touch(struct uvm_gen *g, uint64_t page, struct err *e)
{
	struct uvm_rec r = {.addr = UVM_GEN_BASE + (page << MEM_PAGE_SHIFT), .ts_ns = g->ts,
			    .launch = g->launch, .pid = g->pid,
			    .access = (uint8_t)(page & 7 ? UVM_ACCESS_READ : UVM_ACCESS_WRITE)};
	g->ts += g->o->ns_per_access;
	return uvm_trace_append(g->t, &r, e);
}

static int uvm_gen_scan(struct uvm_gen *g, uint64_t first, uint64_t cnt, struct err *e)
{
	int err = 0;
	for (uint64_t p = first; !err && p < first + cnt; p++)
		err = uvm_gen_touch(g, p, e);
	return err;
}

static int uvm_gen_seq(struct uvm_gen *g, struct err *e)
{
	int err = 0;
	for (uint32_t pass = 0; !err && pass < g->o->passes; pass++, g->launch++)
		err = uvm_gen_scan(g, 0, g->pages, e);
	return err;
}

static int uvm_gen_random(struct uvm_gen *g, struct err *e)
{
	int err = 0;
	for (uint32_t pass = 0; !err && pass < g->o->passes; pass++, g->launch++)
		for (uint64_t i = 0; !err && i < g->pages; i++)
			err = uvm_gen_touch(g, uvm_gen_below(g, g->pages), e);
	return err;
}

enum { UVM_MOE_EXPERTS = 32, UVM_MOE_TOPK = 4, UVM_MOE_LAUNCHES_PER_PASS = 4 };

/* Expert popularity: rank r is drawn with weight ~ 1/(r+1) (Zipf, s = 1). */
enum { UVM_MOE_WEIGHT = 1 << 20 };
static uint32_t uvm_gen_moe_rank(struct uvm_gen *g, uint64_t total)
{
	uint64_t u = uvm_gen_below(g, total);
	uint32_t r = 0;

	while (r + 1 < UVM_MOE_EXPERTS && u >= UVM_MOE_WEIGHT / (r + 1))
		u -= UVM_MOE_WEIGHT / (r++ + 1);
	return r;
}

static int uvm_gen_moe(struct uvm_gen *g, struct err *e)
{
	/* A tenth shared (attention, dense layers), the rest split into experts. */
	uint64_t shared = g->pages / 10;
	uint64_t expert = (g->pages - shared) / UVM_MOE_EXPERTS;
	uint32_t order[UVM_MOE_EXPERTS];
	int err = 0;

	/* Which expert has which popularity rank: a seeded permutation. */
	for (uint32_t i = 0; i < UVM_MOE_EXPERTS; i++)
		order[i] = i;
	for (uint32_t i = UVM_MOE_EXPERTS - 1; i > 0; i--) {
		uint32_t j = (uint32_t)uvm_gen_below(g, i + 1), x = order[i];
		order[i] = order[j];
		order[j] = x;
	}
	uint64_t total = 0;
	for (uint32_t r = 0; r < UVM_MOE_EXPERTS; r++)
		total += UVM_MOE_WEIGHT / (r + 1);
	uint32_t launches = g->o->passes * UVM_MOE_LAUNCHES_PER_PASS;
	for (uint32_t l = 0; !err && l < launches; l++, g->launch++) {
		uint32_t picked = 0;
		err = uvm_gen_scan(g, 0, shared, e);
		while (!err && __builtin_popcount(picked) < UVM_MOE_TOPK)
			picked |= 1u << order[uvm_gen_moe_rank(g, total)];
		for (uint32_t x = 0; !err && x < UVM_MOE_EXPERTS; x++)
			if (picked >> x & 1)
				err = uvm_gen_scan(g, shared + x * expert, expert, e);
	}
	return err;
}

enum { UVM_DECODE_PAGES_PER_BLOCK = 8 };

static int uvm_gen_decode(struct uvm_gen *g, struct err *e)
{
	uint64_t blocks = (g->pages + MEM_PAGES - 1) / MEM_PAGES;
	uint64_t steps = (uint64_t)g->o->passes * MEM_PAGES / UVM_DECODE_PAGES_PER_BLOCK;
	int err = 0;

	/* Each step: every block with probability falling from 1 (the hot
	 * first fifth) to 1/8 (the rest), a few random pages of it. */
	for (uint64_t s = 0; !err && s < steps; s++, g->launch++)
		for (uint64_t b = 0; !err && b < blocks; b++) {
			if (b >= blocks / 5 && uvm_gen_below(g, 8))
				continue;
			for (int i = 0; !err && i < UVM_DECODE_PAGES_PER_BLOCK; i++) {
				uint64_t p = b * MEM_PAGES + uvm_gen_below(g, MEM_PAGES);
				if (p < g->pages)
					err = uvm_gen_touch(g, p, e);
			}
		}
	return err;
}

enum { UVM_DNN_LAYERS = 24 };

static int uvm_gen_dnn(struct uvm_gen *g, struct err *e)
{
	uint64_t layer = g->pages / UVM_DNN_LAYERS;
	int err = 0;

	for (uint32_t it = 0; !err && it < g->o->passes; it++) {
		for (uint32_t l = 0; !err && l < UVM_DNN_LAYERS; l++, g->launch++)
			err = uvm_gen_scan(g, l * layer, layer, e);
		for (uint32_t l = UVM_DNN_LAYERS; !err && l-- > 0; g->launch++)
			err = uvm_gen_scan(g, l * layer, layer, e);
	}
	return err;
}

enum { UVM_MIX_CHUNK = 256 };

static int uvm_gen_mix(struct uvm_gen *g, struct err *e)
{
	uint64_t hot = g->pages / 3, stream = g->pages - hot, at = 0;
	uint64_t chunks = (uint64_t)g->o->passes * g->pages / (2 * UVM_MIX_CHUNK);
	int err = 0;

	/* Alternating kernels of the two processes, UVM_MIX_CHUNK pages each. */
	for (uint64_t c = 0; !err && c < chunks; c++) {
		g->pid = 1;
		for (int i = 0; !err && i < UVM_MIX_CHUNK; i++)
			err = uvm_gen_touch(g, uvm_gen_below(g, hot), e);
		g->launch++;
		g->pid = 2;
		for (int i = 0; !err && i < UVM_MIX_CHUNK; i++, at = (at + 1) % stream)
			err = uvm_gen_touch(g, hot + at, e);
		g->launch++;
	}
	return err;
}

int uvm_gen(const struct uvm_gen_opts *o, struct uvm_trace *t, struct err *e)
{
	static const struct {
		const char *name;
		int (*fn)(struct uvm_gen *g, struct err *e);
	} gens[] = {{"seq", uvm_gen_seq}, {"random", uvm_gen_random}, {"moe", uvm_gen_moe},
		    {"decode", uvm_gen_decode}, {"dnn", uvm_gen_dnn}, {"mix", uvm_gen_mix}};
	uint64_t block = 1ull << MEM_BLOCK_SHIFT;
	struct uvm_gen g = {.o = o, .t = t, .rng = o->seed, .pid = 1};

	memset(t, 0, sizeof(*t));
	if (!o->size || o->size > (1ull << 44))
		return err_set(e, EINVAL, "generator: size must be 1 byte .. 16 TiB");
	if (!o->passes)
		return err_set(e, EINVAL, "generator: passes must be at least 1");
	g.pages = (o->size + block - 1) / block * MEM_PAGES;
	for (size_t i = 0; i < sizeof(gens) / sizeof(gens[0]); i++)
		if (!strcmp(o->pattern, gens[i].name)) {
			int err = gens[i].fn(&g, e);
			if (err)
				uvm_trace_free(t);
			return err;
		}
	return err_set(e, EINVAL,
		       "generator: unknown pattern '%s' (seq, random, moe, decode, dnn, mix)",
		       o->pattern);
}
