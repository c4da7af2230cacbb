/* SPDX-License-Identifier: MIT */
/*
 * gpu_contention - every warp of every SM updating the same device maps.
 *
 * An application kernel (2 blocks of 256 threads per SM) calls a probe
 * ITERS times per thread; the probe program updates an array counter, a
 * per-SM array counter, a hash (1024 keys) or a ring buffer, once per warp
 * and once per thread.  Checked exactly:
 *   - counters: the total equals threads x iterations;
 *   - hash: each key's total equals what its warps added; a hash with half
 *     the keys' capacity fills to exactly max_entries, the rest of the
 *     updates fail cleanly (no duplicate key, no lost count of the stored);
 *   - ring buffer: every record intact (check word), per-record lane count
 *     right, records received + drops = invocations, with the host polling
 *     during the kernel; and a ring that is never drained holds exactly
 *     size / record size records, all others counted as drops.
 * Exit 0 all passed, 1 a check failed, 77 no GPU.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_common.h"
#include "ptx/ptx_rt.h"

enum { THREADS = 256, HASH_KEYS = 1024 };

static int failures;

#define CHECK(cond, ...)                                                          \
	do {                                                                      \
		if (cond) {                                                       \
			printf("PASS ");                                          \
		} else {                                                          \
			printf("FAIL ");                                          \
			failures++;                                               \
		}                                                                 \
		printf(__VA_ARGS__);                                              \
		printf("\n");                                                     \
		fflush(stdout);                                                   \
	} while (0)

struct run {
	struct ptx_rt *rt;
	unsigned blocks, iters;
	enum ptx_mode mode;
};

static const char *mode_name(enum ptx_mode m)
{
	return m == PTX_MODE_WARP ? "per-warp" : "per-thread";
}

/* Load the module of program kind over map m and launch the application. */
static int launch(struct run *r, enum gpu_prog_kind kind, struct ptx_rt_map *m,
		  CUmodule *mod, struct err *e)
{
	struct gpu_prog_buf pb;
	struct ptx_map_ref ref = ptx_rt_map_ref(m);
	struct map *fake[1] = {NULL};
	struct ptx_buf b = {0};
	CUfunction fn;
	CUresult cr;
	int err;

	gpu_prog_build(kind, HASH_KEYS, &pb);
	struct prog p = {.name = "contention", .insns = pb.insns, .insn_cnt = pb.n,
			 .maps = fake, .map_cnt = 1};
	err = gpu_module(&b, &r->rt->target, &p, "gx_c", &ref, r->mode, e);
	char *text = ptx_buf_take(&b, NULL);
	if (!err && !text)
		err = err_set(e, ENOMEM, "out of memory");
	if (!err)
		err = ptx_rt_module_load(r->rt, text, mod, e);
	free(text);
	if (err)
		return err;
	cr = r->rt->cu->module_get_function(&fn, *mod, "gx_c_app");
	if (cr != CUDA_SUCCESS)
		return cu_err(r->rt->cu, e, cr, "cuModuleGetFunction");
	uint32_t iters = r->iters;
	uint64_t no_cycles = 0;
	void *params[] = {&iters, &no_cycles};
	cr = r->rt->cu->launch_kernel(fn, r->blocks, 1, 1, THREADS, 1, 1, 0, NULL, params, NULL);
	if (cr != CUDA_SUCCESS)
		return cu_err(r->rt->cu, e, cr, "cuLaunchKernel");
	return 0;
}

static int finish(struct run *r, CUmodule mod, struct err *e)
{
	CUresult cr = r->rt->cu->ctx_synchronize();
	r->rt->cu->module_unload(mod);
	return cr == CUDA_SUCCESS ? 0 : cu_err(r->rt->cu, e, cr, "kernel");
}

static uint64_t invocations(const struct run *r)
{
	uint64_t threads = (uint64_t)r->blocks * THREADS;
	return (r->mode == PTX_MODE_WARP ? threads / 32 : threads) * r->iters;
}

struct sum {
	uint64_t total, elems, bad, is_hash;
	uint64_t seen[HASH_KEYS], val[HASH_KEYS];
};

static int sum_elem(void *arg, const void *key, const void *values, unsigned nr)
{
	struct sum *s = arg;
	uint64_t v, sum = 0, k;

	for (unsigned i = 0; i < nr; i++) {
		memcpy(&v, (const char *)values + i * 8, 8);
		sum += v;
	}
	s->total += sum;
	s->elems++;
	if (s->is_hash) { /* keys are u64 < HASH_KEYS, each at most once */
		memcpy(&k, key, 8);
		if (k >= HASH_KEYS || s->seen[k]++)
			s->bad++;
		else
			s->val[k] = sum;
	}
	return 0;
}

static void test_counter(struct run *r, uint32_t type)
{
	struct map_def def = {.type = type, .key_size = 4, .value_size = 8, .max_entries = 1};
	struct ptx_rt_map *m;
	CUmodule mod;
	struct err e = {{0}};
	struct sum s = {0};

	snprintf(def.name, sizeof(def.name), "counter");
	if (ptx_rt_map_create(r->rt, &def, &m, &e) || launch(r, GPU_PROG_COUNTER, m, &mod, &e) ||
	    finish(r, mod, &e) || ptx_rt_map_foreach(m, sum_elem, &s, &e)) {
		CHECK(0, "%s counter %s: %s", type == MAP_TYPE_ARRAY ? "array" : "per-SM array",
		      mode_name(r->mode), e.msg);
		return;
	}
	uint64_t want = (uint64_t)r->blocks * THREADS * r->iters;
	CHECK(s.total == want, "%s counter %s: total %llu, expected %llu",
	      type == MAP_TYPE_ARRAY ? "array" : "per-SM array", mode_name(r->mode),
	      (unsigned long long)s.total, (unsigned long long)want);
	ptx_rt_map_free(m);
}

static void test_hash(struct run *r, uint32_t max_entries)
{
	struct map_def def = {.type = MAP_TYPE_HASH, .key_size = 8, .value_size = 8,
			      .max_entries = max_entries};
	struct ptx_rt_map *m;
	CUmodule mod;
	struct err e = {{0}};
	struct sum *s = calloc(1, sizeof(*s));
	uint64_t count = 0;

	snprintf(def.name, sizeof(def.name), "hash");
	s->is_hash = 1;
	if (ptx_rt_map_create(r->rt, &def, &m, &e) || launch(r, GPU_PROG_HASH, m, &mod, &e) ||
	    finish(r, mod, &e) || ptx_rt_map_foreach(m, sum_elem, s, &e) ||
	    ptx_rt_map_count(m, &count, &e)) {
		CHECK(0, "hash %s: %s", mode_name(r->mode), e.msg);
		free(s);
		return;
	}
	/* Key k gets the updates of warps w with w % HASH_KEYS == k, each warp
	 * adding 32 lanes per iteration (in warp and in thread mode alike). */
	uint64_t warps = (uint64_t)r->blocks * THREADS / 32, per_warp = 32ull * r->iters;
	uint64_t keys = warps < HASH_KEYS ? warps : HASH_KEYS, wrong = 0;
	for (uint64_t k = 0; k < keys; k++) {
		uint64_t most = (warps / HASH_KEYS + (k < warps % HASH_KEYS)) * per_warp;
		if (max_entries >= keys ? s->val[k] != most : s->val[k] > most) {
			if (wrong++ < 8) /* enough to tell lost adds from lost keys */
				printf("  hash %s key %llu: expected %s%llu, got %llu%s\n",
				       mode_name(r->mode), (unsigned long long)k,
				       max_entries >= keys ? "" : "at most ",
				       (unsigned long long)most, (unsigned long long)s->val[k],
				       s->seen[k] ? "" : " (key absent)");
		}
	}
	if (max_entries >= keys)
		CHECK(s->total == warps * per_warp && s->elems == keys && !s->bad && !wrong &&
			      count == keys,
		      "hash %s, %u entries: total %llu (expected %llu), %llu keys (expected %llu), "
		      "count %llu, wrong key totals %llu, duplicate keys %llu", mode_name(r->mode),
		      max_entries, (unsigned long long)s->total,
		      (unsigned long long)(warps * per_warp), (unsigned long long)s->elems,
		      (unsigned long long)keys, (unsigned long long)count,
		      (unsigned long long)wrong, (unsigned long long)s->bad);
	else /* full: exactly max_entries keys, the others' updates refused */
		CHECK(s->elems == max_entries && count == max_entries && !s->bad && !wrong &&
			      s->total > 0,
		      "hash %s, full at %u entries: %llu keys stored, count %llu, total %llu, "
		      "key totals above their warps' %llu, duplicate keys %llu", mode_name(r->mode),
		      max_entries, (unsigned long long)s->elems, (unsigned long long)count,
		      (unsigned long long)s->total, (unsigned long long)wrong,
		      (unsigned long long)s->bad);
	ptx_rt_map_free(m);
	free(s);
}

struct ring_check {
	uint64_t records, bad, lanes, wrong_lanes;
	uint64_t want_lanes, nr_warps;
	uint64_t *per_warp;       /* records received per global warp id */
	uint64_t lane_hist[34];   /* wrong records by lane count (33: > 32) */
	struct gpu_ring_rec first_wrong[6];
};

static int ring_rec(void *arg, const void *data, size_t size)
{
	struct ring_check *c = arg;
	struct gpu_ring_rec rec;

	c->records++;
	if (size != sizeof(rec)) {
		c->bad++;
		return 0;
	}
	memcpy(&rec, data, sizeof(rec));
	if ((rec.warp ^ GPU_RING_MAGIC) != rec.check) {
		if (c->bad < 4)
			printf("  torn record: warp %llu lanes %llu check %llx\n",
			       (unsigned long long)rec.warp, (unsigned long long)rec.lanes,
			       (unsigned long long)rec.check);
		c->bad++;
		return 0;
	}
	if (rec.lanes != c->want_lanes) {
		if (c->wrong_lanes < 6)
			c->first_wrong[c->wrong_lanes] = rec;
		c->lane_hist[rec.lanes > 32 ? 33 : rec.lanes]++;
		c->wrong_lanes++;
	}
	if (rec.warp < c->nr_warps)
		c->per_warp[rec.warp]++;
	c->lanes += rec.lanes;
	return 0;
}

/* What a failed ring buffer check needs to be understood from the log. */
static void ring_diagnose(struct run *r, struct ptx_rt_map *m, const struct ring_check *c)
{
	struct ptx_devmap h;
	uint64_t want = invocations(r) / c->nr_warps, off = 0, shown = 0;

	if (r->rt->cu->memcpy_dtoh(&h, m->dev, sizeof(h)) == CUDA_SUCCESS)
		printf("  device header: prod %llu resv %llu cons_seen %llu, host cons %llu\n",
		       (unsigned long long)h.rb_prod, (unsigned long long)h.rb_resv,
		       (unsigned long long)h.rb_cons_seen, (unsigned long long)m->rb_cons);
	printf("  lanes in all records %llu (threads x iterations %llu)\n",
	       (unsigned long long)c->lanes,
	       (unsigned long long)((uint64_t)r->blocks * THREADS * r->iters));
	for (uint64_t i = 0; i < c->wrong_lanes && i < 6; i++)
		printf("  wrong record %llu: warp %llu, lanes %llu (expected %llu)\n",
		       (unsigned long long)i, (unsigned long long)c->first_wrong[i].warp,
		       (unsigned long long)c->first_wrong[i].lanes,
		       (unsigned long long)c->want_lanes);
	for (int l = 0; l < 34; l++)
		if (c->lane_hist[l])
			printf("  wrong records with %s%d lanes: %llu\n", l == 33 ? "> " : "",
			       l == 33 ? 32 : l, (unsigned long long)c->lane_hist[l]);
	for (uint64_t w = 0; w < c->nr_warps; w++) {
		if (c->per_warp[w] == want)
			continue;
		off++;
		if (shown++ < 6)
			printf("  warp %llu: %llu records (%llu invocations)\n", (unsigned long long)w,
			       (unsigned long long)c->per_warp[w], (unsigned long long)want);
	}
	printf("  warps with a record count other than their invocations: %llu of %llu"
	       " (expected only with drops)\n", (unsigned long long)off,
	       (unsigned long long)c->nr_warps);
}

static void test_ring(struct run *r, uint32_t size, int poll)
{
	struct map_def def = {.type = MAP_TYPE_RINGBUF, .max_entries = size};
	struct ptx_rt_map *m;
	CUmodule mod;
	struct err e = {{0}};
	struct ring_check c = {.want_lanes = r->mode == PTX_MODE_WARP ? 32 : 1};
	uint64_t drops = 0;

	c.nr_warps = (uint64_t)r->blocks * THREADS / 32;
	c.per_warp = calloc(c.nr_warps, sizeof(*c.per_warp));
	if (!c.per_warp) {
		CHECK(0, "ring buffer %s: out of memory", mode_name(r->mode));
		return;
	}
	snprintf(def.name, sizeof(def.name), "ring");
	if (ptx_rt_map_create(r->rt, &def, &m, &e) || launch(r, GPU_PROG_RINGBUF, m, &mod, &e)) {
		CHECK(0, "ring buffer %s: %s", mode_name(r->mode), e.msg);
		free(c.per_warp);
		return;
	}
	while (poll && r->rt->cu->stream_query(NULL) == CUDA_ERROR_NOT_READY)
		ptx_rt_ringbuf_poll(m, ring_rec, &c);
	if (finish(r, mod, &e) || ptx_rt_map_drops(m, &drops, PTX_RT_COMPLETE, &e)) {
		CHECK(0, "ring buffer %s: %s", mode_name(r->mode), e.msg);
		free(c.per_warp);
		return;
	}
	if (poll)
		ptx_rt_ringbuf_poll(m, ring_rec, &c);
	else
		while (ptx_rt_ringbuf_poll(m, ring_rec, &c) > 0)
			;
	uint64_t inv = invocations(r), cap = size / (sizeof(struct gpu_ring_rec) + 8);
	int ok = c.records + drops == inv && !c.bad && !c.wrong_lanes && (poll || c.records == cap);
	if (!ok)
		ring_diagnose(r, m, &c);
	CHECK(ok,
	      "ring buffer %s, %u bytes, %s: %llu records + %llu drops = %llu (expected %llu "
	      "invocations%s), torn %llu, wrong lane counts %llu",
	      mode_name(r->mode), size, poll ? "host polling during the kernel" : "never drained",
	      (unsigned long long)c.records, (unsigned long long)drops,
	      (unsigned long long)(c.records + drops), (unsigned long long)inv,
	      poll ? "" : ", records = capacity", (unsigned long long)c.bad,
	      (unsigned long long)c.wrong_lanes);
	ptx_rt_map_free(m);
	free(c.per_warp);
}

/* --ptx-out DIR: the modules this test loads, for ptxas without a GPU. */
static int write_modules(const char *dir)
{
	struct ptx_target t;
	struct map *fake[1] = {NULL};
	struct ptx_map_ref ref = {.map = 0x7000000000ull, .value = 0x7000000080ull};

	ptx_target_parse("sm_90", &t, NULL);
	for (int k = GPU_PROG_COUNTER; k <= GPU_PROG_RINGBUF; k++) {
		for (int mode = 0; mode < 2; mode++) {
			struct gpu_prog_buf pb;
			struct ptx_buf b = {0};
			struct err e = {{0}};
			char path[512];
			gpu_prog_build(k, HASH_KEYS, &pb);
			struct prog p = {.name = "contention", .insns = pb.insns,
					 .insn_cnt = pb.n, .maps = fake, .map_cnt = 1};
			if (gpu_module(&b, &t, &p, "gx_c", &ref, mode, &e)) {
				fprintf(stderr, "%s\n", e.msg);
				return 1;
			}
			char *text = ptx_buf_take(&b, NULL);
			snprintf(path, sizeof(path), "%s/contention-%d-%d.ptx", dir, k, mode);
			int err = !text || gpu_write_file(path, text);
			free(text);
			if (err)
				return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ptx_rt *rt;
	struct err e = {{0}};

	if (argc == 3 && !strcmp(argv[1], "--ptx-out"))
		return write_modules(argv[2]);
	if (ptx_rt_open(0, &rt, &e)) {
		printf("SKIP gpu_contention: %s\n", e.msg);
		return GPU_EXIT_SKIP;
	}
	printf("GPU: %s, sm_%d%d, %d SMs, driver %d\n", rt->name, rt->cc_major, rt->cc_minor,
	       rt->nr_sms, rt->cu->version);
	for (int mode = 0; mode < 2; mode++) {
		struct run r = {rt, 2u * (unsigned)rt->nr_sms, 16, mode};
		test_counter(&r, MAP_TYPE_ARRAY);
		test_counter(&r, MAP_TYPE_PERCPU_ARRAY);
		test_hash(&r, HASH_KEYS);
		test_hash(&r, HASH_KEYS / 2);
		r.iters = mode == PTX_MODE_WARP ? 16 : 2;
		test_ring(&r, 1u << 20, 1);
		test_ring(&r, 1u << 16, 0);
	}
	printf("gpu_contention: %s (%d failed)\n", failures ? "FAILED" : "all passed", failures);
	ptx_rt_close(rt);
	return failures ? 1 : 0;
}
