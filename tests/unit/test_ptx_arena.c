/* SPDX-License-Identifier: MIT */
/*
 * The device maps' arena (ptx_arena.h) with the fake driver (tests/fakecuda:
 * device memory is host memory, so a test can write where a kernel would,
 * at the address its code has as an immediate): the arena made before any
 * context at the address asked for, the maps planned there and created
 * there in the context made after, what is written at the planned
 * addresses mirrored into host maps, a map freed and made again in place;
 * and the fallback: a context already made (the driver reserves elsewhere),
 * FAKECUDA_VMM=elsewhere / unsupported, a map of another size than planned:
 * no arena (nothing left reserved), the maps cuMemAlloc'd, mirrored alike.
 * The binary runs itself again with the fake driver on LD_LIBRARY_PATH.
 */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/map.h"
#include "ptx/ptx_arena.h"
#include "ptx/ptx_rt.h"

static const struct map_def defs[] = {
	{MAP_TYPE_ARRAY, 4, 8, 16, 0, "counts"},
	{MAP_TYPE_HASH, 8, 16, 100, 0, "by_key"},
	{MAP_TYPE_RINGBUF, 0, 0, 4096, 0, "events"},
	{MAP_TYPE_ARRAY, 4, 24, 1000, 0, "big"},
};
enum { NR = sizeof(defs) / sizeof(defs[0]) };

static const struct map_def *const def_ptrs[NR] = {&defs[0], &defs[1], &defs[2], &defs[3]};

/* Write value v at key k of array map m as a kernel would, at the address
 * in ref (the code's immediate), then check the host's copy of m. */
static void write_and_mirror(struct ptx_rt_map *m, struct ptx_map_ref ref, uint32_t k, uint64_t v)
{
	struct map *host;
	struct err e = {{0}};
	uint64_t got = 0, buf[8]; /* a value: up to 64 bytes here */
	memcpy((void *)(uintptr_t)(ref.value + (uint64_t)k * ref.value_stride), &v, 8);
	assert_int_equal(map_create(&m->def, &host, &e), 0);
	if (ptx_rt_map_sync_to_host(m, host, PTX_RT_COMPLETE, &e))
		fail_msg("sync: %s", e.msg);
	assert_true(m->def.value_size <= sizeof(buf));
	assert_int_equal(map_lookup_copy(host, &k, buf), 0);
	memcpy(&got, buf, 8);
	assert_int_equal(got, v);
	k = (k + 1) % m->def.max_entries; /* the others stay 0 */
	assert_int_equal(map_lookup_copy(host, &k, buf), 0);
	memcpy(&got, buf, 8);
	assert_int_equal(got, 0);
	map_free(host);
}

static void test_arena_path(void **state)
{
	struct ptx_rt *plan, *rt;
	struct ptx_arena *a;
	struct ptx_rt_map *m[NR];
	struct ptx_map_ref planned[NR];
	struct err e = {{0}};

	/* before any context: the arena, and the maps planned in it */
	assert_int_equal(ptx_rt_open_noctx(0, &plan, &e), 0);
	if (ptx_rt_arena_make(plan, PTX_ARENA_VA, def_ptrs, NR, &a, &e))
		fail_msg("arena: %s", e.msg);
	assert_int_equal(a->base, PTX_ARENA_VA);
	assert_true(a->size >= 1000 * 24 && a->size % (2u << 20) == 0);
	plan->arena = a;
	for (size_t k = 0; k < NR; k++) {
		planned[k] = ptx_rt_map_ref_planned(plan, &defs[k], k);
		assert_int_equal(planned[k].map % 256, 0);
		assert_true(planned[k].map >= PTX_ARENA_VA &&
			    planned[k].map < PTX_ARENA_VA + a->size);
		if (k) /* in object order, apart */
			assert_true(planned[k].map >= planned[k - 1].map +
							  ptx_rt_map_bytes(plan, &defs[k - 1]));
	}
	assert_int_equal(planned[0].map, PTX_ARENA_VA);
	assert_int_equal(planned[0].value, PTX_ARENA_VA + sizeof(struct ptx_devmap));

	/* the application's context, later: each map where it was planned */
	assert_int_equal(ptx_rt_open(0, &rt, &e), 0);
	rt->arena = a;
	for (size_t k = 0; k < NR; k++) {
		if (ptx_rt_map_create_at(rt, &defs[k], k, &m[k], &e))
			fail_msg("map %zu: %s", k, e.msg);
		struct ptx_map_ref r = ptx_rt_map_ref(m[k]);
		assert_int_equal(r.map, planned[k].map);
		assert_int_equal(r.value, planned[k].value);
		assert_true(m[k]->in_arena);
	}
	write_and_mirror(m[0], planned[0], 3, 42);
	write_and_mirror(m[3], planned[3], 999, 0x1234567890ull);

	/* freed (not cuMemFree'd: the fake's free() would abort on it) and
	 * made again in place, as a device side made again: zeroed */
	ptx_rt_map_free(m[0]);
	assert_int_equal(ptx_rt_map_create_at(rt, &defs[0], 0, &m[0], &e), 0);
	assert_int_equal(ptx_rt_map_ref(m[0]).map, planned[0].map);
	write_and_mirror(m[0], planned[0], 5, 7);

	/* a map of another size than planned has no place there */
	struct map_def other = defs[0];
	other.max_entries = 17;
	struct ptx_rt_map *o;
	assert_int_equal(ptx_arena_at(a, 0, ptx_rt_map_bytes(rt, &other)), 0);
	assert_int_equal(ptx_rt_map_create_at(rt, &other, 0, &o, &e), 0);
	assert_false(o->in_arena);
	assert_int_not_equal(ptx_rt_map_ref(o).map, planned[0].map);
	ptx_rt_map_free(o);

	for (size_t k = 0; k < NR; k++)
		ptx_rt_map_free(m[k]);
	ptx_rt_close(rt);
	ptx_arena_free(a);
	ptx_rt_close(plan);
}

/* The arena not made: err says why, and the maps go where cuMemAlloc puts
 * them, planned without addresses. */
static void no_arena(struct ptx_rt *rt, const char *why)
{
	struct ptx_arena *a = (struct ptx_arena *)1;
	struct ptx_rt_map *m;
	struct err e = {{0}};
	int err = ptx_rt_arena_make(rt, PTX_ARENA_VA, def_ptrs, NR, &a, &e);
	assert_true(err < 0);
	assert_null(a);
	if (!strstr(e.msg, why))
		fail_msg("expected '%s' in: %s", why, e.msg);
	assert_int_equal(ptx_rt_map_ref_planned(rt, &defs[0], 0).map, 0);
	if (!rt->ctx)
		return;
	assert_int_equal(ptx_rt_map_create_at(rt, &defs[0], 0, &m, &e), 0);
	assert_false(m->in_arena);
	write_and_mirror(m, ptx_rt_map_ref(m), 3, 42);
	ptx_rt_map_free(m);
}

static void test_fallback(void **state)
{
	struct ptx_rt *rt, *noctx;
	struct ptx_arena *a;
	struct err e = {{0}};

	/* a context exists: the driver reserves a range of its own */
	assert_int_equal(ptx_rt_open(0, &rt, &e), 0);
	no_arena(rt, "the driver reserved 0x");
	setenv("FAKECUDA_VMM", "unsupported", 1);
	no_arena(rt, "cuMemGetAllocationGranularity: ");
	ptx_rt_close(rt);
	/* no context, but the driver puts it elsewhere */
	assert_int_equal(ptx_rt_open_noctx(0, &noctx, &e), 0);
	setenv("FAKECUDA_VMM", "elsewhere", 1);
	no_arena(noctx, "the driver reserved 0x");
	/* an address that is not a multiple of the granularity */
	unsetenv("FAKECUDA_VMM");
	assert_int_equal(ptx_rt_arena_make(noctx, PTX_ARENA_VA + 4096, def_ptrs, NR, &a, &e), -EINVAL);
	/* nothing of those left at the address: made there now */
	if (ptx_rt_arena_make(noctx, PTX_ARENA_VA, def_ptrs, NR, &a, &e))
		fail_msg("arena after the fallbacks: %s", e.msg);
	assert_int_equal(a->base, PTX_ARENA_VA);
	ptx_arena_free(a);
	ptx_rt_close(noctx);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arena_path),
		cmocka_unit_test(test_fallback),
	};
	if (!getenv("TEST_PTX_ARENA_FAKE")) { /* the fake driver, found by dlopen */
		if (access("build/fakecuda/libcuda.so.1", R_OK)) {
			fprintf(stderr, "test_ptx_arena: build/fakecuda/libcuda.so.1 not built\n");
			return 1;
		}
		setenv("TEST_PTX_ARENA_FAKE", "1", 1);
		setenv("LD_LIBRARY_PATH", "build/fakecuda", 1);
		execv("/proc/self/exe", argv);
		perror("test_ptx_arena: exec");
		return 1;
	}
	unsetenv("FAKECUDA_VMM");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
