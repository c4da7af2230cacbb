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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reserve_submit_discard_output),
		cmocka_unit_test(test_too_large_and_full_drop),
		cmocka_unit_test(test_wrap_around_keeps_records_whole),
		cmocka_unit_test(test_consumer_stop_and_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
