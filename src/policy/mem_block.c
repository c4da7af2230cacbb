/* SPDX-License-Identifier: MIT */
/*
 * mem_block.c - the block table (2 MiB blocks by address, residency
 * bitmaps) and the eviction list threaded through it.
 *
 * Ids are indices into one array that only grows, so a policy's block id
 * stays valid for the table's life and a helper can check it with one
 * comparison.  The list is doubly linked by id: every move is O(1).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"

uint32_t mem_bits_count(const struct mem_bits *b, uint32_t first, uint32_t end)
{
	uint32_t n = 0;

	if (end > MEM_PAGES)
		end = MEM_PAGES;
	while (first < end) {
		uint32_t w = first / 64, lo = first % 64;
		uint32_t hi = end - w * 64 < 64 ? end - w * 64 : 64;
		uint64_t word = b->w[w] >> lo;
		if (hi - lo < 64)
			word &= (1ull << (hi - lo)) - 1;
		n += (uint32_t)__builtin_popcountll(word);
		first = w * 64 + hi;
	}
	return n;
}

void mem_bits_set_range(struct mem_bits *b, uint32_t first, uint32_t end)
{
	if (end > MEM_PAGES)
		end = MEM_PAGES;
	while (first < end) {
		uint32_t w = first / 64, lo = first % 64;
		uint32_t hi = end - w * 64 < 64 ? end - w * 64 : 64;
		b->w[w] |= (hi - lo == 64 ? ~0ull : ((1ull << (hi - lo)) - 1)) << lo;
		first = w * 64 + hi;
	}
}

uint32_t mem_bits_groups(const struct mem_bits *b)
{
	uint32_t g = 0;

	for (uint32_t i = 0; i < MEM_PAGES / MEM_GROUP_PAGES; i++)
		if (b->w[i / 4] >> (i % 4 * MEM_GROUP_PAGES) & 0xffff)
			g |= 1u << i;
	return g;
}

enum { MEM_TABLE_MIN_SLOTS = 1024 };

static uint32_t mem_slot_hash(uint64_t key)
{
	key *= 0x9e3779b97f4a7c15ull;
	return (uint32_t)(key >> 32);
}

int mem_table_init(struct mem_table *t, struct err *e)
{
	memset(t, 0, sizeof(*t));
	t->slots = calloc(MEM_TABLE_MIN_SLOTS, sizeof(*t->slots));
	if (!t->slots)
		return err_set(e, ENOMEM, "block table: out of memory");
	t->slot_mask = MEM_TABLE_MIN_SLOTS - 1;
	t->head = t->tail = MEM_NIL;
	return 0;
}

void mem_table_fini(struct mem_table *t)
{
	free(t->blocks);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

uint32_t mem_table_find(const struct mem_table *t, uint64_t addr)
{
	uint64_t key = addr >> MEM_BLOCK_SHIFT;

	for (uint32_t i = mem_slot_hash(key) & t->slot_mask;; i = (i + 1) & t->slot_mask) {
		uint32_t s = t->slots[i];
		if (!s)
			return MEM_NIL;
		if (t->blocks[s - 1].va >> MEM_BLOCK_SHIFT == key)
			return s - 1;
	}
}

/* Double the slots (kept at most half full) and rehash. */
static int mem_table_grow_slots(struct mem_table *t, struct err *e)
{
	uint32_t n = (t->slot_mask + 1) * 2;
	uint32_t *s = calloc(n, sizeof(*s));

	if (!s)
		return err_set(e, ENOMEM, "block table: out of memory");
	for (uint32_t id = 0; id < t->cnt; id++) {
		uint32_t i = mem_slot_hash(t->blocks[id].va >> MEM_BLOCK_SHIFT) & (n - 1);
		while (s[i])
			i = (i + 1) & (n - 1);
		s[i] = id + 1;
	}
	free(t->slots);
	t->slots = s;
	t->slot_mask = n - 1;
	return 0;
}

int mem_table_get(struct mem_table *t, uint64_t addr, uint32_t pid, uint32_t *id,
		  struct err *e)
{
	uint32_t found = mem_table_find(t, addr);

	if (found != MEM_NIL) {
		*id = found;
		return 0;
	}
	if (t->cnt == UINT32_MAX - 1)
		return err_set(e, E2BIG, "block table: too many blocks");
	if ((t->cnt + 1) * 2 > t->slot_mask + 1) {
		int err = mem_table_grow_slots(t, e);
		if (err)
			return err;
	}
	if (t->cnt == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 256;
		struct mem_block *b = realloc(t->blocks, (size_t)cap * sizeof(*b));
		if (!b)
			return err_set(e, ENOMEM, "block table: out of memory");
		t->blocks = b;
		t->cap = cap;
	}
	struct mem_block *b = &t->blocks[t->cnt];
	memset(b, 0, sizeof(*b));
	b->va = addr & ~((1ull << MEM_BLOCK_SHIFT) - 1);
	b->pid = pid;
	b->prev = b->next = MEM_NIL;
	b->batch = UINT64_MAX;
	uint32_t i = mem_slot_hash(addr >> MEM_BLOCK_SHIFT) & t->slot_mask;
	while (t->slots[i])
		i = (i + 1) & t->slot_mask;
	t->slots[i] = t->cnt + 1;
	*id = t->cnt++;
	return 0;
}

static void mem_list_link_tail(struct mem_table *t, uint32_t id)
{
	struct mem_block *b = &t->blocks[id];

	b->prev = t->tail;
	b->next = MEM_NIL;
	if (t->tail != MEM_NIL)
		t->blocks[t->tail].next = id;
	else
		t->head = id;
	t->tail = id;
}

static void mem_list_link_head(struct mem_table *t, uint32_t id)
{
	struct mem_block *b = &t->blocks[id];

	b->next = t->head;
	b->prev = MEM_NIL;
	if (t->head != MEM_NIL)
		t->blocks[t->head].prev = id;
	else
		t->tail = id;
	t->head = id;
}

static void mem_list_unlink(struct mem_table *t, uint32_t id)
{
	struct mem_block *b = &t->blocks[id];

	if (b->prev != MEM_NIL)
		t->blocks[b->prev].next = b->next;
	else
		t->head = b->next;
	if (b->next != MEM_NIL)
		t->blocks[b->next].prev = b->prev;
	else
		t->tail = b->prev;
	b->prev = b->next = MEM_NIL;
}

void mem_list_push_tail(struct mem_table *t, uint32_t id)
{
	mem_list_link_tail(t, id);
	t->blocks[id].on_gpu = 1;
	t->list_len++;
}

void mem_list_remove(struct mem_table *t, uint32_t id)
{
	mem_list_unlink(t, id);
	t->blocks[id].on_gpu = 0;
	t->list_len--;
}

void mem_list_move_head(struct mem_table *t, uint32_t id)
{
	mem_list_unlink(t, id);
	mem_list_link_head(t, id);
}

void mem_list_move_tail(struct mem_table *t, uint32_t id)
{
	mem_list_unlink(t, id);
	mem_list_link_tail(t, id);
}
