/* SPDX-License-Identifier: MIT */
/*
 * Issue 2, "Must show" 6: 8 threads in each of 2 processes update the same
 * hash, array and ring buffer, whose storage lies in one MAP_SHARED mapping,
 * while a consumer in the parent drains the ring buffer.  Totals are exact:
 * no lost update, no lost, duplicated or torn event, and the dropped count
 * equals the failures the producers saw.
 *
 * The workers run in forked children and report through the shared mapping
 * and their exit status (no cmocka calls there).
 */
#include "testutil.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf/map.h"

enum {
	PROCS = 2,
	THREADS = 8,
	HOT_KEYS = 64,      /* shared hash keys every thread adds into */
	ADDS = 102400,      /* atomic adds per thread, hash and array each */
	INSERTS = 400,      /* distinct keys each thread inserts (half deleted again) */
	ARRAY_SLOTS = 16,
	EVENTS = 3200,      /* ring buffer records per thread */
	MAX_PAYLOAD = 48,   /* u64 words */
};

struct event {
	uint32_t proc, thread;
	uint64_t seq;
	uint32_t words;
	uint32_t pad;
	uint64_t payload[MAX_PAYLOAD];
	/* then the checksum, right after the last payload word used */
};

struct shared {
	_Alignas(64) _Atomic uint64_t failures;   /* checks that failed in workers */
	_Atomic uint64_t ring_full;               /* failed reserves the producers saw */
	_Atomic uint64_t produced;
	_Atomic int start;
	int retry;                                /* producers retry until a record fits */
	size_t hash_off, array_off, ring_off, total;
};

struct setup {
	struct shared *sh;
	struct map *hash, *array, *ring;
	struct map_def hdef, adef, rdef;
};

static uint64_t checksum(const struct event *ev)
{
	uint64_t h = 0xcbf29ce484222325ull ^ ev->seq ^ ((uint64_t)ev->proc << 40) ^ ev->thread;
	for (uint32_t i = 0; i < ev->words; i++)
		h = (h ^ ev->payload[i]) * 0x100000001b3ull;
	return h;
}

static size_t event_size(uint32_t words)
{
	return offsetof(struct event, payload) + (words + 1) * 8;
}

struct worker_arg {
	struct setup *s;
	uint32_t proc, thread;
};

static void check(struct shared *sh, int ok)
{
	if (!ok)
		atomic_fetch_add(&sh->failures, 1);
}

static uint64_t distinct_key(uint32_t proc, uint32_t thread, uint32_t j)
{
	return 1000000ull + proc * 100000ull + thread * 10000ull + j;
}

static void *worker(void *p)
{
	struct worker_arg *a = p;
	struct setup *s = a->s;
	struct shared *sh = s->sh;
	struct event ev;

	while (!atomic_load(&sh->start))
		sched_yield();
	for (uint32_t i = 0; i < ADDS; i++) {
		uint64_t k = i % HOT_KEYS;
		uint64_t *v = map_lookup(s->hash, &k);
		check(sh, v != NULL);
		if (v)
			__atomic_fetch_add(v, 1, __ATOMIC_RELAXED);
		uint32_t idx = i % ARRAY_SLOTS;
		uint64_t *slot = map_lookup(s->array, &idx);
		__atomic_fetch_add(slot, 1, __ATOMIC_RELAXED);
		/* Churn the hash: insert distinct keys, delete half, replace the rest. */
		if (i % (ADDS / INSERTS) == 0) {
			uint32_t j = i / (ADDS / INSERTS);
			uint64_t dk = distinct_key(a->proc, a->thread, j), dv = dk * 3;
			check(sh, map_update(s->hash, &dk, &dv, MAP_NOEXIST) == 0);
			if (j % 2) {
				uint64_t prev = distinct_key(a->proc, a->thread, j - 1);
				check(sh, map_delete(s->hash, &prev) == 0);
				check(sh, map_update(s->hash, &dk, &dv, MAP_EXIST) == 0);
			}
		}
		if (i % (ADDS / EVENTS) == 0) {
			uint64_t seq = i / (ADDS / EVENTS);
			memset(&ev, 0, sizeof(ev));
			ev.proc = a->proc, ev.thread = a->thread, ev.seq = seq;
			ev.words = (uint32_t)(seq * 7 + a->thread) % MAX_PAYLOAD;
			for (uint32_t w = 0; w < ev.words; w++)
				ev.payload[w] = seq * 1000003 + w * 31 + a->proc;
			ev.payload[ev.words] = checksum(&ev);
			/* Alternate the two producer paths: output, and reserve+submit. */
			for (;;) {
				int ok;
				if (seq % 2) {
					ok = map_ringbuf_output(s->ring, &ev, event_size(ev.words), 0) == 0;
				} else {
					void *rec = map_ringbuf_reserve(s->ring, event_size(ev.words), 0);
					if ((ok = rec != NULL)) {
						memcpy(rec, &ev, event_size(ev.words));
						map_ringbuf_submit(rec, 0);
					}
				}
				if (ok) {
					atomic_fetch_add(&sh->produced, 1);
					break;
				}
				atomic_fetch_add(&sh->ring_full, 1);
				if (!sh->retry)
					break;
				sched_yield();
			}
		}
	}
	return NULL;
}

static int run_process(struct setup *s, uint32_t proc)
{
	pthread_t th[THREADS];
	struct worker_arg args[THREADS];

	for (uint32_t t = 0; t < THREADS; t++) {
		args[t] = (struct worker_arg){s, proc, t};
		if (pthread_create(&th[t], NULL, worker, &args[t]))
			return 1;
	}
	for (uint32_t t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	return 0;
}

struct consumer {
	struct setup *s;
	uint64_t next_seq[PROCS][THREADS];
	uint64_t consumed, bad;
	_Atomic int stop;
	int slow; /* pause between batches, so that producers must drop */
};

static int consume_one(void *arg, const void *data, size_t size)
{
	struct consumer *c = arg;
	struct event ev;

	memset(&ev, 0, sizeof(ev));
	if (size < event_size(0) || size > sizeof(ev)) {
		c->bad++;
		return 0;
	}
	memcpy(&ev, data, size);
	if (ev.proc >= PROCS || ev.thread >= THREADS || ev.words >= MAX_PAYLOAD ||
	    size != event_size(ev.words) || ev.payload[ev.words] != checksum(&ev)) {
		c->bad++;
		return 0;
	}
	/* One producer's records arrive in its order; with retries, with no gap. */
	uint64_t *next = &c->next_seq[ev.proc][ev.thread];
	if (ev.seq < *next || (c->s->sh->retry && ev.seq != *next))
		c->bad++;
	*next = ev.seq + 1;
	c->consumed++;
	return 0;
}

static void *consumer_main(void *p)
{
	struct consumer *c = p;

	while (!atomic_load(&c->stop)) {
		if (map_ringbuf_consume(c->s->ring, consume_one, c) == 0)
			sched_yield();
		if (c->slow)
			usleep(1000);
	}
	while (map_ringbuf_consume(c->s->ring, consume_one, c) > 0)
		;
	return NULL;
}

static void setup_shared(struct setup *s, uint32_t ring_size, int retry)
{
	struct err e;

	s->hdef = (struct map_def){.type = MAP_TYPE_HASH, .key_size = 8, .value_size = 8,
				   .max_entries = HOT_KEYS + PROCS * THREADS * INSERTS, .name = "h"};
	s->adef = (struct map_def){.type = MAP_TYPE_ARRAY, .key_size = 4, .value_size = 8,
				   .max_entries = ARRAY_SLOTS, .name = "a"};
	s->rdef = (struct map_def){.type = MAP_TYPE_RINGBUF, .max_entries = ring_size, .name = "r"};
	size_t off = 4096;
	size_t hsz = map_storage_size(&s->hdef), asz = map_storage_size(&s->adef),
	       rsz = map_storage_size(&s->rdef);
	size_t total = off + hsz + asz + rsz + 256;
	unsigned char *mem = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				  -1, 0);
	assert_true(mem != MAP_FAILED);
	s->sh = (struct shared *)mem;
	s->sh->retry = retry;
	s->sh->total = total;
	s->sh->hash_off = off;
	s->sh->array_off = (off + hsz + 63) & ~(size_t)63;
	s->sh->ring_off = (s->sh->array_off + asz + 63) & ~(size_t)63;
	assert_int_equal(map_open_storage(&s->hdef, mem + s->sh->hash_off, 1, &s->hash, &e), 0);
	assert_int_equal(map_open_storage(&s->adef, mem + s->sh->array_off, 1, &s->array, &e), 0);
	assert_int_equal(map_open_storage(&s->rdef, mem + s->sh->ring_off, 1, &s->ring, &e), 0);
	for (uint64_t k = 0; k < HOT_KEYS; k++) {
		uint64_t zero = 0;
		assert_int_equal(map_update(s->hash, &k, &zero, MAP_NOEXIST), 0);
	}
}

/* Each child opens the storage again, as a separate process would. */
static int child_main(struct setup *parent, uint32_t proc)
{
	struct setup s = *parent;
	unsigned char *mem = (unsigned char *)parent->sh;

	if (map_open_storage(&s.hdef, mem + s.sh->hash_off, 0, &s.hash, NULL) ||
	    map_open_storage(&s.adef, mem + s.sh->array_off, 0, &s.array, NULL) ||
	    map_open_storage(&s.rdef, mem + s.sh->ring_off, 0, &s.ring, NULL))
		return 3;
	return run_process(&s, proc);
}

static void run_all(struct setup *s, struct consumer *c, int slow_consumer)
{
	pid_t pids[PROCS];
	pthread_t ct;

	memset(c, 0, sizeof(*c));
	c->s = s;
	c->slow = slow_consumer;
	for (uint32_t p = 0; p < PROCS; p++) {
		pids[p] = fork();
		assert_true(pids[p] >= 0);
		if (pids[p] == 0)
			_exit(child_main(s, p));
	}
	assert_int_equal(pthread_create(&ct, NULL, consumer_main, c), 0);
	atomic_store(&s->sh->start, 1);
	for (uint32_t p = 0; p < PROCS; p++) {
		int st;
		assert_int_equal(waitpid(pids[p], &st, 0), pids[p]);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
	}
	atomic_store(&c->stop, 1);
	pthread_join(ct, NULL);
	assert_int_equal(atomic_load(&s->sh->failures), 0);
}

static void teardown_shared(struct setup *s)
{
	map_free(s->hash);
	map_free(s->array);
	map_free(s->ring);
	munmap(s->sh, s->sh->total);
}

static void test_two_processes_exact_totals(void **state)
{
	struct setup s;
	struct consumer c;

	setup_shared(&s, 1 << 16, 1);
	run_all(&s, &c, 0);

	/* Hash: every atomic add landed. */
	for (uint64_t k = 0; k < HOT_KEYS; k++) {
		uint64_t v;
		assert_int_equal(map_lookup_copy(s.hash, &k, &v), 0);
		assert_int_equal(v, (uint64_t)PROCS * THREADS * ADDS / HOT_KEYS);
	}
	/* Hash: exactly the odd distinct keys survive, with their values. */
	uint64_t k, next;
	size_t keys = 0;
	for (int r = map_get_next_key(s.hash, NULL, &next); !r;
	     r = map_get_next_key(s.hash, &k, &next)) {
		k = next;
		keys++;
		if (k < HOT_KEYS)
			continue;
		uint64_t v;
		assert_int_equal(map_lookup_copy(s.hash, &k, &v), 0);
		assert_int_equal(v, k * 3);
		assert_int_equal((k - 1000000) % 2, 1);
	}
	assert_int_equal(keys, HOT_KEYS + PROCS * THREADS * INSERTS / 2);
	/* Array: every atomic add landed. */
	for (uint32_t i = 0; i < ARRAY_SLOTS; i++)
		assert_int_equal(*(uint64_t *)map_lookup(s.array, &i),
				 (uint64_t)PROCS * THREADS * ADDS / ARRAY_SLOTS);
	/* Ring: every event exactly once, whole, in each producer's order. */
	assert_int_equal(c.bad, 0);
	assert_int_equal(c.consumed, (uint64_t)PROCS * THREADS * EVENTS);
	for (uint32_t p = 0; p < PROCS; p++)
		for (uint32_t t = 0; t < THREADS; t++)
			assert_int_equal(c.next_seq[p][t], EVENTS);
	assert_int_equal(map_ringbuf_dropped(s.ring), atomic_load(&s.sh->ring_full));
	assert_int_equal(map_ringbuf_query(s.ring, 0), 0);
	teardown_shared(&s);
}

static void test_small_ring_counts_drops_exactly(void **state)
{
	struct setup s;
	struct consumer c;

	setup_shared(&s, 4096, 0);
	run_all(&s, &c, 1);
	uint64_t dropped = map_ringbuf_dropped(s.ring);
	assert_int_equal(c.bad, 0);
	assert_int_equal(c.consumed, atomic_load(&s.sh->produced));
	assert_int_equal(dropped, atomic_load(&s.sh->ring_full));
	assert_int_equal(c.consumed + dropped, (uint64_t)PROCS * THREADS * EVENTS);
	print_message("small ring: %llu consumed, %llu dropped\n", (unsigned long long)c.consumed,
		      (unsigned long long)dropped);
	assert_true(dropped > 0); /* the buffer really was too small */
	teardown_shared(&s);
}

/*
 * LRU eviction under contention: 16 threads insert from a key space 8 times
 * the map's size, so nearly every insert evicts.  Every value read through
 * the locked user-side copy belongs to its key, the map never holds more
 * than max_entries plus one in-flight insert per thread, and nothing hangs.
 */
enum { LRU_MAX = 128, LRU_THREADS = 16, LRU_OPS = 20000 };

static void *lru_worker(void *p)
{
	struct map *m = ((void **)p)[0];
	_Atomic uint64_t *bad = ((void **)p)[1];
	uint64_t seed = (uintptr_t)&seed;

	for (int i = 0; i < LRU_OPS; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t k = (seed >> 33) % (8 * LRU_MAX), v[2] = {k * 3, ~k}, got[2];
		if (map_lookup(m, &k) && map_lookup_copy(m, &k, got) == 0 &&
		    (got[0] != k * 3 || got[1] != ~k))
			atomic_fetch_add(bad, 1);
		if (map_update(m, &k, v, MAP_ANY))
			atomic_fetch_add(bad, 1);
	}
	return NULL;
}

static void test_lru_eviction_under_contention(void **state)
{
	struct map_def def = {.type = MAP_TYPE_LRU_HASH, .key_size = 8, .value_size = 16,
			      .max_entries = LRU_MAX, .name = "lru"};
	_Atomic uint64_t bad = 0;
	pthread_t th[LRU_THREADS];
	struct map *m;

	assert_int_equal(map_create(&def, &m, NULL), 0);
	void *arg[2] = {m, (void *)&bad};
	for (int t = 0; t < LRU_THREADS; t++)
		assert_int_equal(pthread_create(&th[t], NULL, lru_worker, arg), 0);
	for (int t = 0; t < LRU_THREADS; t++)
		pthread_join(th[t], NULL);
	assert_int_equal(atomic_load(&bad), 0);
	uint64_t k, next, got[2];
	int n = 0;
	for (int r = map_get_next_key(m, NULL, &next); !r; r = map_get_next_key(m, &k, &next)) {
		k = next;
		assert_int_equal(map_lookup_copy(m, &k, got), 0);
		assert_int_equal(got[0], k * 3);
		n++;
	}
	assert_true(n >= LRU_MAX / 2);
	assert_true(n <= LRU_MAX + LRU_THREADS);
	map_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_processes_exact_totals),
		cmocka_unit_test(test_small_ring_counts_drops_exactly),
		cmocka_unit_test(test_lru_eviction_under_contention),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
