/* SPDX-License-Identifier: MIT */
/*
 * ptx_rt_dev.cu - the device runtime: helpers and maps, as PTX functions.
 *
 * Compiled at build time with `nvcc -ptx` (never at run time) and embedded
 * into libgpuext (ptx_rt_text.c); ptx_emit_runtime() writes it into every
 * module after the header.  Every function is extern "C", named gx_rt_*,
 * takes and returns 64-bit values: the translator calls them with the eBPF
 * argument registers (ptx_helpers.c says which function serves which
 * helper id, and which hidden arguments follow).
 *
 * Concurrency: any number of warps on any number of SMs call these at once.
 * Hash slots are claimed with compare-and-swap and published with a release
 * exchange; ring buffer space is taken from a byte budget and placed with a
 * fetch-and-add on the producer position (no compare-and-swap loop, which
 * serialises thousands of warps); see docs/device-maps.md for the algorithms
 * and the guarantees.
 */
#include "ptx_devmap.h"

#ifdef GX_RT_HOST_MODEL
typedef uint64_t u64; /* the type of ptx_devmap's fields on the host */
#else
typedef unsigned long long u64; /* what CUDA's 64-bit atomics take */
#endif
typedef unsigned int u32;

/* GX_RT_HOST_MODEL: this file compiled as C on the CPU, with the CUDA
 * intrinsics modelled by C11 atomics, to test the map algorithms with host
 * threads (tests/unit/test_ptx_rt_model.c).  The GPU build never sets it. */
#ifndef GX_RT_HOST_MODEL
#define RT extern "C" __device__ __noinline__
#endif
#define E2BIG 7
#define ENOENT 2
#define EEXIST 17
#define EINVAL 22
#define EAGAIN 11

/* Linux map types and update flags. */
enum { T_HASH = 1, T_ARRAY = 2, T_PERCPU_HASH = 5, T_PERCPU_ARRAY = 6, T_LRU_HASH = 9,
       T_RINGBUF = 27 };
enum { F_ANY = 0, F_NOEXIST = 1, F_EXIST = 2 };

#ifndef GX_RT_HOST_MODEL
static __device__ __forceinline__ u32 rt_smid(void)
{
	u32 r;
	asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
	return r;
}

static __device__ __forceinline__ u32 rt_laneid(void)
{
	u32 r;
	asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
	return r;
}

static __device__ __forceinline__ u64 rt_globaltimer(void)
{
	u64 r;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(r));
	return r;
}

/* Acquire load at GPU scope: what the slot's writer published before its
 * release is visible after it (and L1 copies of the slot are not used). */
static __device__ __forceinline__ u32 rt_ld_acquire_gpu(const u32 *p)
{
	u32 r;
	asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(r) : "l"(p) : "memory");
	return r;
}

/* 64-bit loads at GPU scope (from the L2, never from a stale L1 line). */
static __device__ __forceinline__ u64 rt_ld_relaxed_gpu64(const void *p)
{
	u64 r;
	asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(r) : "l"(p) : "memory");
	return r;
}

static __device__ __forceinline__ u64 rt_ld_acquire_gpu64(const void *p)
{
	u64 r;
	asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(r) : "l"(p) : "memory");
	return r;
}

/* Release store at system scope: every write this thread made before it,
 * to pinned host memory included, is visible to the host before this one. */
static __device__ __forceinline__ void rt_st_release_sys(u32 *p, u32 v)
{
	asm volatile("st.release.sys.u32 [%0], %1;" : : "l"(p), "r"(v) : "memory");
}

/* Relaxed load at system scope: the host's consumer position. */
static __device__ __forceinline__ u64 rt_ld_relaxed_sys(const u64 *p)
{
	u64 r;
	asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(r) : "l"(p) : "memory");
	return r;
}
#endif

static __device__ __forceinline__ void rt_copy(void *dst, const void *src, u32 n)
{
	unsigned char *d = (unsigned char *)dst;
	const unsigned char *s = (const unsigned char *)src;

	if ((((u64)d | (u64)s | n) & 7) == 0) {
		for (u32 i = 0; i < n; i += 8)
			*(u64 *)(d + i) = *(const u64 *)(s + i);
		return;
	}
	for (u32 i = 0; i < n; i++)
		d[i] = s[i];
}

static __device__ __forceinline__ int rt_equal(const void *a, const void *b, u32 n)
{
	const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
	for (u32 i = 0; i < n; i++)
		if (x[i] != y[i])
			return 0;
	return 1;
}

/* A slot's state; acquire, so that the hash, key and value written before
 * the state was published are read as published. */
static __device__ __forceinline__ u32 rt_load_state(const u32 *s)
{
	return rt_ld_acquire_gpu(s);
}

/* Wait until the claiming thread has published (or given back) the slot. */
static __device__ __forceinline__ u32 rt_wait_slot(const u32 *s)
{
	u32 st;
	while ((st = rt_load_state(s)) == PTX_SLOT_BUSY)
		__nanosleep(32);
	return st;
}

static __device__ __forceinline__ unsigned char *rt_slot(struct ptx_devmap *m, u32 i)
{
	return (unsigned char *)m->data + (u64)i * m->slot_size;
}

/*
 * Find key's slot: the slot holding it (LIVE or DELETED), or NULL when an
 * EMPTY slot ends the probe sequence first.  *empty gets that slot.
 */
static __device__ unsigned char *rt_hash_find(struct ptx_devmap *m, const void *key, u32 h,
					      unsigned char **empty)
{
	u32 mask = m->nr_slots - 1;

	*empty = 0;
	for (u32 n = 0; n < m->nr_slots; n++) {
		unsigned char *s = rt_slot(m, (h + n) & mask);
		u32 st = rt_wait_slot((u32 *)s);
		if (st == PTX_SLOT_EMPTY) {
			*empty = s;
			return 0;
		}
		if (((u32 *)s)[1] == h && rt_equal(s + 8, key, m->key_size))
			return s;
	}
	return 0;
}

/* Word i of an 8-byte aligned key of n bytes, zero-extended past n (the
 * bytes after the key are not read: they may not be the key's). */
static __device__ __forceinline__ u64 rt_key_word(const void *key, u32 n, u32 i)
{
	if (8 * i + 8 <= n)
		return ((const u64 *)key)[i];
	const unsigned char *k = (const unsigned char *)key + 8 * i;
	u64 w = 0;
	for (u32 b = 0; b < n - 8 * i; b++)
		w |= (u64)k[b] << (8 * b);
	return w;
}

/*
 * ptx_devmap_hash, reading an 8-byte aligned key a word at a time: the
 * loads do not wait for each other (the byte loop's did, one round trip to
 * local memory per byte).  Same value as ptx_devmap_hash, which the host
 * uses to find keys in a snapshot.
 */
static __device__ __forceinline__ u32 rt_key_hash(const void *key, u32 n)
{
	if ((u64)key & 7)
		return ptx_devmap_hash(key, n);
	u32 h = 2166136261u;
	for (u32 i = 0; i < n; i += 8) {
		u64 w = rt_key_word(key, n, i / 8);
		u32 left = n - i < 8 ? n - i : 8;
		for (u32 b = 0; b < left; b++, w >>= 8)
			h = (h ^ (u32)(w & 0xff)) * 16777619u;
	}
	return h | 1;
}

/*
 * The fast path of a lookup: the key's home slot, if it holds the key LIVE,
 * in one round trip to the L2: the slot's key words (relaxed) and then its
 * state and hash (acquire) are issued together and compared together.
 * Reading the key before the state is safe because a slot's hash and key
 * are written once, before the slot is first published, and never change
 * after (a deleted slot stays bound to its key): a key read too early is the
 * zeroed memory of a free slot, which fails the hash comparison (a hash is
 * never 0) or, for an all-zero key, is that very key.  The acquire orders
 * the caller's reads of the value after the publication.  NULL: the slow
 * path (rt_hash_find) decides, also for keys that are not 8-byte aligned.
 * The slot's bytes after the key are zero (slots start zeroed and a slot
 * only ever holds one key), like rt_key_word's.
 */
static __device__ unsigned char *rt_hash_home(struct ptx_devmap *m, const void *key, u32 h)
{
	if ((u64)key & 7)
		return 0;
	unsigned char *s = rt_slot(m, h & (m->nr_slots - 1));
	const u64 *sk = (const u64 *)(s + 8);
	u32 n = m->key_size;
	u64 diff = 0;

	for (u32 i = 0; i < (n + 7) / 8; i++)
		diff |= rt_ld_relaxed_gpu64(sk + i) ^ rt_key_word(key, n, i);
	u64 state_hash = rt_ld_acquire_gpu64(s); /* {u32 state, u32 hash} */
	if ((u32)state_hash != PTX_SLOT_LIVE || (u32)(state_hash >> 32) != h || diff)
		return 0;
	return s;
}

/* The per-SM copy (of nr) a program on this SM sees: min(%smid, nr - 1),
 * one instruction where a remainder by the SM count is a dozen; %smid
 * counts a GPU's SMs from 0, so this is the SM's own copy (as the inline
 * lookups of ptx_emit.c compute it). */
static __device__ __forceinline__ u32 rt_sm_copy(u32 nr)
{
	u32 s = rt_smid();
	return s < nr - 1 ? s : nr - 1;
}

static __device__ void *rt_array_elem(struct ptx_devmap *m, const void *key)
{
	u32 k = *(const u32 *)key;
	if (k >= m->max_entries)
		return 0;
	u64 off = (u64)k * m->value_stride;
	if (m->type == T_PERCPU_ARRAY) /* this SM's copy, on lines of its own */
		off += (u64)rt_sm_copy(m->nr_sms) * m->sm_stride;
	return (unsigned char *)m->data + off;
}

/* The value of a hash slot that a program on this SM sees: a per-SM hash
 * has one per SM, side by side after the key. */
static __device__ unsigned char *rt_slot_value(struct ptx_devmap *m, unsigned char *s)
{
	unsigned char *v = s + 8 + m->key_stride;
	if (m->type == T_PERCPU_HASH)
		v += (u64)rt_sm_copy(m->nr_sms) * m->value_stride;
	return v;
}

RT u64 gx_rt_map_lookup(u64 map, u64 key)
{
	struct ptx_devmap *m = (struct ptx_devmap *)map;
	unsigned char *empty;

	if (m->type == T_ARRAY || m->type == T_PERCPU_ARRAY)
		return (u64)rt_array_elem(m, (const void *)key);
	if (m->type != T_HASH && m->type != T_PERCPU_HASH && m->type != T_LRU_HASH)
		return 0;
	u32 h = rt_key_hash((const void *)key, m->key_size);
	unsigned char *s = rt_hash_home(m, (const void *)key, h);
	if (!s) {
		s = rt_hash_find(m, (const void *)key, h, &empty);
		if (!s || rt_load_state((u32 *)s) != PTX_SLOT_LIVE)
			return 0;
	}
	return (u64)rt_slot_value(m, s);
}

/* Take one element of the capacity; 0 when the map is full. */
static __device__ int rt_hash_take(struct ptx_devmap *m)
{
	if (atomicAdd(&m->count, 1u) < m->max_entries)
		return 1;
	atomicSub(&m->count, 1u);
	return 0;
}

/* Publish a slot this thread holds BUSY: value, then state (after a fence,
 * which makes the exchange a release at GPU scope).  A per-SM hash's new
 * element has this SM's value and zero for the other SMs (as a per-CPU
 * element inserted by a Linux program). */
static __device__ void rt_hash_publish(struct ptx_devmap *m, unsigned char *s, const void *value)
{
	if (m->type == T_PERCPU_HASH) {
		u64 *all = (u64 *)(s + 8 + m->key_stride);
		for (u32 i = 0; i < m->nr_sms * m->value_stride / 8; i++)
			all[i] = 0;
	}
	rt_copy(rt_slot_value(m, s), value, m->value_size);
	__threadfence();
	atomicExch((u32 *)s, (u32)PTX_SLOT_LIVE);
}

/*
 * The slot is claimed (BUSY) before the capacity is taken: a thread that
 * loses the claim never holds capacity, so the count exceeds the live keys
 * only by inserts of distinct keys in flight, and a map with room for every
 * key never reports full (taking capacity first let the losers of one
 * slot's race -- 32 lanes of a warp in per-thread mode -- make other keys'
 * inserts fail).  Full after the claim: the slot goes back to what it was.
 */
static __device__ long long rt_hash_update(struct ptx_devmap *m, const void *key,
					   const void *value, u64 flags)
{
	u32 h = rt_key_hash(key, m->key_size);
	unsigned char *home = rt_hash_home(m, key, h);

	if (home) { /* the key is LIVE in its home slot: the common update */
		if (flags == F_NOEXIST)
			return -EEXIST;
		rt_copy(rt_slot_value(m, home), value, m->value_size);
		return 0;
	}
	for (;;) {
		unsigned char *empty, *s = rt_hash_find(m, key, h, &empty);
		if (s) {
			u32 st = rt_load_state((u32 *)s);
			if (st == PTX_SLOT_LIVE) {
				if (flags == F_NOEXIST)
					return -EEXIST;
				rt_copy(rt_slot_value(m, s), value, m->value_size);
				return 0;
			}
			/* DELETED, bound to this key: revive it. */
			if (flags == F_EXIST)
				return -ENOENT;
			if (atomicCAS((u32 *)s, PTX_SLOT_DELETED, PTX_SLOT_BUSY) != PTX_SLOT_DELETED)
				continue; /* someone else revived or it changed: look again */
			if (!rt_hash_take(m)) {
				atomicExch((u32 *)s, (u32)PTX_SLOT_DELETED);
				return -E2BIG;
			}
			rt_hash_publish(m, s, value);
			return 0;
		}
		if (flags == F_EXIST)
			return -ENOENT;
		if (!empty)
			return -E2BIG; /* every slot is bound to another key */
		if (atomicCAS((u32 *)empty, PTX_SLOT_EMPTY, PTX_SLOT_BUSY) != PTX_SLOT_EMPTY)
			continue; /* another thread claimed it (maybe for this key): look again */
		if (!rt_hash_take(m)) {
			/* Nothing was written: waiters see EMPTY again, as before. */
			atomicExch((u32 *)empty, (u32)PTX_SLOT_EMPTY);
			return -E2BIG;
		}
		((u32 *)empty)[1] = h;
		rt_copy(empty + 8, key, m->key_size);
		rt_hash_publish(m, empty, value);
		return 0;
	}
}

RT u64 gx_rt_map_update(u64 map, u64 key, u64 value, u64 flags)
{
	struct ptx_devmap *m = (struct ptx_devmap *)map;

	if (flags > F_EXIST)
		return (u64)-EINVAL;
	if (m->type == T_ARRAY || m->type == T_PERCPU_ARRAY) {
		void *v = rt_array_elem(m, (const void *)key);
		if (!v)
			return (u64)-E2BIG;
		if (flags == F_NOEXIST)
			return (u64)-EEXIST;
		rt_copy(v, (const void *)value, m->value_size);
		return 0;
	}
	if (m->type != T_HASH && m->type != T_PERCPU_HASH && m->type != T_LRU_HASH)
		return (u64)-EINVAL;
	return (u64)rt_hash_update(m, (const void *)key, (const void *)value, flags);
}

RT u64 gx_rt_map_delete(u64 map, u64 key)
{
	struct ptx_devmap *m = (struct ptx_devmap *)map;
	unsigned char *empty;

	if (m->type != T_HASH && m->type != T_PERCPU_HASH && m->type != T_LRU_HASH)
		return (u64)-EINVAL;
	u32 h = rt_key_hash((const void *)key, m->key_size);
	unsigned char *s = rt_hash_find(m, (const void *)key, h, &empty);
	if (!s || atomicCAS((u32 *)s, PTX_SLOT_LIVE, PTX_SLOT_DELETED) != PTX_SLOT_LIVE)
		return (u64)-ENOENT;
	atomicSub(&m->count, 1u);
	return 0;
}

/* One record dropped: counted on this SM's counter (drops come in floods,
 * from every warp of a grid that outruns the host). */
static __device__ void rt_rb_drop(struct ptx_devmap *m)
{
	atomicAdd((u64 *)(m->data + (u64)rt_sm_copy(m->nr_sms) * PTX_RB_DROP_STRIDE), 1ull);
}

/*
 * Ring buffer space, in two steps that are each one atomic add:
 *  - the budget: rb_resv counts the bytes taken; a taker that finds more
 *    than rb_size bytes between it and the consumer position gives its bytes
 *    back and the call is a drop.  The consumer position is the cached
 *    rb_cons_seen, read over the bus from the host only when that says full;
 *  - the place: a fetch-and-add of the same bytes on rb_prod.  Placements
 *    never outrun the budget (every placed byte was taken before, and a
 *    taker checked all bytes taken before it), so the place is free.
 * A compare-and-swap loop on rb_prod did both at once but lets one warp of
 * thousands win per round trip (millions of cycles per record under
 * contention); adds are served by the L2 at their rate.
 */
static __device__ int rt_rb_take(struct ptx_devmap *m, u64 total)
{
	u64 used = atomicAdd((u64 *)&m->rb_resv, total) + total;

	if (used - *(volatile u64 *)&m->rb_cons_seen <= m->rb_size)
		return 1;
	u64 cons = rt_ld_relaxed_sys((const u64 *)&((struct ptx_rb_ctrl *)m->rb_ctrl)->cons);
	atomicMax((u64 *)&m->rb_cons_seen, cons);
	if (used - cons <= m->rb_size)
		return 1;
	atomicAdd((u64 *)&m->rb_resv, (u64)0 - total);
	return 0;
}

/* A submitted, discarded record of n bytes (header included) at p: padding. */
static __device__ void rt_rb_pad(unsigned char *p, u64 n)
{
	*(volatile u32 *)p = (u32)(n - PTX_RB_HDR_SIZE) | PTX_RB_DONE | PTX_RB_DISCARD;
}

/*
 * Claim a record of len data bytes: the 8-byte header + data rounded up to
 * 8.  Records are contiguous (there is no double mapping): a place that
 * crosses the end of the buffer becomes two padding records, one up to the
 * end and one from the start, and the record is claimed again.  Returns the
 * record's header (written BUSY with the length), or NULL and one drop
 * counted when the buffer is full.
 */
static __device__ u32 *rt_rb_claim(struct ptx_devmap *m, u32 len)
{
	u64 size = m->rb_size, total = ((u64)len + 7) / 8 * 8 + PTX_RB_HDR_SIZE;
	unsigned char *data = (unsigned char *)m->rb_data;

	if (m->type != T_RINGBUF || len > PTX_RB_LEN_MASK || total > size / 2)
		return 0;
	for (;;) {
		if (!rt_rb_take(m, total)) {
			rt_rb_drop(m);
			return 0;
		}
		u64 off = atomicAdd((u64 *)&m->rb_prod, total) & (size - 1);
		if (off + total <= size) {
			u32 *hdr = (u32 *)(data + off);
			*(volatile u32 *)hdr = len | PTX_RB_BUSY;
			return hdr;
		}
		/* Both pieces are multiples of 8 bytes, so each holds a header. */
		rt_rb_pad(data + off, size - off);
		rt_rb_pad(data, off + total - size);
	}
}

/* Make the record's data visible to the host before its header says so. */
static __device__ void rt_rb_commit(u32 *hdr, u32 len, u32 flag)
{
	rt_st_release_sys(hdr, len | PTX_RB_DONE | flag);
}

RT u64 gx_rt_ringbuf_reserve(u64 map, u64 size, u64 flags)
{
	if (flags || size > PTX_RB_LEN_MASK)
		return 0;
	u32 *hdr = rt_rb_claim((struct ptx_devmap *)map, (u32)size);
	return hdr ? (u64)hdr + PTX_RB_HDR_SIZE : 0;
}

static __device__ void rt_rb_finish(u64 rec, u32 flag)
{
	u32 *hdr = (u32 *)(rec - PTX_RB_HDR_SIZE);
	u32 len = *(volatile u32 *)hdr & PTX_RB_LEN_MASK;
	rt_rb_commit(hdr, len, flag);
}

RT u64 gx_rt_ringbuf_submit(u64 rec, u64 flags)
{
	rt_rb_finish(rec, 0);
	return 0;
}

RT u64 gx_rt_ringbuf_discard(u64 rec, u64 flags)
{
	rt_rb_finish(rec, PTX_RB_DISCARD);
	return 0;
}

RT u64 gx_rt_ringbuf_output(u64 map, u64 data, u64 size, u64 flags)
{
	if (size > PTX_RB_LEN_MASK)
		return (u64)-E2BIG;
	u32 *hdr = rt_rb_claim((struct ptx_devmap *)map, (u32)size);
	if (!hdr)
		return (u64)-EAGAIN;
	rt_copy(hdr + 2, (const void *)data, (u32)size);
	rt_rb_commit(hdr, (u32)size, 0);
	return 0;
}

RT u64 gx_rt_ringbuf_query(u64 map, u64 flags)
{
	struct ptx_devmap *m = (struct ptx_devmap *)map;
	u64 cons = *(volatile u64 *)&((struct ptx_rb_ctrl *)m->rb_ctrl)->cons;
	u64 prod = *(volatile u64 *)&m->rb_prod;

	switch (flags) {
	case 0: return prod - cons;   /* BPF_RB_AVAIL_DATA */
	case 1: return m->rb_size;    /* BPF_RB_RING_SIZE */
	case 2: return cons;          /* BPF_RB_CONS_POS */
	case 3: return prod;          /* BPF_RB_PROD_POS */
	default: return 0;
	}
}

/* trace_printk: the format and three arguments, as a record the host formats. */
RT u64 gx_rt_trace_printk(u64 fmt, u64 fmt_size, u64 a1, u64 a2, u64 a3, u64 ring)
{
	if (!ring)
		return (u64)-ENOENT;
	if (fmt_size > 256)
		return (u64)-E2BIG;
	u32 len = (u32)(sizeof(struct ptx_trace_rec) + fmt_size);
	u32 *hdr = rt_rb_claim((struct ptx_devmap *)ring, len);
	if (!hdr)
		return (u64)-EAGAIN;
	struct ptx_trace_rec *r = (struct ptx_trace_rec *)(hdr + 2);
	r->magic = PTX_TRACE_MAGIC;
	r->fmt_len = (u32)fmt_size;
	r->args[0] = a1;
	r->args[1] = a2;
	r->args[2] = a3;
	rt_copy(r + 1, (const void *)fmt, (u32)fmt_size);
	rt_rb_commit(hdr, len, 0);
	return fmt_size;
}

RT u64 gx_rt_globaltimer(void)
{
	return rt_globaltimer();
}

RT u64 gx_rt_clock(void)
{
	return (u64)clock64();
}

/* splitmix64 over the time, the clock and where the caller runs. */
RT u64 gx_rt_prandom(void)
{
	u64 z = rt_globaltimer() ^ ((u64)clock64() << 17) ^ ((u64)rt_smid() << 40) ^
		((u64)rt_laneid() << 56) ^ (u64)(threadIdx.x + blockIdx.x * 977u);
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (u32)(z ^ (z >> 31));
}

RT u64 gx_rt_sm_id(void)
{
	return rt_smid();
}

RT u64 gx_rt_lane_id(void)
{
	return rt_laneid();
}

/* Warp index in the block (threads numbered x-fastest, 32 per warp). */
RT u64 gx_rt_warp_id(void)
{
	u32 t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
	return t / 32;
}

RT u64 gx_rt_block_idx(u64 dim)
{
	return dim == 0 ? blockIdx.x : dim == 1 ? blockIdx.y : dim == 2 ? blockIdx.z : 0;
}

RT u64 gx_rt_thread_idx(u64 dim)
{
	return dim == 0 ? threadIdx.x : dim == 1 ? threadIdx.y : dim == 2 ? threadIdx.z : 0;
}

RT u64 gx_rt_grid_dim(u64 dim)
{
	return dim == 0 ? gridDim.x : dim == 1 ? gridDim.y : dim == 2 ? gridDim.z : 0;
}

RT u64 gx_rt_block_dim(u64 dim)
{
	return dim == 0 ? blockDim.x : dim == 1 ? blockDim.y : dim == 2 ? blockDim.z : 0;
}

/* The warp word: mask in bits 0..31, per-thread mode in bit 32. */
RT u64 gx_rt_active_mask(u64 warp)
{
	return (u32)warp;
}

RT u64 gx_rt_lane_count(u64 warp)
{
	return (warp >> 32) & 1 ? 1 : __popc((u32)warp);
}

RT u64 gx_rt_per_thread(u64 warp)
{
	return (warp >> 32) & 1;
}
