/* SPDX-License-Identifier: MIT */
#include "ptx_rt.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_arena.h"
#include "ptx_wrap.h"

enum { PTX_RB_CTRL_BYTES = 4096 };

/* GPU ordinal's description, no context made. */
static int ptx_rt_device(int ordinal, struct ptx_rt **out, struct err *e)
{
	const struct cu_driver *cu;
	struct ptx_rt *rt;
	int count = 0, err;
	CUresult r;

	err = cu_driver_load(&cu, e);
	if (err)
		return err;
	r = cu->device_get_count(&count);
	if (r != CUDA_SUCCESS)
		return cu_err(cu, e, r, "cuDeviceGetCount");
	if (ordinal < 0 || ordinal >= count)
		return err_set(e, ENODEV, "no GPU %d (the driver sees %d)", ordinal, count);
	rt = calloc(1, sizeof(*rt));
	if (!rt)
		return err_set(e, ENOMEM, "out of memory");
	rt->cu = cu;
	if ((r = cu->device_get(&rt->dev, ordinal)) != CUDA_SUCCESS ||
	    (r = cu->device_get_attribute(&rt->cc_major,
					  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
					  rt->dev)) != CUDA_SUCCESS ||
	    (r = cu->device_get_attribute(&rt->cc_minor,
					  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
					  rt->dev)) != CUDA_SUCCESS ||
	    (r = cu->device_get_attribute(&rt->nr_sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
					  rt->dev)) != CUDA_SUCCESS ||
	    (r = cu->device_get_name(rt->name, sizeof(rt->name), rt->dev)) != CUDA_SUCCESS) {
		free(rt);
		return cu_err(cu, e, r, "querying the GPU");
	}
	ptx_target_from_cc(rt->cc_major, rt->cc_minor, &rt->target);
	*out = rt;
	return 0;
}

int ptx_rt_open(int ordinal, struct ptx_rt **out, struct err *e)
{
	struct ptx_rt *rt;
	int err = ptx_rt_device(ordinal, &rt, e);
	if (err)
		return err;
	const struct cu_driver *cu = rt->cu;
	CUresult r = cu->primary_ctx_retain(&rt->ctx, rt->dev);
	if (r != CUDA_SUCCESS) {
		free(rt);
		return cu_err(cu, e, r, "cuDevicePrimaryCtxRetain");
	}
	r = cu->ctx_set_current(rt->ctx);
	if (r != CUDA_SUCCESS) {
		cu->primary_ctx_release(rt->dev);
		free(rt);
		return cu_err(cu, e, r, "cuCtxSetCurrent");
	}
	*out = rt;
	return 0;
}

int ptx_rt_open_noctx(int ordinal, struct ptx_rt **out, struct err *e)
{
	return ptx_rt_device(ordinal, out, e);
}

void ptx_rt_close(struct ptx_rt *rt)
{
	if (!rt)
		return;
	if (rt->snap_stream)
		rt->cu->stream_destroy(rt->snap_stream);
	if (rt->ctx)
		rt->cu->primary_ctx_release(rt->dev);
	free(rt);
}

static uint32_t ptx_round8(uint32_t n)
{
	return (n + 7) & ~7u;
}

static int ptx_rt_map_check(const struct map_def *d, struct err *e)
{
	switch (d->type) {
	case MAP_TYPE_ARRAY:
	case MAP_TYPE_PERCPU_ARRAY:
		if (d->key_size != 4)
			return err_set(e, EINVAL, "map '%s': array keys are 4 bytes, not %u",
				       d->name, d->key_size);
		break;
	case MAP_TYPE_HASH:
	case MAP_TYPE_PERCPU_HASH:
	case MAP_TYPE_LRU_HASH:
		if (d->key_size == 0 || d->key_size > 512)
			return err_set(e, EINVAL, "map '%s': key size %u (1..512 on the GPU)",
				       d->name, d->key_size);
		if (d->max_entries > (1u << 28))
			return err_set(e, EINVAL, "map '%s': %u entries is too many for a GPU hash",
				       d->name, d->max_entries);
		break;
	case MAP_TYPE_RINGBUF:
		if (d->max_entries < 4096 || (d->max_entries & (d->max_entries - 1)))
			return err_set(e, EINVAL,
				       "map '%s': ring buffer size %u is not a power of 2 >= 4096",
				       d->name, d->max_entries);
		return 0;
	case MAP_TYPE_GPU_BLOCK_ARRAY: /* map_def_check holds its size to the limit */
		if (d->key_size != 4)
			return err_set(e, EINVAL, "map '%s': array keys are 4 bytes, not %u",
				       d->name, d->key_size);
		break;
	default:
		return err_set(e, ENOTSUP, "map '%s': type %u has no device implementation",
			       d->name, d->type);
	}
	if (d->max_entries == 0 || d->value_size == 0 || d->value_size > (1u << 20))
		return err_set(e, EINVAL, "map '%s': %u entries of %u bytes", d->name,
			       d->max_entries, d->value_size);
	return 0;
}

/* The header of a device map of def on rt's GPU, but for its addresses
 * (the data's layout: strides, per-SM copies, hash slots); its data's size. */
static size_t ptx_rt_map_layout(const struct ptx_rt *rt, const struct map_def *def,
				struct ptx_devmap *h)
{
	size_t len;
	h->type = def->type;
	h->key_size = def->key_size;
	h->value_size = def->value_size;
	h->max_entries = def->max_entries;
	h->value_stride = ptx_round8(def->value_size);
	h->key_stride = ptx_round8(def->key_size);
	h->nr_sms = def->type == MAP_TYPE_PERCPU_ARRAY || def->type == MAP_TYPE_PERCPU_HASH ||
				    def->type == MAP_TYPE_RINGBUF
			    ? (uint32_t)rt->nr_sms : 1;
	switch (def->type) {
	case MAP_TYPE_ARRAY:
	case MAP_TYPE_PERCPU_ARRAY:
		/* per-SM copies start on their own 128-byte line: SMs adding to
		 * their copy never contend for a line with another SM */
		h->sm_stride = ((uint64_t)def->max_entries * h->value_stride + 127) & ~127ull;
		len = (size_t)h->nr_sms * h->sm_stride;
		break;
	case MAP_TYPE_RINGBUF: /* the per-SM drop counters */
		len = (size_t)h->nr_sms * PTX_RB_DROP_STRIDE;
		break;
	case MAP_TYPE_GPU_BLOCK_ARRAY:
		/* values in each block's shared memory (ptx_block_array_sym): the
		 * header alone, for the map table; the runtime's helpers find no
		 * element in it (a lookup whose map the translator cannot name
		 * gets NULL) */
		len = 0;
		break;
	default: /* hashes: at most half full, so probe sequences stay short */
		h->nr_slots = 2;
		while (h->nr_slots < 2 * def->max_entries)
			h->nr_slots *= 2;
		h->slot_size = 8 + h->key_stride + h->nr_sms * h->value_stride;
		len = (size_t)h->nr_slots * h->slot_size;
		break;
	}
	return len;
}

size_t ptx_rt_map_bytes(const struct ptx_rt *rt, const struct map_def *def)
{
	struct ptx_devmap h = {0};
	return sizeof(h) + ptx_rt_map_layout(rt, def, &h);
}

int ptx_rt_arena_make(const struct ptx_rt *rt, uint64_t va, const struct map_def *const *defs,
		      size_t n, struct ptx_arena **out, struct err *e)
{
	size_t *bytes = calloc(n + 1, sizeof(*bytes));
	int err;

	if (!bytes)
		return err_set(e, ENOMEM, "out of memory");
	for (size_t k = 0; k < n; k++)
		bytes[k] = ptx_rt_map_bytes(rt, defs[k]);
	err = ptx_arena_make(rt->cu, rt->dev, va, bytes, n, out, e);
	free(bytes);
	return err;
}

int ptx_rt_map_create(struct ptx_rt *rt, const struct map_def *def, struct ptx_rt_map **out,
		      struct err *e)
{
	return ptx_rt_map_create_at(rt, def, SIZE_MAX, out, e);
}

int ptx_rt_map_create_at(struct ptx_rt *rt, const struct map_def *def, size_t slot,
			 struct ptx_rt_map **out, struct err *e)
{
	const struct cu_driver *cu = rt->cu;
	struct ptx_rt_map *m;
	struct ptx_devmap *h;
	CUresult r;
	int err = ptx_rt_map_check(def, e);

	if (err)
		return err;
	m = calloc(1, sizeof(*m));
	if (!m)
		return err_set(e, ENOMEM, "out of memory");
	m->rt = rt;
	m->def = *def;
	h = &m->hdr;
	m->data_len = ptx_rt_map_layout(rt, def, h);
	m->dev = ptx_arena_at(rt->arena, slot, sizeof(*h) + m->data_len);
	m->in_arena = m->dev != 0;
	r = m->in_arena ? CUDA_SUCCESS : cu->mem_alloc(&m->dev, sizeof(*h) + m->data_len);
	if (r != CUDA_SUCCESS) {
		free(m);
		return cu_err(cu, e, r, "allocating a device map");
	}
	/* values 8-aligned (cuMemAlloc's memory and an arena's places are
	 * 256-aligned, strides are
	 * multiples of 8): the translator drops the alignment test of
	 * accesses into them (ptx_stack.h, PTX_SPACE_GLOBAL) */
	_Static_assert(sizeof(*h) % 8 == 0, "device map data 8-aligned");
	h->data = m->dev + sizeof(*h);
	if (def->type == MAP_TYPE_RINGBUF) {
		CUdeviceptr d;
		r = cu->mem_host_alloc(&m->rb_host, PTX_RB_CTRL_BYTES + def->max_entries,
				       CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
		if (r != CUDA_SUCCESS) {
			m->rb_host = NULL;
			err = cu_err(cu, e, r, "allocating pinned ring buffer memory");
			goto fail;
		}
		memset(m->rb_host, 0, PTX_RB_CTRL_BYTES + def->max_entries);
		r = cu->mem_host_get_device_pointer(&d, m->rb_host, 0);
		if (r != CUDA_SUCCESS) {
			err = cu_err(cu, e, r, "mapping the ring buffer into the GPU");
			goto fail;
		}
		m->rb_ctrl = m->rb_host;
		m->rb_data = (unsigned char *)m->rb_host + PTX_RB_CTRL_BYTES;
		h->rb_ctrl = d;
		h->rb_data = d + PTX_RB_CTRL_BYTES;
		h->rb_size = def->max_entries;
	}
	if ((r = cu->memset_d8(m->dev, 0, sizeof(*h) + m->data_len)) != CUDA_SUCCESS ||
	    (r = cu->memcpy_htod(m->dev, h, sizeof(*h))) != CUDA_SUCCESS) {
		err = cu_err(cu, e, r, "initialising a device map");
		goto fail;
	}
	*out = m;
	return 0;
fail:
	ptx_rt_map_free(m);
	err_prefix(e, "map '%s': ", def->name);
	return err;
}

void ptx_rt_map_free(struct ptx_rt_map *m)
{
	if (!m)
		return;
	if (!m->in_arena)
		m->rt->cu->mem_free(m->dev);
	if (m->rb_host)
		m->rt->cu->mem_free_host(m->rb_host);
	if (m->stage_pinned)
		m->rt->cu->mem_free_host(m->stage);
	else
		free(m->stage);
	free(m);
}

/* The reference to a map with header h at dev (0: not made yet). */
static struct ptx_map_ref ptx_rt_ref_of(const struct ptx_devmap *h, CUdeviceptr dev)
{
	struct ptx_map_ref ref = {dev, h->data, h->type, h->max_entries, 0, h->nr_sms,
				  h->sm_stride, 0};

	/* GPUEXT_MAP_LOOKUP_CALL=1: every lookup calls the runtime, as before
	 * lookups were inlined, to compare the two in one build on one GPU
	 * (tests/gpu/devmaps.sh) */
	if (((h->type == MAP_TYPE_ARRAY || h->type == MAP_TYPE_PERCPU_ARRAY) &&
	     !getenv("GPUEXT_MAP_LOOKUP_CALL")) ||
	    h->type == MAP_TYPE_GPU_BLOCK_ARRAY) { /* only ever inline */
		ref.value_stride = h->value_stride;
		ref.value_size = h->value_size;
	}
	return ref;
}

struct ptx_map_ref ptx_rt_map_ref(const struct ptx_rt_map *m)
{
	return ptx_rt_ref_of(&m->hdr, m->dev);
}

struct ptx_map_ref ptx_rt_map_ref_planned(const struct ptx_rt *rt, const struct map_def *def,
					  size_t slot)
{
	struct ptx_devmap h = {0};
	size_t len = ptx_rt_map_layout(rt, def, &h);
	CUdeviceptr at = ptx_arena_at(rt->arena, slot, sizeof(h) + len);
	h.data = at ? at + sizeof(h) : 0; /* as ptx_rt_map_create_at sets it */
	return ptx_rt_ref_of(&h, at);
}

int ptx_rt_map_array_set(struct ptx_rt_map *m, uint32_t key, const void *value, struct err *e)
{
	const struct ptx_devmap *h = &m->hdr;
	CUresult r;

	if (h->type != MAP_TYPE_ARRAY && h->type != MAP_TYPE_PERCPU_ARRAY)
		return err_set(e, EINVAL, "map '%s' is not an array", m->def.name);
	if (key >= h->max_entries)
		return err_set(e, E2BIG, "map '%s': key %u >= %u entries", m->def.name, key,
			       h->max_entries);
	for (uint32_t s = 0; s < h->nr_sms; s++) {
		CUdeviceptr at = h->data + s * h->sm_stride + (uint64_t)key * h->value_stride;
		r = m->rt->cu->memcpy_htod(at, value, h->value_size);
		if (r != CUDA_SUCCESS)
			return cu_err(m->rt->cu, e, r, "writing a device map");
	}
	return 0;
}

int ptx_rt_map_value_read(struct ptx_rt_map *m, uint32_t key, uint64_t off, void *out,
			  size_t len, struct err *e)
{
	const struct ptx_devmap *h = &m->hdr;

	if (h->type != MAP_TYPE_ARRAY)
		return err_set(e, EINVAL, "map '%s' is not a plain array", m->def.name);
	if (key >= h->max_entries || off > h->value_size || len > h->value_size - off)
		return err_set(e, E2BIG, "map '%s': bytes %llu..%llu of key %u are past its values",
			       m->def.name, (unsigned long long)off,
			       (unsigned long long)(off + len), key);
	CUresult r = m->rt->cu->memcpy_dtoh(out, h->data + (uint64_t)key * h->value_stride + off,
					     len);
	return r == CUDA_SUCCESS ? 0 : cu_err(m->rt->cu, e, r, "reading a device map");
}

/* The stream SNAPSHOT copies go on: non-blocking, so that it neither waits
 * for the application's kernels nor holds back its later work (a copy on
 * the legacy stream does both).  0 where none could be made: such copies
 * are COMPLETE ones. */
static CUstream ptx_rt_snap_stream(struct ptx_rt *rt)
{
	if (!rt->snap_tried) {
		rt->snap_tried = 1;
		if (rt->cu->stream_create(&rt->snap_stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
			rt->snap_stream = 0;
	}
	return rt->snap_stream;
}

/* m's stage: its header and data_len bytes, pinned if the driver gives it
 * (an asynchronous copy into pageable memory is staged by the driver). */
static unsigned char *ptx_rt_map_stage(struct ptx_rt_map *m)
{
	size_t len = sizeof(struct ptx_devmap) + m->data_len;

	if (m->stage)
		return m->stage;
	if (m->rt->cu->mem_host_alloc((void **)&m->stage, len, 0) == CUDA_SUCCESS) {
		m->stage_pinned = 1;
		return m->stage;
	}
	m->stage = malloc(len);
	return m->stage;
}

/*
 * The device's current header (into *h) and, if data, its data (*data:
 * m's stage, valid until the next fetch of m), copied as `how` says.  The
 * data is where the header made at creation says: both copies are queued
 * before the one wait, and a header that says otherwise is an error.
 */
static int ptx_rt_map_fetch(struct ptx_rt_map *m, struct ptx_devmap *h, void **data,
			    enum ptx_rt_copy how, struct err *e)
{
	const struct cu_driver *cu = m->rt->cu;
	CUstream s = how == PTX_RT_SNAPSHOT ? ptx_rt_snap_stream(m->rt) : 0;
	unsigned char *stage = ptx_rt_map_stage(m);
	size_t hl = sizeof(*h), dl = data ? m->data_len : 0;
	CUresult r;

	if (!stage)
		return err_set(e, ENOMEM, "out of memory");
	if (s) {
		r = cu->memcpy_dtoh_async(stage, m->dev, hl, s);
		if (r == CUDA_SUCCESS && dl)
			r = cu->memcpy_dtoh_async(stage + hl, m->hdr.data, dl, s);
		if (r == CUDA_SUCCESS)
			r = cu->stream_synchronize(s);
	} else {
		r = cu->memcpy_dtoh(stage, m->dev, hl);
		if (r == CUDA_SUCCESS && dl)
			r = cu->memcpy_dtoh(stage + hl, m->hdr.data, dl);
	}
	if (r != CUDA_SUCCESS)
		return cu_err(cu, e, r, "reading a device map");
	memcpy(h, stage, hl);
	if (h->data != m->hdr.data)
		return err_set(e, EIO, "map '%s': its device header no longer says where its "
			       "data is (overwritten by a kernel?)", m->def.name);
	if (data)
		*data = stage + hl;
	return 0;
}

/*
 * The values of array key k, one per SM, side by side: a plain array's
 * value in place, a per-SM array's copies gathered into buf (nr_sms x
 * value_stride bytes).
 */
static const unsigned char *ptx_array_values(const struct ptx_devmap *h, const void *data,
					     uint32_t k, unsigned char *buf)
{
	const unsigned char *d = data;

	if (h->type != MAP_TYPE_PERCPU_ARRAY)
		return d + (size_t)k * h->value_stride;
	for (uint32_t s = 0; s < h->nr_sms; s++)
		memcpy(buf + (size_t)s * h->value_stride,
		       d + s * h->sm_stride + (size_t)k * h->value_stride, h->value_stride);
	return buf;
}

int ptx_rt_map_foreach(struct ptx_rt_map *m, ptx_rt_elem_fn fn, void *arg, struct err *e)
{
	struct ptx_devmap h;
	unsigned char *data = NULL, *buf = NULL;
	int err;

	if (m->hdr.type == MAP_TYPE_RINGBUF)
		return err_set(e, EINVAL, "map '%s' is a ring buffer", m->def.name);
	if (m->hdr.type == MAP_TYPE_GPU_BLOCK_ARRAY)
		return err_set(e, EOPNOTSUPP, "map '%s' is block-local: its values live in each "
			       "block's shared memory while the block runs", m->def.name);
	err = ptx_rt_map_fetch(m, &h, (void **)&data, PTX_RT_COMPLETE, e);
	if (err)
		return err;
	if (h.type == MAP_TYPE_ARRAY || h.type == MAP_TYPE_PERCPU_ARRAY) {
		buf = malloc((size_t)h.nr_sms * h.value_stride);
		if (!buf)
			return err_set(e, ENOMEM, "out of memory");
		for (uint32_t k = 0; k < h.max_entries; k++)
			if (fn(arg, &k, ptx_array_values(&h, data, k, buf), h.nr_sms))
				break;
		free(buf);
	} else {
		for (uint32_t s = 0; s < h.nr_slots; s++) {
			unsigned char *slot = data + (size_t)s * h.slot_size;
			uint32_t state;
			memcpy(&state, slot, 4);
			if (state == PTX_SLOT_LIVE &&
			    fn(arg, slot + 8, slot + 8 + h.key_stride, h.nr_sms))
				break;
		}
	}
	return 0;
}

/* The LIVE slot of key in a hash snapshot, or NULL (the device's probe). */
static const unsigned char *ptx_snapshot_find(const struct ptx_devmap *h, const void *data,
					      const void *key)
{
	uint32_t hash = ptx_devmap_hash(key, h->key_size);

	for (uint32_t n = 0; n < h->nr_slots; n++) {
		const unsigned char *slot = (const unsigned char *)data +
					    (size_t)((hash + n) & (h->nr_slots - 1)) * h->slot_size;
		uint32_t state, sh;
		memcpy(&state, slot, 4);
		memcpy(&sh, slot + 4, 4);
		if (state == PTX_SLOT_EMPTY)
			return NULL;
		if (sh == hash && !memcmp(slot + 8, key, h->key_size))
			return state == PTX_SLOT_LIVE ? slot : NULL;
	}
	return NULL;
}

/*
 * One element into the host map.  Per-CPU maps get SM slot s in CPU slot
 * s % cpus: where the host has fewer CPUs than the device has SMs, the SMs
 * that share a CPU slot are added, 64-bit word by word, so that a reader
 * that sums the CPU slots (as per-CPU maps are read) gets the sum over the
 * SMs -- exact for counters, the only use per-SM maps have on the device.
 */
static int ptx_snapshot_put(const struct ptx_devmap *h, struct map *host, const void *key,
			    const unsigned char *values, unsigned nr, unsigned char *buf,
			    struct err *e)
{
	unsigned cpus = map_nr_cpus(host);
	int err;

	if (cpus == 1 && nr == 1) {
		err = map_update(host, key, values, MAP_ANY);
	} else {
		memset(buf, 0, (size_t)cpus * h->value_stride);
		for (unsigned s = 0; s < nr; s++) {
			unsigned char *to = buf + (size_t)(s % cpus) * h->value_stride;
			const unsigned char *from = values + (size_t)s * h->value_stride;
			for (uint32_t w = 0; w < h->value_stride; w += 8) {
				uint64_t a, b;
				memcpy(&a, to + w, 8);
				memcpy(&b, from + w, 8);
				a += b;
				memcpy(to + w, &a, 8);
			}
		}
		err = map_update_all_cpus(host, key, buf, MAP_ANY);
	}
	return err ? err_set(e, -err, "updating the host map: error %d", err) : 0;
}

int ptx_rt_snapshot_apply(const struct ptx_devmap *h, const void *data, struct map *host,
			  struct err *e)
{
	const struct map_def *hd = map_get_def(host);
	unsigned cpus = map_nr_cpus(host);
	const unsigned char *d = data;
	unsigned char *buf, *vals, *key = NULL, *next = NULL;
	int err = 0;

	if (hd->key_size != h->key_size || hd->value_size != h->value_size ||
	    hd->max_entries != h->max_entries)
		return err_set(e, EINVAL, "map '%s': host and device definitions differ", hd->name);
	if (h->nr_sms > 1 && cpus == 1)
		return err_set(e, EINVAL, "map '%s': per-SM values need a per-CPU host map",
			       hd->name);
	/* buf: the host's CPU slots; vals: one key's SM slots side by side */
	buf = calloc(cpus, h->value_stride);
	vals = malloc((size_t)h->nr_sms * h->value_stride);
	if (!buf || !vals) {
		err = err_set(e, ENOMEM, "out of memory");
		goto out;
	}
	if (h->type == MAP_TYPE_ARRAY || h->type == MAP_TYPE_PERCPU_ARRAY) {
		for (uint32_t k = 0; k < h->max_entries && !err; k++)
			err = ptx_snapshot_put(h, host, &k, ptx_array_values(h, d, k, vals),
					       h->nr_sms, buf, e);
		goto out;
	}
	/* hash: drop the keys the device no longer has, then write the live ones */
	key = malloc(h->key_size);
	next = malloc(h->key_size);
	if (!key || !next) {
		err = err_set(e, ENOMEM, "out of memory");
		goto out;
	}
	for (int have = map_get_next_key(host, NULL, next) == 0; have;) {
		memcpy(key, next, h->key_size);
		have = map_get_next_key(host, key, next) == 0;
		if (!ptx_snapshot_find(h, data, key))
			map_delete(host, key);
	}
	for (uint32_t s = 0; s < h->nr_slots && !err; s++) {
		const unsigned char *slot = d + (size_t)s * h->slot_size;
		uint32_t state;
		memcpy(&state, slot, 4);
		if (state == PTX_SLOT_LIVE)
			err = ptx_snapshot_put(h, host, slot + 8, slot + 8 + h->key_stride, h->nr_sms,
					       buf, e);
	}
out:
	free(buf);
	free(vals);
	free(key);
	free(next);
	return err;
}

int ptx_rt_map_sync_to_host(struct ptx_rt_map *m, struct map *host, enum ptx_rt_copy how,
			    struct err *e)
{
	struct ptx_devmap h;
	void *data = NULL;
	int err;

	if (m->hdr.type == MAP_TYPE_RINGBUF)
		return err_set(e, EINVAL, "map '%s': ring buffers are consumed, not synced",
			       m->def.name);
	if (m->hdr.type == MAP_TYPE_GPU_BLOCK_ARRAY)
		return 0; /* nothing outlives a block: the host map stays empty */
	err = ptx_rt_map_fetch(m, &h, &data, how, e);
	if (!err)
		err = ptx_rt_snapshot_apply(&h, data, host, e);
	return err;
}

int ptx_rt_map_count(struct ptx_rt_map *m, uint64_t *count, struct err *e)
{
	struct ptx_devmap h;
	int err = ptx_rt_map_fetch(m, &h, NULL, PTX_RT_COMPLETE, e);

	if (!err)
		*count = h.count;
	return err;
}

/* A ring buffer's drops: the sum of its per-SM counters. */
int ptx_rt_map_drops(struct ptx_rt_map *m, uint64_t *drops, enum ptx_rt_copy how,
		     struct err *e)
{
	struct ptx_devmap h;
	unsigned char *data;
	int err;

	*drops = 0;
	if (m->hdr.type != MAP_TYPE_RINGBUF)
		return 0;
	err = ptx_rt_map_fetch(m, &h, (void **)&data, how, e);
	if (err)
		return err;
	for (uint32_t s = 0; s < h.nr_sms; s++) {
		uint64_t d;
		memcpy(&d, data + (size_t)s * PTX_RB_DROP_STRIDE, 8);
		*drops += d;
	}
	return 0;
}

/*
 * The consumer side of the ring buffer protocol (ptx_rt_dev.cu writes the
 * other side).  A header word of 0 means nothing has been written there yet,
 * because this consumer zeroes every byte it consumed before publishing the
 * new consumer position; BUSY means reserved but not yet submitted.
 */
int ptx_rt_ringbuf_poll(struct ptx_rt_map *m, ptx_rt_rec_fn fn, void *arg)
{
	uint64_t size = m->hdr.rb_size, pos = m->rb_cons, start = pos;
	int n = 0, stop = 0;

	if (m->hdr.type != MAP_TYPE_RINGBUF)
		return -EINVAL;
	while (!stop) {
		unsigned char *rec = m->rb_data + (pos & (size - 1));
		uint32_t hdr = atomic_load_explicit((_Atomic uint32_t *)rec, memory_order_acquire);
		if (hdr == 0 || (hdr & PTX_RB_BUSY))
			break;
		uint32_t len = hdr & PTX_RB_LEN_MASK;
		uint64_t total = ((uint64_t)len + 7) / 8 * 8 + PTX_RB_HDR_SIZE;
		if (!(hdr & PTX_RB_DISCARD)) {
			n++;
			stop = fn(arg, rec + PTX_RB_HDR_SIZE, len) != 0;
		}
		memset(rec, 0, total);
		pos += total;
	}
	if (pos != start) {
		m->rb_cons = pos;
		atomic_store_explicit((_Atomic uint64_t *)&m->rb_ctrl->cons, pos,
				      memory_order_release);
	}
	return n;
}

int ptx_rt_trace_format(const void *data, size_t size, char *out, size_t len)
{
	const struct ptx_trace_rec *r = data;
	const char *fmt = (const char *)(r + 1);
	size_t n = 0, fmt_len;
	unsigned arg = 0;

	if (size < sizeof(*r) || r->magic != PTX_TRACE_MAGIC ||
	    r->fmt_len > size - sizeof(*r) || len == 0)
		return -EINVAL;
	fmt_len = strnlen(fmt, r->fmt_len);
#define PUT(...)                                                                   \
	do {                                                                       \
		int w_ = snprintf(out + n, len - n, __VA_ARGS__);                  \
		if (w_ > 0)                                                        \
			n = n + (size_t)w_ < len ? n + (size_t)w_ : len - 1;       \
	} while (0)
	for (size_t i = 0; i < fmt_len && n + 1 < len; i++) {
		if (fmt[i] != '%') {
			out[n++] = fmt[i];
			continue;
		}
		size_t j = i + 1;
		int longs = 0;
		while (j < fmt_len && fmt[j] == 'l')
			longs++, j++;
		if (j >= fmt_len)
			break;
		char conv = fmt[j];
		uint64_t v = arg < 3 ? r->args[arg] : 0;
		if (conv != '%')
			arg++;
		if (!longs && conv != 'p')
			v = conv == 'd' || conv == 'i' ? (uint64_t)(int64_t)(int32_t)v : (uint32_t)v;
		switch (conv) {
		case 'd': case 'i': PUT("%" PRId64, (int64_t)v); break;
		case 'u': PUT("%" PRIu64, v); break;
		case 'x': PUT("%" PRIx64, v); break;
		case 'X': PUT("%" PRIX64, v); break;
		case 'p': PUT("0x%" PRIx64, v); break;
		case 'c': PUT("%c", (char)v); break;
		case '%': PUT("%%"); break;
		case 's': PUT("(gpu string at 0x%" PRIx64 ")", v); break;
		default: PUT("%%%c", conv); break;
		}
		i = j;
	}
#undef PUT
	out[n] = '\0';
	return (int)n;
}

int ptx_rt_module_load_timed(struct ptx_rt *rt, const char *ptx, CUmodule *mod,
			     float *jit_ms, struct err *e)
{
	static char log[8192];
	CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
			       CU_JIT_WALL_TIME};
	void *vals[] = {log, (void *)(uintptr_t)sizeof(log), NULL};
	char buf[160];

	log[0] = '\0';
	CUresult r = rt->cu->module_load_data_ex(mod, ptx, jit_ms ? 3 : 2, opts, vals);
	if (r != CUDA_SUCCESS)
		return err_set(e, EINVAL, "the driver rejected the PTX: %s%s%.400s",
			       cu_errstr(rt->cu, r, buf, sizeof(buf)), log[0] ? ": " : "", log);
	if (jit_ms) /* the driver writes a float into the option's value */
		memcpy(jit_ms, &vals[2], sizeof(*jit_ms));
	return 0;
}

int ptx_rt_module_load(struct ptx_rt *rt, const char *ptx, CUmodule *mod, struct err *e)
{
	return ptx_rt_module_load_timed(rt, ptx, mod, NULL, e);
}

int ptx_rt_compile(struct ptx_rt *rt, const char *ptx, int runtime, const struct ptx_rt_jit *jit,
		   void **cubin, size_t *len, float *jit_ms, struct err *e)
{
	const struct cu_driver *cu = rt->cu;
	static char log[8192];
	CUjit_option opts[6] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
				CU_JIT_WALL_TIME};
	void *vals[6] = {log, (void *)(uintptr_t)sizeof(log), NULL};
	unsigned n = 3;
	if (jit && jit->opt_level >= 0) {
		opts[n] = CU_JIT_OPTIMIZATION_LEVEL;
		vals[n++] = (void *)(uintptr_t)jit->opt_level;
	}
	if (jit && jit->threads >= 0) {
		opts[n] = CU_JIT_SPLIT_COMPILE;
		vals[n++] = (void *)(uintptr_t)jit->threads;
	}
	if (jit && jit->pic >= 0) {
		opts[n] = CU_JIT_POSITION_INDEPENDENT_CODE;
		vals[n++] = (void *)(uintptr_t)jit->pic;
	}
	CUlinkState st;
	void *out;
	size_t fb_len, out_len;
	const void *fb = ptx_rt_fatbin(&fb_len);
	const char *what = "cuLinkCreate";
	char buf[160];
	int code = ENOEXEC; /* the linking steps: the caller may compile instead */

	log[0] = '\0';
	CUresult r = cu->link_create(n, opts, vals, &st);
	if (r != CUDA_SUCCESS)
		goto fail;
	if (runtime) {
		what = "linking the device runtime";
		r = cu->link_add_data(st, CU_JIT_INPUT_FATBINARY, (void *)fb, fb_len,
				      "gpuext-runtime", 0, NULL, NULL);
	}
	if (r == CUDA_SUCCESS) {
		what = "the driver rejected the PTX";
		r = cu->link_add_data(st, CU_JIT_INPUT_PTX, (void *)ptx, strlen(ptx) + 1,
				      "gpuext-instrumented", 0, NULL, NULL);
		code = r == CUDA_SUCCESS ? ENOEXEC : EINVAL;
	}
	if (r == CUDA_SUCCESS) {
		what = "linking";
		r = cu->link_complete(st, &out, &out_len);
	}
	if (r == CUDA_SUCCESS) { /* the linker's output lives until cuLinkDestroy */
		if ((*cubin = malloc(out_len)))
			memcpy(*cubin, out, *len = out_len);
		else
			code = ENOMEM, what = "copying the cubin", r = CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (jit_ms) /* the driver writes a float into the option's value */
		memcpy(jit_ms, &vals[2], sizeof(*jit_ms));
	cu->link_destroy(st);
	if (r == CUDA_SUCCESS)
		return 0;
fail:
	return err_set(e, code, "%s: %s%s%.400s", what, cu_errstr(cu, r, buf, sizeof(buf)),
		       log[0] ? ": " : "", log);
}

int ptx_rt_module_load_image(struct ptx_rt *rt, const void *cubin, CUmodule *mod,
			     struct err *e)
{
	char buf[160];
	CUresult r = rt->cu->module_load_data_ex(mod, cubin, 0, NULL, NULL);
	if (r != CUDA_SUCCESS)
		return err_set(e, EINVAL, "loading the compiled module: %s",
			       cu_errstr(rt->cu, r, buf, sizeof(buf)));
	return 0;
}

int ptx_rt_module_link(struct ptx_rt *rt, const char *ptx, CUmodule *mod, float *jit_ms,
		       struct err *e)
{
	void *cubin;
	size_t len;
	int err = ptx_rt_compile(rt, ptx, 1, NULL, &cubin, &len, jit_ms, e);
	if (err)
		return err;
	err = ptx_rt_module_load_image(rt, cubin, mod, e);
	free(cubin);
	return err;
}

int ptx_rt_run_prog(struct ptx_rt *rt, const struct prog *p, struct ptx_rt_map **maps,
		    struct ptx_rt_map *trace, void *mem, size_t len, unsigned flags,
		    uint64_t *r0, struct err *e)
{
	const struct cu_driver *cu = rt->cu;
	struct ptx_map_ref *refs = calloc(p->map_cnt + 1, sizeof(*refs));
	struct ptx_emit_opts o = {.symbol = "gx_prog", .maps = refs,
				  .trace_ring = trace ? trace->dev : 0,
				  .conformance_helpers = !!(flags & PTX_RT_RUN_CONFORMANCE)};
	struct ptx_buf b = {0};
	char sym[128], *text = NULL;
	CUmodule mod = NULL;
	CUfunction fn;
	CUdeviceptr dmem = 0, dout = 0;
	CUresult r = CUDA_SUCCESS;
	int err;

	if (!refs)
		return err_set(e, ENOMEM, "out of memory");
	for (size_t i = 0; i < p->map_cnt; i++)
		refs[i] = ptx_rt_map_ref(maps[i]);
	struct ptx_buf prog = {0};
	ptx_emit_header(&b, &rt->target);
	err = ptx_emit_prog(&prog, p, &o, sym, e);
	if (err) {
		ptx_buf_free(&prog);
		goto out;
	}
	/* only the runtime functions the program calls: the JIT compiles
	 * every function of a module */
	const char *texts[1] = {prog.text};
	ptx_emit_runtime_used(&b, texts, 1);
	if (prog.len)
		ptx_buf_append(&b, prog.text, prog.len);
	ptx_buf_free(&prog);
	ptx_emit_run_kernel(&b, sym);
	text = ptx_buf_take(&b, NULL);
	if (!text) {
		err = err_set(e, ENOMEM, "out of memory");
		goto out;
	}
	err = ptx_rt_module_load(rt, text, &mod, e);
	if (err)
		goto out;
	if ((r = cu->module_get_function(&fn, mod, "gx_prog_run")) != CUDA_SUCCESS ||
	    (r = cu->mem_alloc(&dout, 8)) != CUDA_SUCCESS)
		goto cu_fail;
	if (len) {
		if ((r = cu->mem_alloc(&dmem, len)) != CUDA_SUCCESS ||
		    (r = cu->memcpy_htod(dmem, mem, len)) != CUDA_SUCCESS)
			goto cu_fail;
	}
	uint64_t alen = len;
	void *params[] = {&dmem, &alen, &dout};
	if ((r = cu->launch_kernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL)) != CUDA_SUCCESS ||
	    (r = cu->ctx_synchronize()) != CUDA_SUCCESS ||
	    (r = cu->memcpy_dtoh(r0, dout, 8)) != CUDA_SUCCESS ||
	    (len && (r = cu->memcpy_dtoh(mem, dmem, len)) != CUDA_SUCCESS))
		goto cu_fail;
	goto out;
cu_fail:
	err = cu_err(cu, e, r, "running the program on the GPU");
out:
	if (dmem)
		cu->mem_free(dmem);
	if (dout)
		cu->mem_free(dout);
	if (mod)
		cu->module_unload(mod);
	ptx_buf_free(&b);
	free(text);
	free(refs);
	return err;
}

int ptx_rt_conformance_run(const struct prog *p, const struct prog_run_opts *opts,
			   uint64_t *r0, struct err *e)
{
	static struct ptx_rt *rt;
	static struct err open_err;
	static int opened;
	unsigned char *mem;
	int err;

	/* One GPU context for the whole run of cases (opening costs ~100 ms). */
	if (!opened) {
		opened = 1;
		if (ptx_rt_open(0, &rt, &open_err))
			rt = NULL;
	}
	if (!rt) {
		if (e)
			*e = open_err;
		return -ENODEV;
	}
	mem = malloc(opts->mem_len ? opts->mem_len : 1);
	if (!mem)
		return err_set(e, ENOMEM, "out of memory");
	if (opts->mem_len)
		memcpy(mem, opts->mem, opts->mem_len);
	err = ptx_rt_run_prog(rt, p, NULL, NULL, mem, opts->mem_len, PTX_RT_RUN_CONFORMANCE, r0, e);
	free(mem);
	return err;
}
