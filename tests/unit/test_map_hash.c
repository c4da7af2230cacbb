/* SPDX-License-Identifier: MIT */
/* Hash, per-CPU hash and LRU hash maps: semantics, one thread. */
#include "testutil.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/map.h"

static struct map *new_map(uint32_t type, uint32_t key, uint32_t value, uint32_t max)
{
	struct map_def def = {.type = type, .key_size = key, .value_size = value,
			      .max_entries = max, .name = "h"};
	struct map *m = NULL;
	struct err e;
	if (map_create(&def, &m, &e))
		fail_msg("map_create: %s", e.msg);
	return m;
}

static void test_hash_update_flags_and_delete(void **state)
{
	struct map *m = new_map(MAP_TYPE_HASH, 8, 16, 4);
	uint64_t k = 0x1234567890ull, v[2] = {1, 2}, out[2];

	assert_null(map_lookup(m, &k));
	assert_int_equal(map_update(m, &k, v, MAP_EXIST), -ENOENT);
	assert_int_equal(map_update(m, &k, v, MAP_NOEXIST), 0);
	assert_int_equal(map_update(m, &k, v, MAP_NOEXIST), -EEXIST);
	uint64_t *p = map_lookup(m, &k);
	assert_non_null(p);
	assert_int_equal((uintptr_t)p % 8, 0);
	assert_int_equal(p[1], 2);
	v[1] = 3;
	assert_int_equal(map_update(m, &k, v, MAP_EXIST), 0);
	assert_int_equal(((uint64_t *)map_lookup(m, &k))[1], 3);
	/* The old value stays readable after replacement (preallocated semantics). */
	assert_int_equal(p[1], 2);
	assert_int_equal(map_lookup_copy(m, &k, out), 0);
	assert_int_equal(out[1], 3);
	assert_int_equal(map_update(m, &k, v, 4), -EINVAL);
	assert_int_equal(map_delete(m, &k), 0);
	assert_int_equal(map_delete(m, &k), -ENOENT);
	assert_null(map_lookup(m, &k));
	assert_int_equal(map_lookup_copy(m, &k, out), -ENOENT);
	map_free(m);
}

static void test_hash_full_is_e2big(void **state)
{
	struct map *m = new_map(MAP_TYPE_HASH, 4, 4, 100);
	uint32_t k, v;

	for (k = 0; k < 100; k++) {
		v = k * 3;
		assert_int_equal(map_update(m, &k, &v, MAP_ANY), 0);
	}
	k = 100;
	assert_int_equal(map_update(m, &k, &v, MAP_ANY), -E2BIG);
	/* Replacing existing keys still works when full, many times over. */
	for (int round = 0; round < 5; round++)
		for (k = 0; k < 100; k++) {
			v = k + round;
			assert_int_equal(map_update(m, &k, &v, MAP_EXIST), 0);
		}
	for (k = 0; k < 100; k++)
		assert_int_equal(*(uint32_t *)map_lookup(m, &k), k + 4);
	k = 7;
	assert_int_equal(map_delete(m, &k), 0);
	k = 100;
	assert_int_equal(map_update(m, &k, &v, MAP_ANY), 0);
	k = 101;
	assert_int_equal(map_update(m, &k, &v, MAP_ANY), -E2BIG);
	map_free(m);
}

static void test_hash_iteration_visits_each_key_once(void **state)
{
	enum { N = 1000 };
	struct map *m = new_map(MAP_TYPE_HASH, 12, 4, N);
	unsigned char seen[N] = {0};
	uint32_t k[3] = {0}, next[3], v = 1;
	int n = 0;

	/* Odd key size: keys are not a multiple of 8 bytes. */
	for (uint32_t i = 0; i < N; i++) {
		k[0] = i, k[1] = ~i, k[2] = i * 7919;
		assert_int_equal(map_update(m, k, &v, MAP_NOEXIST), 0);
	}
	k[0] = 5000;  /* absent key: start from the first */
	assert_int_equal(map_get_next_key(m, NULL, next), 0);
	assert_int_equal(map_get_next_key(m, k, k), 0);
	assert_memory_equal(k, next, sizeof(k));
	do {
		assert_true(next[0] < N);
		assert_int_equal(next[1], ~next[0]);
		assert_int_equal(seen[next[0]]++, 0);
		memcpy(k, next, sizeof(k));
		n++;
	} while (map_get_next_key(m, k, next) == 0);
	assert_int_equal(n, N);
	/* Delete every other key while iterating: the rest is still complete. */
	for (uint32_t i = 0; i < N; i += 2) {
		k[0] = i, k[1] = ~i, k[2] = i * 7919;
		assert_int_equal(map_delete(m, k), 0);
	}
	n = 0;
	for (int r = map_get_next_key(m, NULL, next); !r; r = map_get_next_key(m, k, next)) {
		assert_int_equal(next[0] % 2, 1);
		memcpy(k, next, sizeof(k));
		n++;
	}
	assert_int_equal(n, N / 2);
	map_free(m);
}

static void test_percpu_hash_slots(void **state)
{
	struct map *m = new_map(MAP_TYPE_PERCPU_HASH, 4, 8, 8);
	unsigned n = map_nr_cpus(m);
	uint64_t *all = calloc(n, 8);
	uint32_t k = 9;
	uint64_t v = 5;

	assert_int_equal(map_update(m, &k, &v, MAP_ANY), 0);
	assert_int_equal(map_lookup_copy(m, &k, all), 0);
	uint64_t sum = 0;
	for (unsigned c = 0; c < n; c++)
		sum += all[c];
	assert_int_equal(sum, 5); /* the other CPUs' slots are zero */
	for (unsigned c = 0; c < n; c++)
		all[c] = c + 1;
	assert_int_equal(map_update_all_cpus(m, &k, all, MAP_EXIST), 0);
	memset(all, 0, n * 8);
	assert_int_equal(map_lookup_copy(m, &k, all), 0);
	for (unsigned c = 0; c < n; c++)
		assert_int_equal(all[c], c + 1);
	uint64_t *mine = map_lookup(m, &k);
	assert_true(*mine >= 1 && *mine <= n);
	free(all);
	map_free(m);
}

static void test_lru_evicts_cold_keys(void **state)
{
	enum { MAX = 16 };
	struct map *m = new_map(MAP_TYPE_LRU_HASH, 4, 4, MAX);
	uint32_t k, v = 1;
	int hot_alive = 0, cold_alive = 0, total = 0;

	for (k = 0; k < MAX; k++)
		assert_int_equal(map_update(m, &k, &v, MAP_ANY), 0);
	/* Keys 0..3 are used before every insert; 200 new keys come in. */
	for (k = 1000; k < 1200; k++) {
		for (uint32_t h = 0; h < 4; h++)
			assert_non_null(map_lookup(m, &h));
		assert_int_equal(map_update(m, &k, &v, MAP_ANY), 0);
		assert_non_null(map_lookup(m, &k));
	}
	for (uint32_t h = 0; h < 4; h++)
		hot_alive += map_lookup_copy(m, &h, &v) == 0;
	for (k = 4; k < MAX; k++)
		cold_alive += map_lookup_copy(m, &k, &v) == 0;
	uint32_t next;
	for (int r = map_get_next_key(m, NULL, &next); !r; r = map_get_next_key(m, &k, &next))
		k = next, total++;
	assert_int_equal(hot_alive, 4);
	assert_int_equal(cold_alive, 0);
	assert_true(total <= MAX);
	assert_true(total >= MAX - 2);
	map_free(m);
}

/*
 * 200,000 random updates (all three flags), deletes and lookups on a small
 * hash map, checked one by one against a plain array model: return codes,
 * values, the full-map limit, and at the end the key set by iteration.
 */
static void test_hash_matches_a_model(void **state)
{
	enum { MAX = 64, KEYS = 200, OPS = 200000 };
	struct map *m = new_map(MAP_TYPE_HASH, 4, 8, MAX);
	uint64_t model[KEYS];
	unsigned char present[KEYS] = {0};
	unsigned count = 0;
	uint64_t seed = 42;

	for (int i = 0; i < OPS; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t k = (uint32_t)(seed >> 33) % KEYS, op = (uint32_t)(seed >> 20) % 5;
		uint64_t v = seed, got;
		if (op <= 2) { /* update with MAP_ANY, MAP_NOEXIST, MAP_EXIST */
			int want = op == MAP_NOEXIST && present[k] ? -EEXIST
				   : op == MAP_EXIST && !present[k]  ? -ENOENT
				   : !present[k] && count == MAX      ? -E2BIG
								      : 0;
			assert_int_equal(map_update(m, &k, &v, op), want);
			if (!want) {
				count += !present[k];
				present[k] = 1, model[k] = v;
			}
		} else if (op == 3) {
			assert_int_equal(map_delete(m, &k), present[k] ? 0 : -ENOENT);
			count -= present[k];
			present[k] = 0;
		} else {
			uint64_t *p = map_lookup(m, &k);
			assert_int_equal(p != NULL, present[k]);
			if (p)
				assert_int_equal(*p, model[k]);
			assert_int_equal(map_lookup_copy(m, &k, &got), present[k] ? 0 : -ENOENT);
		}
	}
	unsigned seen = 0;
	uint32_t k, next;
	for (int r = map_get_next_key(m, NULL, &next); !r; r = map_get_next_key(m, &k, &next)) {
		assert_true(next < KEYS && present[next]);
		k = next;
		seen++;
	}
	assert_int_equal(seen, count);
	map_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash_update_flags_and_delete),
		cmocka_unit_test(test_hash_full_is_e2big),
		cmocka_unit_test(test_hash_iteration_visits_each_key_once),
		cmocka_unit_test(test_percpu_hash_slots),
		cmocka_unit_test(test_lru_evicts_cold_keys),
		cmocka_unit_test(test_hash_matches_a_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
