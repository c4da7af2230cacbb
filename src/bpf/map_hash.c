/* SPDX-License-Identifier: MIT */
/*
 * map_hash.c - hash, per-CPU hash and LRU hash maps.
 *
 * Design.  Everything is preallocated in the storage block and linked by
 * 32-bit element indices, so the block works at any address in any process:
 *
 *   ctl      live-entry count, LRU hand and clock, free-list heads
 *   buckets  n_buckets (a power of 2 >= max_entries) x {lock, head}
 *   elems    max_entries + HASH_SPARE elements: header, key, value(s)
 *
 * Writers (update, delete, eviction) take the bucket's spinlock, which lives
 * in the bucket, so writers of different buckets never meet, and processes
 * sharing the block share the locks.  Readers (the program-side lookup, the
 * hot path) take no lock: a chain ends in a "nulls" marker that names its
 * bucket (HASH_NULLS | bucket, the kernel's hlist_nulls idea); an element
 * that was deleted and reused in another bucket while a reader stood on it
 * leads the reader to another bucket's marker, and the reader starts over.
 * Elements are published with a release store of the link that points to
 * them, after their key and value are written, so a reader that finds an
 * element sees it whole.  Values of a deleted element stay readable until
 * the element is reused (Linux's preallocated-map semantics).
 *
 * Replacing the value of an existing key links a fresh element in place of
 * the old one (one store), so a reader sees the old or the new value, never
 * a mix; per-CPU maps update the slot in place instead (as Linux does),
 * since a slot belongs to one CPU.  The spare elements exist for these
 * replacements: a full map can still replace values.
 *
 * Free elements sit on HASH_FREE_LISTS lock-free stacks (Treiber), one
 * cache line each; a thread pushes to and pops from the list of its CPU and
 * takes from the others only when its own is empty (Linux's pcpu_freelist),
 * so updates on different CPUs do not contend on one head.  A head carries
 * a tag that changes on every push and pop, so a pop that raced with a pop
 * and push of the same element fails its compare-and-swap (no ABA).
 *
 * LRU: a logical clock in ctl advances on every insert; lookups and
 * updates stamp the element with it (a store only when the stamp changes,
 * so hot keys do not bounce cache lines on every lookup).  When the map is
 * full, an update first evicts: it samples the next HASH_LRU_SAMPLE live
 * elements under a moving hand and removes the one with the oldest stamp
 * (approximate LRU, as Redis does; a plain CLOCK reference bit degrades to
 * FIFO once every entry has been touched).  The eviction holds no lock
 * while it samples and takes only the victim's bucket lock, so it cannot
 * deadlock with the updater's own bucket.
 */
#include "map_impl.h"

#include <errno.h>
#include <sched.h>
#include <string.h>

enum {
	HASH_SPARE = 64,             /* elements beyond max_entries, for replacements */
	HASH_MAX_ENTRIES = 1 << 28,  /* indices stay below HASH_NULLS */
	HASH_PERCPU_MAX_VALUE = 32768,
	HASH_LRU_SAMPLE = 16,        /* live elements an eviction compares */
	HASH_LRU_WINDOW = 32,        /* elements the hand claims at once */
	HASH_FREE_LISTS = 16,        /* a power of 2; a thread uses list cpu % 16 */
};
#define HASH_NULLS 0x80000000u
#define HASH_NIL 0xffffffffu /* empty free list */

struct hash_ctl {
	_Atomic uint32_t count;     /* live entries */
	_Atomic uint32_t lru_hand;  /* next element an eviction samples */
	_Atomic uint32_t lru_tick;  /* logical clock: inserts so far */
	/* Free lists, one cache line each: tag << 32 | element (HASH_NIL: empty). */
	struct {
		_Alignas(MAP_ALIGN) _Atomic uint64_t head;
	} free[HASH_FREE_LISTS];
};

struct hash_bucket {
	_Atomic uint32_t lock;
	_Atomic uint32_t head; /* element index, or HASH_NULLS | bucket */
};

struct hash_elem {
	_Atomic uint32_t next;      /* chain link, or HASH_NULLS | bucket */
	_Atomic uint32_t hash;
	_Atomic uint32_t free_next; /* free-list link while free */
	_Atomic uint32_t atime;     /* LRU: lru_tick when last used */
	_Atomic uint8_t linked;     /* in a chain (changed under its bucket lock) */
	uint8_t pad[7];
	/* key (rounded to 8), then the value or nr_cpus values (each rounded) */
};
_Static_assert(sizeof(struct hash_elem) == 24, "element header must keep keys aligned");

/* The layout of one map's area, computed from its definition. */
struct hash_layout {
	uint32_t n_buckets, n_elems;
	uint64_t key_off, value_off, value_stride, elem_size;
	uint64_t buckets_off, elems_off;
};

static int hash_is_percpu(const struct map_def *def)
{
	return def->type == MAP_TYPE_PERCPU_HASH;
}

static int hash_is_lru(const struct map_def *def)
{
	return def->type == MAP_TYPE_LRU_HASH;
}

static uint32_t hash_roundup_pow2(uint32_t n)
{
	return n <= 1 ? 1 : 1u << (32 - __builtin_clz(n - 1));
}

static struct hash_layout hash_layout_of(const struct map_def *def, unsigned nr_cpus)
{
	struct hash_layout l;
	unsigned slots = hash_is_percpu(def) ? nr_cpus : 1;

	l.n_buckets = hash_roundup_pow2(def->max_entries);
	l.n_elems = def->max_entries + HASH_SPARE;
	l.key_off = sizeof(struct hash_elem);
	l.value_off = l.key_off + map_round8(def->key_size);
	l.value_stride = map_round8(def->value_size);
	l.elem_size = l.value_off + slots * l.value_stride;
	l.buckets_off = map_round_line(sizeof(struct hash_ctl));
	l.elems_off = l.buckets_off + map_round_line((uint64_t)l.n_buckets * sizeof(struct hash_bucket));
	return l;
}

static int hash_check(const struct map_def *def, struct err *e)
{
	if (def->key_size == 0)
		return err_set(e, EINVAL, "map '%s': key_size is 0", def->name);
	if (def->value_size == 0)
		return err_set(e, EINVAL, "map '%s': value_size is 0", def->name);
	if (def->max_entries > HASH_MAX_ENTRIES)
		return err_set(e, E2BIG, "map '%s': max_entries %u is over %d", def->name,
			       def->max_entries, HASH_MAX_ENTRIES);
	if (hash_is_percpu(def) && def->value_size > HASH_PERCPU_MAX_VALUE)
		return err_set(e, E2BIG, "map '%s': per-CPU value_size %u is over %d", def->name,
			       def->value_size, HASH_PERCPU_MAX_VALUE);
	return 0;
}

static uint64_t hash_area_size(const struct map_def *def, unsigned nr_cpus)
{
	struct hash_layout l = hash_layout_of(def, nr_cpus);
	return l.elems_off + (uint64_t)l.n_elems * l.elem_size;
}

/* Per-call view of a map's area. */
struct hash_view {
	struct map *map;
	struct hash_layout l;
	struct hash_ctl *ctl;
	struct hash_bucket *buckets;
	unsigned char *elems;
};

static struct hash_view hash_view_of(struct map *map)
{
	struct hash_view v = {.map = map, .l = hash_layout_of(&map->def, map->nr_cpus)};
	unsigned char *area = map_area(map);

	v.ctl = (struct hash_ctl *)area;
	v.buckets = (struct hash_bucket *)(area + v.l.buckets_off);
	v.elems = area + v.l.elems_off;
	return v;
}

static struct hash_elem *hash_elem(const struct hash_view *v, uint32_t idx)
{
	return (struct hash_elem *)(v->elems + (uint64_t)idx * v->l.elem_size);
}

static void *hash_key(const struct hash_view *v, struct hash_elem *el)
{
	return (unsigned char *)el + v->l.key_off;
}

static unsigned char *hash_value(const struct hash_view *v, struct hash_elem *el, unsigned cpu)
{
	return (unsigned char *)el + v->l.value_off + cpu * v->l.value_stride;
}

/*
 * The same in every process (no per-process seed): 8-byte words mixed with
 * multiply-xorshift steps, then a final avalanche.
 */
static uint32_t hash_bytes(const void *key, uint32_t len)
{
	const unsigned char *p = key;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len;

	for (; len >= 8; len -= 8, p += 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	if (len) {
		uint64_t w = 0;
		memcpy(&w, p, len);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
	}
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return (uint32_t)h;
}

static void hash_format(struct map *map)
{
	struct hash_view v = hash_view_of(map);

	for (uint32_t b = 0; b < v.l.n_buckets; b++)
		atomic_init(&v.buckets[b].head, HASH_NULLS | b);
	/* Element i starts on list i % HASH_FREE_LISTS. */
	for (uint32_t i = 0; i < v.l.n_elems; i++)
		atomic_init(&hash_elem(&v, i)->free_next,
			    i + HASH_FREE_LISTS < v.l.n_elems ? i + HASH_FREE_LISTS : HASH_NIL);
	for (uint32_t l = 0; l < HASH_FREE_LISTS; l++)
		atomic_init(&v.ctl->free[l].head, l < v.l.n_elems ? l : HASH_NIL); /* tag 0 */
}

/* The calling CPU's free list: updates on different CPUs do not meet. */
static uint32_t hash_free_list_of_cpu(void)
{
	int cpu = sched_getcpu();
	return cpu < 0 ? 0 : (uint32_t)cpu & (HASH_FREE_LISTS - 1);
}

static uint32_t hash_free_pop_list(const struct hash_view *v, _Atomic uint64_t *head)
{
	uint64_t old = atomic_load_explicit(head, memory_order_acquire);
	uint64_t new;

	do {
		uint32_t idx = (uint32_t)old;
		if (idx == HASH_NIL)
			return HASH_NIL;
		/* May read a stale link if another thread took idx meanwhile;
		 * the tag makes the compare-and-swap fail then. */
		uint32_t next = atomic_load_explicit(&hash_elem(v, idx)->free_next,
						     memory_order_relaxed);
		new = ((old >> 32) + 1) << 32 | next;
	} while (!atomic_compare_exchange_weak_explicit(head, &old, new, memory_order_acq_rel,
							memory_order_acquire));
	return (uint32_t)old;
}

/* From the own CPU's list, else from the others (Linux's pcpu_freelist). */
static uint32_t hash_free_pop(const struct hash_view *v)
{
	uint32_t own = hash_free_list_of_cpu();

	for (uint32_t i = 0; i < HASH_FREE_LISTS; i++) {
		uint32_t idx = hash_free_pop_list(v, &v->ctl->free[(own + i) &
								   (HASH_FREE_LISTS - 1)].head);
		if (idx != HASH_NIL)
			return idx;
	}
	return HASH_NIL;
}

static void hash_free_push(const struct hash_view *v, uint32_t idx)
{
	_Atomic uint64_t *head = &v->ctl->free[hash_free_list_of_cpu()].head;
	uint64_t old = atomic_load_explicit(head, memory_order_relaxed);
	uint64_t new;

	do {
		atomic_store_explicit(&hash_elem(v, idx)->free_next, (uint32_t)old,
				      memory_order_relaxed);
		new = ((old >> 32) + 1) << 32 | idx;
	} while (!atomic_compare_exchange_weak_explicit(head, &old, new, memory_order_release,
							memory_order_relaxed));
}

/*
 * Find key in bucket b with the bucket lock held.  Returns the element
 * index or HASH_NIL, and the link that points to it in *link.
 */
static uint32_t hash_find_locked(const struct hash_view *v, uint32_t b, uint32_t h,
				 const void *key, _Atomic uint32_t **link)
{
	_Atomic uint32_t *l = &v->buckets[b].head;

	for (uint32_t i = atomic_load_explicit(l, memory_order_relaxed); !(i & HASH_NULLS);
	     i = atomic_load_explicit(l, memory_order_relaxed)) {
		struct hash_elem *el = hash_elem(v, i);
		if (atomic_load_explicit(&el->hash, memory_order_relaxed) == h &&
		    !memcmp(hash_key(v, el), key, v->map->def.key_size)) {
			*link = l;
			return i;
		}
		l = &el->next;
	}
	return HASH_NIL;
}

static void hash_lru_touch(const struct hash_view *v, struct hash_elem *el)
{
	uint32_t now = atomic_load_explicit(&v->ctl->lru_tick, memory_order_relaxed);
	if (atomic_load_explicit(&el->atime, memory_order_relaxed) != now)
		atomic_store_explicit(&el->atime, now, memory_order_relaxed);
}

static void *hash_lookup(struct map *map, const void *key)
{
	struct hash_view v = hash_view_of(map);
	uint32_t h = hash_bytes(key, map->def.key_size);
	uint32_t b = h & (v.l.n_buckets - 1);
	uint32_t i;

again:
	for (i = atomic_load_explicit(&v.buckets[b].head, memory_order_acquire);
	     !(i & HASH_NULLS);
	     i = atomic_load_explicit(&hash_elem(&v, i)->next, memory_order_acquire)) {
		struct hash_elem *el = hash_elem(&v, i);
		if (atomic_load_explicit(&el->hash, memory_order_relaxed) != h ||
		    memcmp(hash_key(&v, el), key, map->def.key_size))
			continue;
		if (hash_is_lru(&map->def))
			hash_lru_touch(&v, el);
		return hash_value(&v, el, hash_is_percpu(&map->def) ? map_this_cpu(map) : 0);
	}
	if (i != (HASH_NULLS | b))
		goto again; /* walked into another bucket through a reused element */
	return NULL;
}

/* Remove element i if it is still linked in its bucket; 0 if it was. */
static int hash_unlink_if_linked(const struct hash_view *v, uint32_t i)
{
	struct hash_elem *el = hash_elem(v, i);
	uint32_t b = atomic_load_explicit(&el->hash, memory_order_relaxed) & (v->l.n_buckets - 1);
	_Atomic uint32_t *link = &v->buckets[b].head;

	map_lock(&v->buckets[b].lock);
	for (uint32_t j = atomic_load_explicit(link, memory_order_relaxed); !(j & HASH_NULLS);
	     j = atomic_load_explicit(link, memory_order_relaxed)) {
		if (j == i) {
			atomic_store_explicit(link, atomic_load_explicit(&el->next, memory_order_relaxed),
					      memory_order_release);
			atomic_store_explicit(&el->linked, 0, memory_order_relaxed);
			atomic_fetch_sub_explicit(&v->ctl->count, 1, memory_order_relaxed);
			map_unlock(&v->buckets[b].lock);
			hash_free_push(v, i);
			return 0;
		}
		link = &hash_elem(v, j)->next;
	}
	map_unlock(&v->buckets[b].lock);
	return -ENOENT; /* deleted, evicted or moved meanwhile */
}

/* Evict the oldest of a sample of live entries.  Called with no lock held. */
static void hash_lru_evict(const struct hash_view *v)
{
	for (int attempt = 0; attempt < 4; attempt++) {
		uint32_t victim = HASH_NIL, oldest = 0, sampled = 0;

		/* The hand moves a window at a time: one atomic per window, not
		 * per element. */
		for (uint32_t seen = 0; seen < v->l.n_elems && sampled < HASH_LRU_SAMPLE;
		     seen += HASH_LRU_WINDOW) {
			uint32_t start = atomic_fetch_add_explicit(&v->ctl->lru_hand, HASH_LRU_WINDOW,
								   memory_order_relaxed);
			for (uint32_t w = 0; w < HASH_LRU_WINDOW && sampled < HASH_LRU_SAMPLE; w++) {
				uint32_t i = (start + w) % v->l.n_elems;
				struct hash_elem *el = hash_elem(v, i);
				if (!atomic_load_explicit(&el->linked, memory_order_relaxed))
					continue;
				uint32_t t = atomic_load_explicit(&el->atime, memory_order_relaxed);
				sampled++;
				/* Stamps wrap: compare by signed distance. */
				if (victim == HASH_NIL || (int32_t)(t - oldest) < 0)
					victim = i, oldest = t;
			}
		}
		if (victim == HASH_NIL || !hash_unlink_if_linked(v, victim))
			return;
	}
}

/*
 * A free element, filled with key and value, not yet linked.  Waits while
 * every spare element is held by updates in flight (they give them back
 * without blocking); an LRU map evicts to make room.
 */
static uint32_t hash_alloc_filled(const struct hash_view *v, uint32_t h, const void *key,
				  const void *value, int all_cpus)
{
	const struct map_def *def = &v->map->def;
	uint32_t idx;

	/* Up to two evictions: concurrent inserts into an almost full map can
	 * overshoot max_entries, and the second brings the count back. */
	for (int i = 0; hash_is_lru(def) && i < 2 &&
			atomic_load_explicit(&v->ctl->count, memory_order_relaxed) >= def->max_entries;
	     i++)
		hash_lru_evict(v);
	while ((idx = hash_free_pop(v)) == HASH_NIL) {
		if (hash_is_lru(def))
			hash_lru_evict(v);
		else
			sched_yield();
	}
	struct hash_elem *el = hash_elem(v, idx);
	atomic_store_explicit(&el->hash, h, memory_order_relaxed);
	if (hash_is_lru(def))
		atomic_store_explicit(&el->atime,
				      atomic_fetch_add_explicit(&v->ctl->lru_tick, 1,
								memory_order_relaxed) + 1,
				      memory_order_relaxed);
	memcpy(hash_key(v, el), key, def->key_size);
	if (!hash_is_percpu(def)) {
		memcpy(hash_value(v, el, 0), value, def->value_size);
	} else {
		unsigned self = all_cpus ? 0 : map_this_cpu(v->map);
		for (unsigned cpu = 0; cpu < v->map->nr_cpus; cpu++) {
			if (all_cpus)
				memcpy(hash_value(v, el, cpu),
				       (const unsigned char *)value + cpu * v->l.value_stride,
				       def->value_size);
			else if (cpu == self)
				memcpy(hash_value(v, el, cpu), value, def->value_size);
			else
				memset(hash_value(v, el, cpu), 0, def->value_size);
		}
	}
	return idx;
}

/* Per-CPU maps: overwrite an existing element's slot(s) in place. */
static void hash_percpu_store(const struct hash_view *v, struct hash_elem *el,
			      const void *value, int all_cpus)
{
	if (!all_cpus) {
		memcpy(hash_value(v, el, map_this_cpu(v->map)), value, v->map->def.value_size);
		return;
	}
	for (unsigned cpu = 0; cpu < v->map->nr_cpus; cpu++)
		memcpy(hash_value(v, el, cpu), (const unsigned char *)value + cpu * v->l.value_stride,
		       v->map->def.value_size);
}

static int hash_update(struct map *map, const void *key, const void *value, uint64_t flags,
		       int all_cpus)
{
	struct hash_view v = hash_view_of(map);
	const struct map_def *def = &map->def;
	uint32_t h = hash_bytes(key, def->key_size);
	uint32_t b = h & (v.l.n_buckets - 1);
	uint32_t fresh = hash_alloc_filled(&v, h, key, value, all_cpus);
	struct hash_elem *el = hash_elem(&v, fresh);
	_Atomic uint32_t *link;
	int err = 0;

	map_lock(&v.buckets[b].lock);
	uint32_t old = hash_find_locked(&v, b, h, key, &link);
	if (old != HASH_NIL) {
		struct hash_elem *old_el = hash_elem(&v, old);
		if (flags == MAP_NOEXIST) {
			err = -EEXIST;
		} else if (hash_is_percpu(def)) {
			hash_percpu_store(&v, old_el, value, all_cpus);
			if (hash_is_lru(def))
				hash_lru_touch(&v, old_el);
		} else {
			atomic_store_explicit(&el->next,
					      atomic_load_explicit(&old_el->next, memory_order_relaxed),
					      memory_order_relaxed);
			atomic_store_explicit(&el->linked, 1, memory_order_relaxed);
			atomic_store_explicit(link, fresh, memory_order_release);
			atomic_store_explicit(&old_el->linked, 0, memory_order_relaxed);
			fresh = old; /* the replaced element goes back */
		}
	} else if (flags == MAP_EXIST) {
		err = -ENOENT;
	} else if (atomic_fetch_add_explicit(&v.ctl->count, 1, memory_order_relaxed) >=
			   def->max_entries &&
		   !hash_is_lru(def)) {
		atomic_fetch_sub_explicit(&v.ctl->count, 1, memory_order_relaxed);
		err = -E2BIG;
	} else {
		atomic_store_explicit(&el->next,
				      atomic_load_explicit(&v.buckets[b].head, memory_order_relaxed),
				      memory_order_relaxed);
		atomic_store_explicit(&el->linked, 1, memory_order_relaxed);
		atomic_store_explicit(&v.buckets[b].head, fresh, memory_order_release);
		fresh = HASH_NIL;
	}
	map_unlock(&v.buckets[b].lock);
	if (fresh != HASH_NIL)
		hash_free_push(&v, fresh);
	return err;
}

static int hash_delete(struct map *map, const void *key)
{
	struct hash_view v = hash_view_of(map);
	uint32_t h = hash_bytes(key, map->def.key_size);
	uint32_t b = h & (v.l.n_buckets - 1);
	_Atomic uint32_t *link;

	map_lock(&v.buckets[b].lock);
	uint32_t i = hash_find_locked(&v, b, h, key, &link);
	if (i == HASH_NIL) {
		map_unlock(&v.buckets[b].lock);
		return -ENOENT;
	}
	struct hash_elem *el = hash_elem(&v, i);
	/* el->next stays intact, so a reader standing on el walks on. */
	atomic_store_explicit(link, atomic_load_explicit(&el->next, memory_order_relaxed),
			      memory_order_release);
	atomic_store_explicit(&el->linked, 0, memory_order_relaxed);
	atomic_fetch_sub_explicit(&v.ctl->count, 1, memory_order_relaxed);
	map_unlock(&v.buckets[b].lock);
	hash_free_push(&v, i);
	return 0;
}

static int hash_lookup_copy(struct map *map, const void *key, void *value)
{
	struct hash_view v = hash_view_of(map);
	uint32_t h = hash_bytes(key, map->def.key_size);
	uint32_t b = h & (v.l.n_buckets - 1);
	unsigned slots = hash_is_percpu(&map->def) ? map->nr_cpus : 1;
	_Atomic uint32_t *link;

	map_lock(&v.buckets[b].lock);
	uint32_t i = hash_find_locked(&v, b, h, key, &link);
	if (i != HASH_NIL)
		for (unsigned cpu = 0; cpu < slots; cpu++)
			memcpy((unsigned char *)value + cpu * v.l.value_stride,
			       hash_value(&v, hash_elem(&v, i), cpu), map->def.value_size);
	map_unlock(&v.buckets[b].lock);
	return i == HASH_NIL ? -ENOENT : 0;
}

/*
 * Bucket order, then chain order: with no concurrent updates every key is
 * visited once.  A key that is not in the map restarts from the first key
 * (Linux's behaviour).
 */
static int hash_get_next_key(struct map *map, const void *key, void *next_key)
{
	struct hash_view v = hash_view_of(map);
	uint32_t b = 0;

	if (key) {
		uint32_t h = hash_bytes(key, map->def.key_size);
		_Atomic uint32_t *link;
		uint32_t kb = h & (v.l.n_buckets - 1);

		map_lock(&v.buckets[kb].lock);
		uint32_t i = hash_find_locked(&v, kb, h, key, &link);
		if (i != HASH_NIL) {
			uint32_t next = atomic_load_explicit(&hash_elem(&v, i)->next,
							     memory_order_relaxed);
			if (!(next & HASH_NULLS)) {
				memcpy(next_key, hash_key(&v, hash_elem(&v, next)), map->def.key_size);
				map_unlock(&v.buckets[kb].lock);
				return 0;
			}
			b = kb + 1;
		}
		map_unlock(&v.buckets[kb].lock);
	}
	for (; b < v.l.n_buckets; b++) {
		map_lock(&v.buckets[b].lock);
		uint32_t i = atomic_load_explicit(&v.buckets[b].head, memory_order_relaxed);
		if (!(i & HASH_NULLS))
			memcpy(next_key, hash_key(&v, hash_elem(&v, i)), map->def.key_size);
		map_unlock(&v.buckets[b].lock);
		if (!(i & HASH_NULLS))
			return 0;
	}
	return -ENOENT;
}

/* All three hash types: the type in the definition selects per-CPU and LRU. */
const struct map_ops map_hash_ops = {
	.check = hash_check,
	.area_size = hash_area_size,
	.format = hash_format,
	.lookup = hash_lookup,
	.update = hash_update,
	.delete = hash_delete,
	.lookup_copy = hash_lookup_copy,
	.get_next_key = hash_get_next_key,
};
