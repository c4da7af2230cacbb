/* SPDX-License-Identifier: MIT */
/*
 * The device runtime's map algorithms (src/ptx/ptx_rt_dev.cu) compiled as C
 * for the CPU, with the CUDA atomics modelled by GCC's __atomic builtins,
 * and hammered by host threads: the hash (claims, duplicates, full, delete
 * and revive) and the ring buffer protocol against the real host consumer
 * (ptx_rt_ringbuf_poll) polling at the same time.  x86 orders memory more
 * strongly than a GPU, so this checks the algorithms' logic; the memory
 * ordering is checked on the GPU by tests/gpu/gpu_contention.c.
 */
#include "testutil.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/map.h"
#include "ptx/ptx_rt.h"

/* The CUDA surface ptx_rt_dev.cu uses. */
#define GX_RT_HOST_MODEL 1
#define RT
#define __device__
#define __noinline__
#define __forceinline__ inline
#define atomicAdd(p, v) __atomic_fetch_add((p), (v), __ATOMIC_SEQ_CST)
#define atomicSub(p, v) __atomic_fetch_sub((p), (v), __ATOMIC_SEQ_CST)
#define atomicExch(p, v) __atomic_exchange_n((p), (v), __ATOMIC_SEQ_CST)
/* The yield widens the window before a claim, as a warp's lanes executing
 * in lockstep do on the GPU, so that races around claims happen here too. */
#define atomicCAS(p, c, v)                                                           \
	({                                                                           \
		__typeof__(*(p)) e_ = (c);                                           \
		sched_yield();                                                       \
		__atomic_compare_exchange_n((p), &e_, (v), 0, __ATOMIC_SEQ_CST,      \
					    __ATOMIC_SEQ_CST);                       \
		e_;                                                                  \
	})
#define atomicMax(p, v)                                                              \
	({                                                                           \
		__typeof__(*(p)) o_ = __atomic_load_n((p), __ATOMIC_SEQ_CST);        \
		while (o_ < (v) && !__atomic_compare_exchange_n((p), &o_, (v), 0,    \
							       __ATOMIC_SEQ_CST,    \
							       __ATOMIC_SEQ_CST))   \
			;                                                            \
		o_;                                                                  \
	})
#define __threadfence() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define __threadfence_system() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define __nanosleep(n) sched_yield()
#define __popc(x) __builtin_popcount(x)
#define clock64() 0ll
struct model_dim3 {
	unsigned x, y, z;
};
static const struct model_dim3 threadIdx, blockIdx, blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
static unsigned rt_smid(void) { return 0; }
static unsigned rt_laneid(void) { return 0; }
static unsigned long long rt_globaltimer(void) { return 0; }
#define rt_ld_acquire_gpu(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define rt_ld_relaxed_gpu64(p) __atomic_load_n((const uint64_t *)(p), __ATOMIC_RELAXED)
#define rt_ld_acquire_gpu64(p) __atomic_load_n((const uint64_t *)(p), __ATOMIC_ACQUIRE)
#define rt_ld_relaxed_sys(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define rt_st_release_sys(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#include <sched.h>

#pragma GCC diagnostic ignored "-Wunused-function"
#include "../../src/ptx/ptx_rt_dev.cu"

enum { THREADS = 8, KEYS = 1024, CAP = 512 };

static struct ptx_devmap *hash_new(uint32_t max_entries)
{
	struct ptx_devmap *m = calloc(1, sizeof(*m));
	m->type = MAP_TYPE_HASH;
	m->key_size = 4;
	m->value_size = 8;
	m->key_stride = 8;
	m->value_stride = 8;
	m->max_entries = max_entries;
	m->nr_sms = 1; /* one value per key, as ptx_rt_map_create sets for a plain hash */
	m->nr_slots = 2;
	while (m->nr_slots < 2 * max_entries)
		m->nr_slots *= 2;
	m->slot_size = 8 + 8 + 8;
	m->data = (uint64_t)(uintptr_t)calloc(m->nr_slots, m->slot_size);
	return m;
}

static void *hash_worker(void *arg)
{
	struct ptx_devmap *m = arg;
	uint64_t zero = 0;
	/* every thread walks the keys from its own start */
	unsigned start = (unsigned)(uintptr_t)pthread_self() % KEYS;
	for (unsigned n = 0; n < KEYS; n++) {
		/* keys 8-byte aligned (the home-slot fast path) and not, in turn */
		_Alignas(8) uint32_t kb[3];
		uint32_t *k = &kb[n & 1];
		*k = (start + n * 7) % KEYS;
		kb[!(n & 1)] = ~0u; /* bytes after an aligned key: never read */
		uint64_t v = gx_rt_map_lookup((u64)m, (u64)k);
		if (!v) {
			gx_rt_map_update((u64)m, (u64)k, (u64)&zero, 1 /* NOEXIST */);
			v = gx_rt_map_lookup((u64)m, (u64)k);
		}
		if (v)
			__atomic_fetch_add((uint64_t *)v, 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

static void hash_check(struct ptx_devmap *m, uint64_t most, unsigned *live, uint64_t *total)
{
	unsigned char seen[KEYS] = {0};
	*live = 0;
	*total = 0;
	for (uint32_t s = 0; s < m->nr_slots; s++) {
		unsigned char *slot = (unsigned char *)(uintptr_t)m->data + s * m->slot_size;
		uint32_t state, key;
		uint64_t v;
		memcpy(&state, slot, 4);
		memcpy(&key, slot + 8, 4);
		memcpy(&v, slot + 16, 8);
		assert_true(state == PTX_SLOT_EMPTY || state == PTX_SLOT_LIVE ||
			    state == PTX_SLOT_DELETED);
		if (state == PTX_SLOT_EMPTY)
			continue;
		assert_true(key < KEYS);
		assert_int_equal(seen[key]++, 0); /* never two slots for one key */
		if (state == PTX_SLOT_LIVE) {
			(*live)++;
			*total += v;
			assert_true(v >= 1 && v <= most);
		}
	}
}

static void run_threads(void *(*fn)(void *), void *arg)
{
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, fn, arg), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
}

static void test_hash_concurrent_full(void **state)
{
	struct ptx_devmap *m = hash_new(CAP);
	unsigned live;
	uint64_t total;

	run_threads(hash_worker, m);
	hash_check(m, THREADS, &live, &total);
	assert_int_equal(live, CAP);      /* full: exactly max_entries keys */
	assert_int_equal(m->count, CAP);
	/* delete the even keys that are present, then everybody runs again */
	unsigned deleted = 0;
	for (uint32_t k = 0; k < KEYS; k += 2)
		deleted += gx_rt_map_delete((u64)m, (u64)&k) == 0;
	assert_int_equal(m->count, CAP - deleted);
	uint32_t k0 = 0;
	assert_int_equal((int64_t)gx_rt_map_delete((u64)m, (u64)&k0), -ENOENT);
	run_threads(hash_worker, m);
	hash_check(m, 2 * THREADS, &live, &total); /* survivors of the first run: twice */
	assert_int_equal(m->count, live);
	assert_true(live <= CAP);
	free((void *)(uintptr_t)m->data);
	free(m);
}

static void test_hash_concurrent_roomy(void **state)
{
	struct ptx_devmap *m = hash_new(KEYS);
	unsigned live;
	uint64_t total;

	run_threads(hash_worker, m);
	hash_check(m, THREADS, &live, &total);
	assert_int_equal(live, KEYS);
	assert_int_equal(total, (uint64_t)KEYS * THREADS); /* no update lost */
	uint32_t k = 5;
	uint64_t v = 1;
	assert_int_equal((int64_t)gx_rt_map_update((u64)m, (u64)&k, (u64)&v, 1), -EEXIST);
	k = KEYS + 1;
	assert_int_equal((int64_t)gx_rt_map_update((u64)m, (u64)&k, (u64)&v, 2), -ENOENT);
	assert_int_equal((int64_t)gx_rt_map_update((u64)m, (u64)&k, (u64)&v, 0), -E2BIG);
	free((void *)(uintptr_t)m->data);
	free(m);
}

/* Room for every key, every thread inserting the same few keys at once
 * (like the lanes of a warp in per-thread mode, all racing for one slot):
 * the losers of a slot must not hold capacity, or the last key's insert
 * fails as "full" and its updates are lost. */
enum { FEW_KEYS = 4, FEW_ROUNDS = 400 };

struct few_keys {
	struct ptx_devmap *m;
	pthread_barrier_t start;
};

static void *few_keys_worker(void *arg)
{
	struct few_keys *f = arg;
	uint64_t zero = 0;

	pthread_barrier_wait(&f->start);
	for (uint32_t k = 0; k < FEW_KEYS; k++) {
		uint64_t v = gx_rt_map_lookup((u64)f->m, (u64)&k);
		if (!v) {
			gx_rt_map_update((u64)f->m, (u64)&k, (u64)&zero, 1 /* NOEXIST */);
			v = gx_rt_map_lookup((u64)f->m, (u64)&k);
		}
		if (v)
			__atomic_fetch_add((uint64_t *)v, 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

static void test_hash_concurrent_same_key(void **state)
{
	struct few_keys f;
	unsigned live;
	uint64_t total;

	for (int round = 0; round < FEW_ROUNDS; round++) {
		f.m = hash_new(FEW_KEYS);
		pthread_barrier_init(&f.start, NULL, THREADS);
		run_threads(few_keys_worker, &f);
		pthread_barrier_destroy(&f.start);
		hash_check(f.m, THREADS, &live, &total);
		assert_int_equal(live, FEW_KEYS);
		assert_int_equal(f.m->count, FEW_KEYS);
		assert_int_equal(total, (uint64_t)FEW_KEYS * THREADS); /* no update lost */
		free((void *)(uintptr_t)f.m->data);
		free(f.m);
	}
}

/* Ring buffer: THREADS producers, the real consumer polling meanwhile. */
enum { RING = 1 << 14, PER_THREAD = 20000 };

struct ring_test {
	struct ptx_devmap dm;
	struct ptx_rt_map host;
	int done;
	size_t extra; /* bytes after struct rec in each record */
	uint64_t got, torn, order, last[THREADS];
	int next_id;
	uint64_t drops[PTX_RB_DROP_STRIDE / 8]; /* the one SM's drop counter */
};

/* A ring buffer of RING bytes in mem (4096 bytes of control, then data), the
 * device's and the host's view of it. */
static void ring_init(struct ring_test *t, unsigned char *mem)
{
	memset(mem, 0, 4096 + RING);
	t->dm.type = MAP_TYPE_RINGBUF;
	t->dm.rb_size = RING;
	t->dm.rb_ctrl = (uint64_t)(uintptr_t)mem;
	t->dm.rb_data = (uint64_t)(uintptr_t)(mem + 4096);
	t->dm.nr_sms = 1;
	t->dm.data = (uint64_t)(uintptr_t)t->drops;
	t->host.hdr = t->dm;
	t->host.rb_ctrl = (struct ptx_rb_ctrl *)mem;
	t->host.rb_data = mem + 4096;
}

struct rec {
	uint64_t producer, seq, check;
};

static void *producer(void *arg)
{
	struct ring_test *t = arg;
	uint64_t id = (uint64_t)__atomic_fetch_add(&t->next_id, 1, __ATOMIC_SEQ_CST);
	for (uint64_t s = 1; s <= PER_THREAD; s++) {
		struct rec r = {id, s, id * 1000003 ^ s};
		unsigned char buf[sizeof(r) + 64] = {0};
		memcpy(buf, &r, sizeof(r));
		if (s % 3) {
			gx_rt_ringbuf_output((u64)&t->dm, (u64)buf, sizeof(r) + t->extra, 0);
		} else { /* reserve + submit, and some discards */
			uint64_t p = gx_rt_ringbuf_reserve((u64)&t->dm, sizeof(r) + t->extra, 0);
			if (!p)
				continue;
			memcpy((void *)(uintptr_t)p, &r, sizeof(r));
			if (s % 7)
				gx_rt_ringbuf_submit(p, 0);
			else
				gx_rt_ringbuf_discard(p, 0);
		}
	}
	return NULL;
}

static int consume(void *arg, const void *data, size_t size)
{
	struct ring_test *t = arg;
	struct rec r;
	t->got++;
	if (size != sizeof(r) + t->extra) {
		t->torn++;
		return 0;
	}
	memcpy(&r, data, sizeof(r));
	if (r.producer >= THREADS || r.check != (r.producer * 1000003 ^ r.seq)) {
		t->torn++;
		return 0;
	}
	if (r.seq <= t->last[r.producer])
		t->order++; /* one producer's records arrive in its order */
	t->last[r.producer] = r.seq;
	return 0;
}

static void *consumer(void *arg)
{
	struct ring_test *t = arg;
	while (!__atomic_load_n(&t->done, __ATOMIC_ACQUIRE))
		ptx_rt_ringbuf_poll(&t->host, consume, t);
	ptx_rt_ringbuf_poll(&t->host, consume, t);
	return NULL;
}

static void ring_concurrent(size_t extra)
{
	struct ring_test *t = calloc(1, sizeof(*t));
	unsigned char *mem = aligned_alloc(4096, 4096 + RING);
	pthread_t c, p[THREADS];

	ring_init(t, mem);
	t->extra = extra;
	assert_int_equal(pthread_create(&c, NULL, consumer, t), 0);
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&p[i], NULL, producer, t), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(p[i], NULL);
	__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
	pthread_join(c, NULL);
	/* every call either landed or was counted as a drop; discards are not
	 * delivered (PER_THREAD/21 of them per producer when not dropped) */
	uint64_t calls = (uint64_t)THREADS * PER_THREAD;
	uint64_t discarded_max = (uint64_t)THREADS * (PER_THREAD / 21);
	assert_int_equal(t->torn, 0);
	assert_int_equal(t->order, 0);
	assert_true(t->got + t->drops[0] <= calls);
	assert_true(t->got + t->drops[0] + discarded_max >= calls);
	assert_true(t->dm.rb_resv == t->dm.rb_prod); /* every budget placed or given back */
	free(mem);
	free(t);
}

/* 32-byte records: they never cross the end of the buffer. */
static void test_ring_concurrent(void **state)
{
	ring_concurrent(0);
}

/* 48-byte records: some places cross the end and become padding. */
static void test_ring_concurrent_crossing(void **state)
{
	ring_concurrent(16);
}

/* Exact accounting without discards and without a consumer: a full ring
 * holds exactly size / record bytes, and every other call is a drop. */
static void *filler(void *arg)
{
	struct ring_test *t = arg;
	struct rec r = {0, 1, 0 * 1000003 ^ 1};
	for (int s = 0; s < 1000; s++)
		gx_rt_ringbuf_output((u64)&t->dm, (u64)&r, sizeof(r), 0);
	return NULL;
}

static void test_ring_exact_drops(void **state)
{
	struct ring_test *t = calloc(1, sizeof(*t));
	unsigned char *mem = aligned_alloc(4096, 4096 + RING);

	ring_init(t, mem);
	run_threads(filler, t);
	while (ptx_rt_ringbuf_poll(&t->host, consume, t) > 0)
		;
	assert_int_equal(t->got, RING / 32);
	assert_int_equal(t->got + t->drops[0], THREADS * 1000);
	assert_int_equal(t->torn, 0);
	free(mem);
	free(t);
}

/* The host's view: a device hash snapshot applied to a host map. */
static void test_snapshot_to_host_map(void **state)
{
	struct ptx_devmap *m = hash_new(64);
	struct map_def def = {.type = MAP_TYPE_HASH, .key_size = 4, .value_size = 8,
			      .max_entries = 64, .name = "h"};
	struct map *host;
	uint64_t v, got;

	assert_int_equal(map_create(&def, &host, NULL), 0);
	for (uint32_t k = 0; k < 40; k++) {
		v = 1000 + k;
		assert_int_equal(gx_rt_map_update((u64)m, (u64)&k, (u64)&v, 0), 0);
	}
	uint32_t gone = 7, stale = 99;
	v = 5;
	assert_int_equal(map_update(host, &stale, &v, MAP_ANY), 0); /* not on the device */
	assert_int_equal(gx_rt_map_delete((u64)m, (u64)&gone), 0);
	assert_int_equal(ptx_rt_snapshot_apply(m, (void *)(uintptr_t)m->data, host, NULL), 0);
	for (uint32_t k = 0; k < 40; k++) {
		if (k == gone) {
			assert_int_not_equal(map_lookup_copy(host, &k, &got), 0);
			continue;
		}
		assert_int_equal(map_lookup_copy(host, &k, &got), 0);
		assert_int_equal(got, 1000 + k);
	}
	assert_int_not_equal(map_lookup_copy(host, &stale, &got), 0);
	/* a definition that differs is refused */
	struct map_def other = def;
	struct map *bad;
	struct err e = {{0}};
	other.max_entries = 65;
	assert_int_equal(map_create(&other, &bad, NULL), 0);
	assert_true(ptx_rt_snapshot_apply(m, (void *)(uintptr_t)m->data, bad, &e) < 0);
	assert_non_null(strstr(e.msg, "definitions differ"));
	map_free(bad);
	map_free(host);
	free((void *)(uintptr_t)m->data);
	free(m);
}

/*
 * A per-SM array (3 SMs, 2 keys of 16 bytes): each SM's copy starts on its
 * own 128-byte line, the runtime on SM 0 (the model's %smid) sees copy 0,
 * and the host's per-CPU view sums to the sum over the SMs, whatever the
 * number of CPU slots (fewer than the SMs: SMs folded into a slot).
 */
static void test_per_sm_array_snapshot(void **state)
{
	enum { SMS = 3, KEYS = 2 };
	struct ptx_devmap m = {.type = MAP_TYPE_PERCPU_ARRAY, .key_size = 4, .value_size = 16,
			       .max_entries = KEYS, .value_stride = 16, .nr_sms = SMS,
			       .sm_stride = 128};
	uint64_t *data = calloc(SMS, 128);
	m.data = (uint64_t)(uintptr_t)data;
	for (uint32_t s = 0; s < SMS; s++)
		for (uint32_t k = 0; k < KEYS; k++) {
			data[s * 16 + k * 2] = 100 * (s + 1) + k;   /* word 0 */
			data[s * 16 + k * 2 + 1] = 1000 * (s + 1); /* word 1 */
		}
	uint32_t k1 = 1;
	assert_ptr_equal((void *)(uintptr_t)gx_rt_map_lookup((u64)&m, (u64)&k1), &data[2]);
	struct map_def def = {.type = MAP_TYPE_PERCPU_ARRAY, .key_size = 4, .value_size = 16,
			      .max_entries = KEYS, .name = "per_sm"};
	struct map *host;
	assert_int_equal(map_create(&def, &host, NULL), 0);
	unsigned cpus = map_nr_cpus(host);
	uint64_t *vals = calloc(cpus, 16);
	assert_int_equal(ptx_rt_snapshot_apply(&m, data, host, NULL), 0);
	for (uint32_t k = 0; k < KEYS; k++) {
		uint64_t w0 = 0, w1 = 0;
		assert_int_equal(map_lookup_copy(host, &k, vals), 0);
		for (unsigned c = 0; c < cpus; c++)
			w0 += vals[c * 2], w1 += vals[c * 2 + 1];
		assert_int_equal(w0, 600 + 3 * k);
		assert_int_equal(w1, 6000);
	}
	/* a plain host map cannot take per-SM values */
	struct map *plain;
	struct err e = {{0}};
	def.type = MAP_TYPE_ARRAY;
	assert_int_equal(map_create(&def, &plain, NULL), 0);
	assert_true(ptx_rt_snapshot_apply(&m, data, plain, &e) < 0);
	assert_non_null(strstr(e.msg, "per-CPU host map"));
	map_free(plain);
	map_free(host);
	free(vals);
	free(data);
}

/*
 * A per-SM hash (3 SMs; the model runs on SM 0): a new key gets the
 * caller's value on its SM and zero on the others, an update writes the
 * caller's SM's value only, and the host's per-CPU view sums the SMs.
 */
static void test_per_sm_hash(void **state)
{
	enum { SMS = 3, SLOTS = 8 };
	struct ptx_devmap m = {.type = MAP_TYPE_PERCPU_HASH, .key_size = 4, .value_size = 8,
			       .max_entries = 4, .value_stride = 8, .key_stride = 8,
			       .nr_sms = SMS, .nr_slots = SLOTS, .slot_size = 8 + 8 + SMS * 8};
	unsigned char *data = calloc(SLOTS, m.slot_size);
	m.data = (uint64_t)(uintptr_t)data;
	uint32_t k = 42;
	uint64_t v = 5, got[SMS];
	assert_int_equal(gx_rt_map_update((u64)&m, (u64)&k, (u64)&v, 0), 0);
	uint64_t *val = (uint64_t *)(uintptr_t)gx_rt_map_lookup((u64)&m, (u64)&k);
	assert_non_null(val);
	memcpy(got, val, sizeof(got)); /* SM 0's value, then SMs 1 and 2 */
	assert_int_equal(got[0], 5);
	assert_int_equal(got[1], 0);
	assert_int_equal(got[2], 0);
	val[2] = 7; /* what SM 2 added */
	v = 6;
	assert_int_equal(gx_rt_map_update((u64)&m, (u64)&k, (u64)&v, 0), 0);
	assert_int_equal(val[0], 6);
	assert_int_equal(val[2], 7);
	struct map_def def = {.type = MAP_TYPE_PERCPU_HASH, .key_size = 4, .value_size = 8,
			      .max_entries = 4, .name = "h"};
	struct map *host;
	assert_int_equal(map_create(&def, &host, NULL), 0);
	unsigned cpus = map_nr_cpus(host);
	uint64_t *vals = calloc(cpus, 8), sum = 0;
	assert_int_equal(ptx_rt_snapshot_apply(&m, data, host, NULL), 0);
	assert_int_equal(map_lookup_copy(host, &k, vals), 0);
	for (unsigned c = 0; c < cpus; c++)
		sum += vals[c];
	assert_int_equal(sum, 13);
	/* deleted and inserted again: a new element, the other SMs zero again */
	assert_int_equal(gx_rt_map_delete((u64)&m, (u64)&k), 0);
	v = 1;
	assert_int_equal(gx_rt_map_update((u64)&m, (u64)&k, (u64)&v, 0), 0);
	assert_int_equal(val[0], 1);
	assert_int_equal(val[2], 0);
	map_free(host);
	free(vals);
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash_concurrent_roomy),
		cmocka_unit_test(test_hash_concurrent_full),
		cmocka_unit_test(test_hash_concurrent_same_key),
		cmocka_unit_test(test_ring_concurrent),
		cmocka_unit_test(test_ring_concurrent_crossing),
		cmocka_unit_test(test_ring_exact_drops),
		cmocka_unit_test(test_snapshot_to_host_map),
		cmocka_unit_test(test_per_sm_array_snapshot),
		cmocka_unit_test(test_per_sm_hash),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
