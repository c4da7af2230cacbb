/* SPDX-License-Identifier: MIT */
/* The public map API (include/gpuext/gpuext.h), its errors and exports. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuext/gpuext.h"

static char last_msg[1024];
static int msgs;

static int keep_message(enum gpuext_print_level level, const char *fmt, va_list ap)
{
	msgs++;
	return vsnprintf(last_msg, sizeof(last_msg), fmt, ap);
}

static int setup_print(void **state)
{
	gpuext_set_print(keep_message);
	msgs = 0;
	last_msg[0] = '\0';
	return 0;
}

static void test_create_update_lookup_iterate(void **state)
{
	struct gpuext_map *m = gpuext_map__create(GPUEXT_MAP_TYPE_HASH, "pids", 4, 8, 64, 0);
	uint32_t k, next;
	uint64_t v;

	assert_non_null(m);
	assert_string_equal(gpuext_map__def(m)->name, "pids");
	assert_int_equal(gpuext_map__def(m)->max_entries, 64);
	assert_int_equal(gpuext_map__nr_cpus(m), 1);
	for (k = 0; k < 10; k++) {
		v = k * k;
		assert_int_equal(gpuext_map__update_elem(m, &k, 4, &v, 8, GPUEXT_NOEXIST), 0);
	}
	k = 3;
	assert_int_equal(gpuext_map__update_elem(m, &k, 4, &v, 8, GPUEXT_NOEXIST), -EEXIST);
	assert_int_equal(gpuext_map__lookup_elem(m, &k, 4, &v, 8, 0), 0);
	assert_int_equal(v, 9);
	assert_int_equal(gpuext_map__delete_elem(m, &k, 4, 0), 0);
	assert_int_equal(gpuext_map__lookup_elem(m, &k, 4, &v, 8, 0), -ENOENT);
	int n = 0;
	for (int r = gpuext_map__get_next_key(m, NULL, &next, 4); !r;
	     r = gpuext_map__get_next_key(m, &k, &next, 4)) {
		assert_true(next < 10 && next != 3);
		k = next;
		n++;
	}
	assert_int_equal(n, 9);
	gpuext_map__destroy(m);
}

static void test_size_checks_and_messages(void **state)
{
	struct gpuext_map *m = gpuext_map__create(GPUEXT_MAP_TYPE_ARRAY, "arr", 4, 12, 4, 0);
	uint32_t k = 0;
	char v[16];

	assert_non_null(m);
	assert_int_equal(gpuext_map__lookup_elem(m, &k, 8, v, 12, 0), -EINVAL);
	assert_string_equal(last_msg, "libgpuext: map 'arr': lookup: key size 8, the map's is 4\n");
	assert_int_equal(gpuext_map__update_elem(m, &k, 4, v, 16, 0), -EINVAL);
	assert_string_equal(last_msg,
			    "libgpuext: map 'arr': update: value size 16, expected 12\n");
	assert_int_equal(gpuext_map__ringbuf_consume(m, NULL, NULL), -EINVAL);
	assert_string_equal(last_msg, "libgpuext: map 'arr': ringbuf_consume: not a ring buffer\n");
	gpuext_map__destroy(m);

	errno = 0;
	assert_null(gpuext_map__create(GPUEXT_MAP_TYPE_HASH, "bad", 0, 8, 4, 0));
	assert_int_equal(errno, EINVAL);
	assert_string_equal(last_msg, "libgpuext: map 'bad': key_size is 0\n");
	assert_null(gpuext_map__create(7, "odd", 4, 8, 4, 0));
	assert_string_equal(last_msg, "libgpuext: map 'odd': unsupported map type 7\n");
	/* No callback: silence, same errors. */
	assert_ptr_equal(gpuext_set_print(NULL), keep_message);
	int before = msgs;
	assert_null(gpuext_map__create(7, "odd", 4, 8, 4, 0));
	assert_int_equal(msgs, before);
	gpuext_set_print(keep_message);
}

static void test_percpu_values_hold_every_cpu(void **state)
{
	struct gpuext_map *m = gpuext_map__create(GPUEXT_MAP_TYPE_PERCPU_ARRAY, "pc", 4, 4, 2, 0);
	unsigned n = gpuext_map__nr_cpus(m);
	uint64_t *vals = calloc(n, 8), *back = calloc(n, 8);
	uint32_t k = 1;

	assert_true(n >= 1);
	for (unsigned c = 0; c < n; c++)
		vals[c] = c * 10 + 1;
	assert_int_equal(gpuext_map__update_elem(m, &k, 4, vals, 4, 0), n == 1 ? 0 : -EINVAL);
	assert_int_equal(gpuext_map__update_elem(m, &k, 4, vals, n * 8, 0), 0);
	assert_int_equal(gpuext_map__lookup_elem(m, &k, 4, back, n * 8, 0), 0);
	for (unsigned c = 0; c < n; c++)
		assert_int_equal((uint32_t)back[c], c * 10 + 1);
	free(vals);
	free(back);
	gpuext_map__destroy(m);
}

static void test_only_public_symbols_are_exported(void **state)
{
	int st;
	char *out = test_run_cmd("nm -D --defined-only build/libgpuext.so", &st);

	assert_non_null(out);
	assert_int_equal(st, 0);
	int api = 0;
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		char addr[32], type[4], name[256];
		if (sscanf(line, "%31s %3s %255s", addr, type, name) != 3)
			continue;
		if (strcmp(type, "T") && strcmp(type, "D") && strcmp(type, "B"))
			continue;
		if (strncmp(name, "gpuext_", 7))
			fail_msg("libgpuext.so exports '%s'", name);
		api++;
	}
	assert_true(api >= 20);
	free(out);
}

/* A block-local array's values exist on the GPU only: the host says why. */
static void test_block_array_has_no_host_values(void **state)
{
	struct gpuext_map *m =
		gpuext_map__create(GPUEXT_MAP_TYPE_GPU_BLOCK_ARRAY, "blk", 4, 8, 4, 0);
	uint32_t k = 0, next;
	uint64_t v = 1;

	assert_non_null(m);
	assert_int_equal(gpuext_map__lookup_elem(m, &k, 4, &v, 8, 0), -EOPNOTSUPP);
	assert_string_equal(last_msg, "libgpuext: map 'blk': lookup: a block-local array's values "
				      "live in each GPU block's shared memory while the block "
				      "runs; the host has none\n");
	assert_int_equal(gpuext_map__update_elem(m, &k, 4, &v, 8, 0), -EOPNOTSUPP);
	assert_int_equal(gpuext_map__get_next_key(m, NULL, &next, 4), -ENOENT);
	gpuext_map__destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_create_update_lookup_iterate, setup_print),
		cmocka_unit_test_setup(test_size_checks_and_messages, setup_print),
		cmocka_unit_test_setup(test_percpu_values_hold_every_cpu, setup_print),
		cmocka_unit_test_setup(test_block_array_has_no_host_values, setup_print),
		cmocka_unit_test(test_only_public_symbols_are_exported),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
