/* SPDX-License-Identifier: MIT */
/*
 * The memory-policy runtime's data structures (src/policy/mem_block.c):
 * page bitmaps against a naive count, the block table (lookup, growth past
 * its first hash size, ids stable), and the eviction list against an array
 * model under random moves.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "policy/mem.h"

static void test_bits_count_matches_naive(void **state)
{
	struct mem_bits b = {{0}};
	uint64_t rng = 12345;

	for (int round = 0; round < 200; round++) {
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t p = (uint32_t)(rng >> 33) % MEM_PAGES;
		mem_bits_set(&b, p);
		uint32_t first = (uint32_t)(rng >> 20) % MEM_PAGES;
		uint32_t end = first + (uint32_t)(rng >> 45) % (MEM_PAGES - first + 1);
		uint32_t naive = 0;
		for (uint32_t i = first; i < end; i++)
			naive += mem_bits_test(&b, i);
		assert_int_equal(mem_bits_count(&b, first, end), naive);
	}
	/* end past the block is cut to the block. */
	assert_int_equal(mem_bits_count(&b, 0, 100000), mem_bits_count(&b, 0, MEM_PAGES));

	struct mem_bits r = {{0}};
	mem_bits_set_range(&r, 15, 33);
	assert_int_equal(mem_bits_count(&r, 0, MEM_PAGES), 18);
	/* pages 15 | 16..31 | 32: groups 0, 1 and 2. */
	assert_int_equal(mem_bits_groups(&r), 0x7);
	mem_bits_set_range(&r, 500, 9999);
	assert_int_equal(mem_bits_count(&r, 500, 512), 12);
	assert_int_equal(mem_bits_groups(&r) >> 31, 1);
}

static void test_table_lookup_and_growth(void **state)
{
	struct mem_table t;
	struct err e;
	uint32_t id;

	assert_int_equal(mem_table_init(&t, &e), 0);
	assert_int_equal(mem_table_find(&t, 0x1000), MEM_NIL);
	/* 5000 blocks, spread so that their keys collide in the low bits. */
	for (uint64_t i = 0; i < 5000; i++) {
		uint64_t addr = (i << 32) + (i % 7) * 4096 + (3ull << MEM_BLOCK_SHIFT);
		assert_int_equal(mem_table_get(&t, addr, (uint32_t)i, &id, &e), 0);
		assert_int_equal(id, (uint32_t)i);
	}
	assert_int_equal(t.cnt, 5000);
	for (uint64_t i = 0; i < 5000; i++) {
		uint64_t addr = (i << 32) + (3ull << MEM_BLOCK_SHIFT) + 0x1fffff;
		assert_int_equal(mem_table_find(&t, addr), (uint32_t)i);
		assert_int_equal(t.blocks[i].va, (i << 32) + (3ull << MEM_BLOCK_SHIFT));
		assert_int_equal(t.blocks[i].pid, (uint32_t)i);
		assert_false(t.blocks[i].on_gpu);
	}
	/* The same block again: the same id, no new block. */
	assert_int_equal(mem_table_get(&t, (7ull << 32) + (3ull << MEM_BLOCK_SHIFT) + 5, 99, &id, &e),
			 0);
	assert_int_equal(id, 7);
	assert_int_equal(t.cnt, 5000);
	assert_int_equal(mem_table_find(&t, 4ull << MEM_BLOCK_SHIFT), MEM_NIL);
	mem_table_fini(&t);
}

/* The list read forwards and backwards equals the model, on_gpu agrees. */
static void check_list(const struct mem_table *t, const uint32_t *model, uint32_t n)
{
	uint32_t i = 0;

	assert_int_equal(t->list_len, n);
	for (uint32_t id = t->head; id != MEM_NIL; id = t->blocks[id].next, i++) {
		assert_true(i < n);
		assert_int_equal(id, model[i]);
		assert_true(t->blocks[id].on_gpu);
	}
	assert_int_equal(i, n);
	for (uint32_t id = t->tail; id != MEM_NIL; id = t->blocks[id].prev)
		assert_int_equal(id, model[--i]);
	assert_int_equal(i, 0);
}

static void model_remove(uint32_t *model, uint32_t *n, uint32_t id)
{
	for (uint32_t i = 0; i < *n; i++)
		if (model[i] == id) {
			memmove(model + i, model + i + 1, (*n - i - 1) * sizeof(*model));
			(*n)--;
			return;
		}
	fail_msg("block %u not in the model", id);
}

static void test_list_moves_match_model(void **state)
{
	enum { BLOCKS = 40 };
	struct mem_table t;
	struct err e;
	uint32_t model[BLOCKS], n = 0, id;
	uint64_t rng = 99;

	assert_int_equal(mem_table_init(&t, &e), 0);
	for (uint32_t i = 0; i < BLOCKS; i++)
		assert_int_equal(mem_table_get(&t, (uint64_t)i << MEM_BLOCK_SHIFT, 1, &id, &e), 0);
	check_list(&t, model, 0);
	for (int step = 0; step < 5000; step++) {
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t b = (uint32_t)(rng >> 40) % BLOCKS;
		int listed = t.blocks[b].on_gpu;
		switch ((rng >> 20) % 4) {
		case 0:
			if (listed)
				break;
			mem_list_push_tail(&t, b);
			model[n++] = b;
			break;
		case 1:
			if (!listed)
				break;
			mem_list_remove(&t, b);
			model_remove(model, &n, b);
			assert_false(t.blocks[b].on_gpu);
			break;
		case 2:
			if (!listed)
				break;
			mem_list_move_head(&t, b);
			model_remove(model, &n, b);
			memmove(model + 1, model, n * sizeof(*model));
			model[0] = b;
			n++;
			break;
		default:
			if (!listed)
				break;
			mem_list_move_tail(&t, b);
			model_remove(model, &n, b);
			model[n++] = b;
		}
		check_list(&t, model, n);
	}
	mem_table_fini(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bits_count_matches_naive),
		cmocka_unit_test(test_table_lookup_and_growth),
		cmocka_unit_test(test_list_moves_match_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
