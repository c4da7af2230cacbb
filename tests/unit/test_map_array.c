/* SPDX-License-Identifier: MIT */
/* Array and per-CPU array maps; definition checks and shared storage. */
#include "testutil.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/map.h"

static struct map *new_map(uint32_t type, uint32_t key, uint32_t value, uint32_t max)
{
	struct map_def def = {.type = type, .key_size = key, .value_size = value,
			      .max_entries = max, .name = "m"};
	struct map *m = NULL;
	struct err e;
	int err = map_create(&def, &m, &e);
	if (err)
		fail_msg("map_create: %s", e.msg);
	return m;
}

static void test_def_errors_name_the_problem(void **state)
{
	struct map_def def = {.type = MAP_TYPE_ARRAY, .key_size = 8, .value_size = 4,
			      .max_entries = 4, .name = "counts"};
	struct map *m = (struct map *)1;
	struct err e;

	assert_int_equal(map_create(&def, &m, &e), -EINVAL);
	assert_null(m);
	assert_string_equal(e.msg, "map 'counts': array key_size must be 4, not 8");
	def.key_size = 4, def.max_entries = 0;
	assert_int_equal(map_def_check(&def, &e), -EINVAL);
	assert_string_equal(e.msg, "map 'counts': max_entries is 0");
	def.max_entries = 1, def.type = 99;
	assert_int_equal(map_def_check(&def, &e), -EINVAL);
	assert_string_equal(e.msg, "map 'counts': unsupported map type 99");
	def.type = MAP_TYPE_RINGBUF, def.key_size = 0, def.value_size = 0, def.max_entries = 5000;
	assert_int_equal(map_def_check(&def, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "must be a power of 2"));
	def.type = MAP_TYPE_HASH, def.key_size = 4, def.value_size = 0, def.max_entries = 1;
	assert_int_equal(map_def_check(&def, &e), -EINVAL);
	assert_string_equal(e.msg, "map 'counts': value_size is 0");
	def.value_size = 1u << 30;
	assert_int_equal(map_def_check(&def, &e), -E2BIG);
	assert_int_equal(map_storage_size(&def), 0);
	def.value_size = 8, def.flags = 1u << 20;
	assert_int_equal(map_def_check(&def, &e), -EINVAL);
	assert_string_equal(e.msg, "map 'counts': unsupported flags 0x100000");
}

static void test_array_update_lookup_flags(void **state)
{
	struct map *m = new_map(MAP_TYPE_ARRAY, 4, 12, 4);
	uint32_t k = 2, v[3] = {1, 2, 3}, out[3];

	uint32_t *p = map_lookup(m, &k);
	assert_non_null(p);
	assert_int_equal(p[0], 0); /* zero-initialised */
	assert_int_equal((uintptr_t)p % 8, 0);
	assert_int_equal(map_update(m, &k, v, MAP_ANY), 0);
	assert_memory_equal(p, v, sizeof(v));
	assert_int_equal(map_update(m, &k, v, MAP_NOEXIST), -EEXIST);
	assert_int_equal(map_update(m, &k, v, MAP_EXIST), 0);
	assert_int_equal(map_update(m, &k, v, 7), -EINVAL);
	k = 4;
	assert_null(map_lookup(m, &k));
	assert_int_equal(map_update(m, &k, v, MAP_ANY), -E2BIG);
	assert_int_equal(map_lookup_copy(m, &k, out), -ENOENT);
	k = 2;
	assert_int_equal(map_lookup_copy(m, &k, out), 0);
	assert_memory_equal(out, v, sizeof(v));
	assert_int_equal(map_delete(m, &k), -EINVAL);
	/* Elements are 8-byte strided: index 3 is 16 bytes after index 2. */
	k = 3;
	assert_ptr_equal(map_lookup(m, &k), (char *)p + 16);
	assert_ptr_equal(map_array_base(m), (char *)p - 32);
	map_free(m);
}

static void test_array_iteration(void **state)
{
	struct map *m = new_map(MAP_TYPE_ARRAY, 4, 4, 5);
	uint32_t k, next, seen = 0;
	int n = 0;

	assert_int_equal(map_get_next_key(m, NULL, &next), 0);
	do {
		assert_int_equal(next, seen++);
		k = next;
		n++;
	} while (map_get_next_key(m, &k, &next) == 0);
	assert_int_equal(n, 5);
	k = 99; /* out of range: restart */
	assert_int_equal(map_get_next_key(m, &k, &next), 0);
	assert_int_equal(next, 0);
	map_free(m);
}

static void test_percpu_array_slots(void **state)
{
	struct map *m = new_map(MAP_TYPE_PERCPU_ARRAY, 4, 4, 2);
	unsigned n = map_nr_cpus(m);
	uint64_t *all = calloc(n, 8), *back = calloc(n, 8);
	uint32_t k = 1, v = 42;

	assert_true(n >= 1);
	/* The program side writes the calling CPU's slot only. */
	assert_int_equal(map_update(m, &k, &v, MAP_ANY), 0);
	uint32_t *mine = map_lookup(m, &k);
	assert_int_equal(*mine, 42);
	assert_int_equal(map_lookup_copy(m, &k, all), 0);
	unsigned hits = 0;
	for (unsigned c = 0; c < n; c++)
		hits += (uint32_t)all[c] == 42;
	assert_int_equal(hits, 1);
	/* The user side writes and reads every slot, 8 bytes apart. */
	for (unsigned c = 0; c < n; c++)
		all[c] = 1000 + c;
	assert_int_equal(map_update_all_cpus(m, &k, all, MAP_ANY), 0);
	assert_int_equal(map_lookup_copy(m, &k, back), 0);
	for (unsigned c = 0; c < n; c++)
		assert_int_equal((uint32_t)back[c], 1000 + c);
	assert_true(*mine >= 1000 && *mine < 1000 + n);
	assert_null(map_array_base(m));
	free(all);
	free(back);
	map_free(m);
}

static void test_open_storage_checks_header(void **state)
{
	struct map_def def = {.type = MAP_TYPE_ARRAY, .key_size = 4, .value_size = 8,
			      .max_entries = 16, .name = "shared"};
	size_t size = map_storage_size(&def);
	void *mem = aligned_alloc(64, size);
	struct map *a, *b;
	struct err e;
	uint32_t k = 3;
	uint64_t v = 77;

	assert_true(size > 16 * 8);
	memset(mem, 0xa5, size);
	assert_int_equal(map_open_storage(&def, mem, 0, &b, &e), -EINVAL);
	assert_string_equal(e.msg, "map 'shared': storage holds no formatted map (bad magic)");
	assert_int_equal(map_open_storage(&def, mem, 1, &a, &e), 0);
	assert_int_equal(map_update(a, &k, &v, MAP_ANY), 0);
	assert_int_equal(map_open_storage(&def, mem, 0, &b, &e), 0);
	assert_int_equal(*(uint64_t *)map_lookup(b, &k), 77);
	map_free(b); /* the storage outlives the handle */
	assert_int_equal(*(uint64_t *)map_lookup(a, &k), 77);
	def.value_size = 16;
	assert_int_equal(map_open_storage(&def, mem, 0, &b, &e) < 0, 1);
	assert_int_equal(map_open_storage(&(struct map_def){.type = MAP_TYPE_ARRAY, .key_size = 4,
							   .value_size = 8, .max_entries = 15},
					  mem, 0, &b, &e), -EINVAL);
	assert_string_equal(e.msg, "map '': storage has max_entries 16, expected 15");
	assert_int_equal(map_open_storage(map_get_def(a), (char *)mem + 8, 1, &b, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "not 64-byte aligned"));
	map_free(a);
	free(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_def_errors_name_the_problem),
		cmocka_unit_test(test_array_update_lookup_flags),
		cmocka_unit_test(test_array_iteration),
		cmocka_unit_test(test_percpu_array_slots),
		cmocka_unit_test(test_open_storage_checks_header),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
