/* SPDX-License-Identifier: MIT */
/* Ring buffer semantics, one thread: records, discard, wrap-around, drops. */
#include "testutil.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/map.h"

enum { RING = 4096 };

static struct map *new_ring(uint32_t size)
{
	struct map_def def = {.type = MAP_TYPE_RINGBUF, .max_entries = size, .name = "rb"};
	struct map *m = NULL;
	struct err e;
	if (map_create(&def, &m, &e))
		fail_msg("map_create: %s", e.msg);
	return m;
}

struct seen {
	int n;
	size_t sizes[64];
	uint32_t first_word[64];
	int stop_after;
};

static int collect(void *arg, const void *data, size_t size)
{
	struct seen *s = arg;
	s->sizes[s->n] = size;
	s->first_word[s->n] = 0;
	memcpy(&s->first_word[s->n], data, size < 4 ? size : 4);
	s->n++;
	return s->stop_after && s->n >= s->stop_after;
}

static void test_reserve_submit_discard_output(void **state)
{
	struct map *m = new_ring(RING);
	struct seen s = {0};

	uint32_t *a = map_ringbuf_reserve(m, 12, 0);
	uint32_t *b = map_ringbuf_reserve(m, 4, 0);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal((uintptr_t)a % 8, 0);
	/* 12 bytes + 8 header, rounded to 24. */
	assert_ptr_equal((char *)b, (char *)a + 24);
	assert_int_equal(map_ringbuf_query(m, 0), 24 + 16);
	assert_int_equal(map_ringbuf_query(m, 1), RING);
	assert_int_equal(map_ringbuf_query(m, 3), 40);
	assert_null(map_ringbuf_reserve(m, 8, 1)); /* flags must be 0 */
	*b = 2;
	map_ringbuf_submit(b, 0);
	/* a is still busy: nothing is consumed past it. */
	assert_int_equal(map_ringbuf_consume(m, collect, &s), 0);
	*a = 1;
	map_ringbuf_discard(a, 0);
	assert_int_equal(map_ringbuf_consume(m, collect, &s), 1);
	assert_int_equal(s.first_word[0], 2);
	assert_int_equal(s.sizes[0], 4);
	assert_int_equal(map_ringbuf_query(m, 0), 0);
	assert_int_equal(map_ringbuf_query(m, 2), 40);
	uint64_t word = 0xabcdef;
	assert_int_equal(map_ringbuf_output(m, &word, 8, 0), 0);
	assert_int_equal(map_ringbuf_output(m, &word, 0, 0), 0); /* empty record */
	assert_int_equal(map_ringbuf_output(m, &word, 8, 4), -EINVAL);
	assert_int_equal(map_ringbuf_consume(m, collect, &s), 2);
	assert_int_equal(s.first_word[1], 0xabcdef);
	assert_int_equal(s.sizes[2], 0);
	assert_int_equal(map_ringbuf_dropped(m), 0);
	map_free(m);
}

static void test_too_large_and_full_drop(void **state)
{
	struct map *m = new_ring(RING);
	struct seen s = {0};
	char buf[RING] = {0};

	assert_null(map_ringbuf_reserve(m, RING, 0)); /* never fits */
	assert_null(map_ringbuf_reserve(m, 1ull << 40, 0));
	assert_int_equal(map_ringbuf_dropped(m), 2);
	assert_int_equal(map_ringbuf_output(m, buf, RING - 8, 0), 0); /* exactly fills */
	assert_int_equal(map_ringbuf_query(m, 0), RING);
	assert_int_equal(map_ringbuf_output(m, buf, 1, 0), -EAGAIN);
	assert_int_equal(map_ringbuf_dropped(m), 3);
	assert_int_equal(map_ringbuf_consume(m, collect, &s), 1);
	assert_int_equal(s.sizes[0], RING - 8);
	assert_int_equal(map_ringbuf_output(m, buf, 1, 0), 0);
	assert_int_equal(map_ringbuf_dropped(m), 3);
	map_free(m);
}

static void test_wrap_around_keeps_records_whole(void **state)
{
	struct map *m = new_ring(RING);
	struct seen s = {0};
	unsigned char rec[1000];
	uint32_t seq = 0, next = 0;

	/* 1000-byte records: every fourth one would straddle the end and is
	 * placed at the start after a padding record. */
	for (int round = 0; round < 40; round++) {
		for (int i = 0; i < 3; i++) {
			memset(rec, (unsigned char)seq, sizeof(rec));
			memcpy(rec, &seq, 4);
			assert_int_equal(map_ringbuf_output(m, rec, sizeof(rec), 0), 0);
			seq++;
		}
		s.n = 0;
		assert_int_equal(map_ringbuf_consume(m, collect, &s), 3);
		for (int i = 0; i < 3; i++) {
			assert_int_equal(s.sizes[i], 1000);
			assert_int_equal(s.first_word[i], next++);
		}
	}
	assert_true(map_ringbuf_query(m, 3) > 10 * RING); /* it wrapped many times */
	assert_int_equal(map_ringbuf_dropped(m), 0);
	map_free(m);
}

static void test_consumer_stop_and_errors(void **state)
{
	struct map *m = new_ring(RING);
	struct seen s = {.stop_after = 2};
	uint32_t v;

	for (v = 0; v < 5; v++)
		assert_int_equal(map_ringbuf_output(m, &v, 4, 0), 0);
	assert_int_equal(map_ringbuf_consume(m, collect, &s), 2);
	s.stop_after = 0;
	assert_int_equal(map_ringbuf_consume(m, collect, &s), 3);
	assert_int_equal(s.first_word[4], 4);
	/* Element operations do not apply to a ring buffer. */
	assert_null(map_lookup(m, &v));
	assert_int_equal(map_update(m, &v, &v, 0), -EINVAL);
	assert_int_equal(map_get_next_key(m, NULL, &v), -EINVAL);
	map_free(m);
}

/*
 * Random reserves (sizes 0..600), commits in random order (submit or
 * discard) with up to 6 records outstanding, and consumption at random
 * moments: the consumer gets exactly the submitted records, in reservation
 * order, whole, never past an uncommitted one; failed reserves are the
 * dropped count.
 */
struct model_rec {
	uint32_t seq, size;
};

struct model {
	struct model_rec want[20000];
	size_t nwant, next;
	int bad;
};

static int model_check(void *arg, const void *data, size_t size)
{
	struct model *m = arg;
	const unsigned char *b = data;

	if (m->next >= m->nwant || m->want[m->next].size != size) {
		m->bad++;
		return 0;
	}
	uint32_t seq = m->want[m->next++].seq;
	for (size_t i = 0; i < size; i++)
		if (b[i] != (unsigned char)(seq + i))
			m->bad++;
	return 0;
}

enum { MODEL_RECS = 20000, MODEL_OUT = 6 };

/* Records up to the first uncommitted one are consumable, in order. */
static void model_advance(struct model *m, const int8_t *decided, const uint32_t *size_of,
			  uint32_t seq, uint32_t *oldest)
{
	for (; *oldest < seq && decided[*oldest] >= 0; (*oldest)++)
		if (!decided[*oldest])
			m->want[m->nwant++] = (struct model_rec){*oldest, size_of[*oldest]};
}

static void test_random_commit_order_matches_a_model(void **state)
{
	static struct model m;
	static int8_t decided[MODEL_RECS]; /* -1 outstanding, 0 submitted, 1 discarded */
	static uint32_t size_of[MODEL_RECS];
	struct {
		unsigned char *rec;
		uint32_t seq;
	} out[MODEL_OUT];
	struct map *r = new_ring(RING);
	size_t nout = 0;
	uint64_t fails = 0, rnd = 7;
	uint32_t seq = 0, oldest = 0;

	memset(&m, 0, sizeof(m));
	memset(decided, -1, sizeof(decided));
	while (seq < MODEL_RECS - MODEL_OUT) {
		rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
		unsigned what = (unsigned)(rnd >> 40) % 4;
		if (what == 0 && nout < MODEL_OUT) {
			uint32_t size = (uint32_t)(rnd >> 20) % 601;
			unsigned char *rec = map_ringbuf_reserve(r, size, 0);
			if (!rec) {
				fails++;
				continue;
			}
			for (uint32_t i = 0; i < size; i++)
				rec[i] = (unsigned char)(seq + i);
			size_of[seq] = size;
			out[nout].rec = rec, out[nout++].seq = seq++;
		} else if (what == 1 && nout) {
			size_t i = (size_t)(rnd >> 12) % nout;
			int discard = (rnd >> 10) & 1;
			decided[out[i].seq] = (int8_t)discard;
			if (discard)
				map_ringbuf_discard(out[i].rec, 0);
			else
				map_ringbuf_submit(out[i].rec, 0);
			out[i] = out[--nout];
			model_advance(&m, decided, size_of, seq, &oldest);
		} else if (what >= 2) {
			map_ringbuf_consume(r, model_check, &m);
			assert_int_equal(m.bad, 0);
		}
	}
	while (nout) {
		decided[out[--nout].seq] = 0;
		map_ringbuf_submit(out[nout].rec, 0);
	}
	model_advance(&m, decided, size_of, seq, &oldest);
	map_ringbuf_consume(r, model_check, &m);
	assert_int_equal(m.bad, 0);
	assert_int_equal(m.next, m.nwant);
	assert_true(m.nwant > MODEL_RECS / 3);
	assert_int_equal(map_ringbuf_dropped(r), fails);
	assert_true(fails > 0); /* the buffer did fill up at times */
	assert_int_equal(map_ringbuf_query(r, 0), 0);
	map_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reserve_submit_discard_output),
		cmocka_unit_test(test_too_large_and_full_drop),
		cmocka_unit_test(test_wrap_around_keeps_records_whole),
		cmocka_unit_test(test_consumer_stop_and_errors),
		cmocka_unit_test(test_random_commit_order_matches_a_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
