/* SPDX-License-Identifier: MIT */
/*
 * map_ringbuf.c - ring buffers with Linux's BPF_MAP_TYPE_RINGBUF semantics.
 *
 * Area: the producers' line (lock, producer position), the consumer
 * position, the dropped counter, then the data area of max_entries bytes
 * (a power of 2).
 * Positions grow forever; a position's byte is at pos & (size - 1).
 *
 * Every record starts with Linux's 8-byte header: a 32-bit length with the
 * BUSY bit (reserved, not yet submitted) and the DISCARD bit, and a 32-bit
 * offset (in 8-byte units) from the map's storage back to the header, which
 * is how submit/discard find the map from a bare record pointer.  Records
 * are 8-byte aligned.
 *
 * Producers (any thread of any process sharing the storage) serialise on the
 * spinlock only to move the producer position and write the header, as in
 * Linux (they reread the consumer position only when the buffer looks full); they fill and submit their records without it, and submit is one
 * atomic store that clears BUSY (and may set DISCARD) with release order.
 * The one consumer reads the producer position with acquire order, stops at
 * the first BUSY record (records are consumed in order), and publishes its
 * position with release order, which is what frees space for producers.
 *
 * Linux maps the data area twice so that a record may wrap around the end;
 * one position-independent block cannot, so a record that would wrap is
 * placed at the start of the area instead, after a discarded padding record
 * that fills the end.  The padding counts as used space until consumed.
 */
#include "map_impl.h"

#include <errno.h>
#include <string.h>

enum {
	RB_BUSY = 1u << 31,
	RB_DISCARD = 1u << 30,
	RB_HDR_SIZE = 8,
	RB_MIN_SIZE = 4096,
	RB_MAX_SIZE = 1 << 30, /* padding lengths must stay below the flag bits */
};
#define RB_MAX_RECORD ((uint32_t)RB_DISCARD - 1)

/* Flags of submit/discard/output (wakeup hints: no consumer sleeps here). */
enum { RB_NO_WAKEUP = 1, RB_FORCE_WAKEUP = 2 };
/* What query returns. */
enum { RB_AVAIL_DATA = 0, RB_RING_SIZE = 1, RB_CONS_POS = 2, RB_PROD_POS = 3 };

/*
 * What producers write shares one line (lock, producer position, the
 * consumer position they last saw), so a reservation moves one contended
 * line between cores, not three; the consumer's position and the dropped
 * counter have lines of their own.
 */
struct rb_ctl {
	_Alignas(MAP_ALIGN) _Atomic uint32_t lock;
	_Atomic uint64_t producer_pos;
	/* The consumer position producers last read, under the lock: they read
	 * the consumer's line again only when the buffer looks full. */
	uint64_t consumer_seen;
	_Alignas(MAP_ALIGN) _Atomic uint64_t consumer_pos;
	_Alignas(MAP_ALIGN) _Atomic uint64_t dropped;
};

struct rb_hdr {
	_Atomic uint32_t len; /* RB_BUSY | RB_DISCARD | payload bytes */
	uint32_t off8;        /* (header - storage) / 8 */
};

static int rb_check(const struct map_def *def, struct err *e)
{
	uint32_t n = def->max_entries;

	if (def->key_size || def->value_size)
		return err_set(e, EINVAL, "map '%s': ring buffer key_size and value_size must be 0",
			       def->name);
	if (n < RB_MIN_SIZE || n > RB_MAX_SIZE || (n & (n - 1)))
		return err_set(e, EINVAL,
			       "map '%s': ring buffer size %u must be a power of 2 from %d to %d",
			       def->name, n, RB_MIN_SIZE, RB_MAX_SIZE);
	return 0;
}

static uint64_t rb_area_size(const struct map_def *def, unsigned nr_cpus)
{
	return sizeof(struct rb_ctl) + def->max_entries;
}

static struct rb_ctl *rb_ctl(struct map *map)
{
	return map_area(map);
}

static unsigned char *rb_data(struct map *map)
{
	return (unsigned char *)map_area(map) + sizeof(struct rb_ctl);
}

static struct rb_hdr *rb_hdr_at(struct map *map, uint64_t pos)
{
	return (struct rb_hdr *)(rb_data(map) + (pos & (map->def.max_entries - 1)));
}

static void rb_drop(struct map *map)
{
	atomic_fetch_add_explicit(&rb_ctl(map)->dropped, 1, memory_order_relaxed);
}

void *map_ringbuf_reserve(struct map *map, uint64_t size, uint64_t flags)
{
	struct rb_ctl *ctl = rb_ctl(map);
	uint64_t ring = map->def.max_entries;

	if (flags || map->def.type != MAP_TYPE_RINGBUF)
		return NULL;
	uint64_t total = map_round8(size + RB_HDR_SIZE);
	if (size > RB_MAX_RECORD || total > ring) {
		rb_drop(map);
		return NULL;
	}
	map_lock(&ctl->lock);
	uint64_t prod = atomic_load_explicit(&ctl->producer_pos, memory_order_relaxed);
	uint64_t pad = (prod & (ring - 1)) + total > ring ? ring - (prod & (ring - 1)) : 0;
	if (prod + pad + total - ctl->consumer_seen > ring) {
		ctl->consumer_seen = atomic_load_explicit(&ctl->consumer_pos, memory_order_acquire);
		if (prod + pad + total - ctl->consumer_seen > ring) {
			map_unlock(&ctl->lock);
			rb_drop(map);
			return NULL;
		}
	}
	if (pad) {
		struct rb_hdr *ph = rb_hdr_at(map, prod);
		ph->off8 = (uint32_t)(((unsigned char *)ph - map->base) / 8);
		atomic_store_explicit(&ph->len, (uint32_t)(pad - RB_HDR_SIZE) | RB_DISCARD,
				      memory_order_relaxed);
	}
	struct rb_hdr *h = rb_hdr_at(map, prod + pad);
	h->off8 = (uint32_t)(((unsigned char *)h - map->base) / 8);
	atomic_store_explicit(&h->len, (uint32_t)size | RB_BUSY, memory_order_relaxed);
	/* Headers first, then the position that makes them visible. */
	atomic_store_explicit(&ctl->producer_pos, prod + pad + total, memory_order_release);
	map_unlock(&ctl->lock);
	return h + 1;
}

static void rb_commit(void *record, uint32_t set)
{
	struct rb_hdr *h = (struct rb_hdr *)record - 1;
	uint32_t len = atomic_load_explicit(&h->len, memory_order_relaxed);

	/* Release: the record's contents are visible before its BUSY bit clears. */
	atomic_store_explicit(&h->len, (len & ~RB_BUSY) | set, memory_order_release);
}

void map_ringbuf_submit(void *record, uint64_t flags)
{
	rb_commit(record, 0);
}

void map_ringbuf_discard(void *record, uint64_t flags)
{
	rb_commit(record, RB_DISCARD);
}

int map_ringbuf_output(struct map *map, const void *data, uint64_t size, uint64_t flags)
{
	if ((flags & ~(uint64_t)(RB_NO_WAKEUP | RB_FORCE_WAKEUP)) ||
	    map->def.type != MAP_TYPE_RINGBUF)
		return -EINVAL;
	void *rec = map_ringbuf_reserve(map, size, 0);
	if (!rec)
		return -EAGAIN;
	memcpy(rec, data, size);
	map_ringbuf_submit(rec, flags);
	return 0;
}

uint64_t map_ringbuf_query(struct map *map, uint64_t flags)
{
	struct rb_ctl *ctl = rb_ctl(map);
	if (map->def.type != MAP_TYPE_RINGBUF)
		return 0;
	uint64_t cons = atomic_load_explicit(&ctl->consumer_pos, memory_order_acquire);
	uint64_t prod = atomic_load_explicit(&ctl->producer_pos, memory_order_acquire);

	switch (flags) {
	case RB_AVAIL_DATA: return prod - cons;
	case RB_RING_SIZE: return map->def.max_entries;
	case RB_CONS_POS: return cons;
	case RB_PROD_POS: return prod;
	}
	return 0;
}

int map_ringbuf_consume(struct map *map, map_ringbuf_fn fn, void *arg)
{
	if (map->def.type != MAP_TYPE_RINGBUF)
		return -EINVAL;
	struct rb_ctl *ctl = rb_ctl(map);
	uint64_t cons = atomic_load_explicit(&ctl->consumer_pos, memory_order_acquire);
	int n = 0, progress;

	do {
		uint64_t prod = atomic_load_explicit(&ctl->producer_pos, memory_order_acquire);
		progress = 0;
		while (cons < prod) {
			struct rb_hdr *h = rb_hdr_at(map, cons);
			uint32_t len = atomic_load_explicit(&h->len, memory_order_acquire);
			if (len & RB_BUSY)
				break;
			uint32_t size = len & ~(RB_BUSY | RB_DISCARD);
			cons += map_round8(size + RB_HDR_SIZE);
			progress = 1;
			int stop = 0;
			if (!(len & RB_DISCARD)) {
				n++;
				stop = fn(arg, h + 1, size);
			}
			/* Space is given back record by record. */
			atomic_store_explicit(&ctl->consumer_pos, cons, memory_order_release);
			if (stop)
				return n;
		}
	} while (progress);
	return n;
}

uint64_t map_ringbuf_dropped(struct map *map)
{
	if (map->def.type != MAP_TYPE_RINGBUF)
		return 0;
	return atomic_load_explicit(&rb_ctl(map)->dropped, memory_order_relaxed);
}

/* Ring buffers have no keys: the element operations are refused (NULL). */
const struct map_ops map_ringbuf_ops = {
	.check = rb_check,
	.area_size = rb_area_size,
};
