/* SPDX-License-Identifier: MIT */
/*
 * Every test program (tests/progs) loaded, its maps created, verified, run
 * on given input, and its r0 and map contents checked exactly.  Each test
 * runs four times: objects from clang and (where installed) clang-19, each
 * on the interpreter (with bounds checking on) and on the x86-64 JIT.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/helpers.h"
#include "bpf/jit.h"
#include "bpf/object.h"
#include "bpf/verifier.h"

static const char *const obj_dirs[] = {TEST_BPF_DIR "/tests/progs",
				       "build/bpf-clang19/tests/progs"};

static enum prog_backend backend;

/* Both compilers' objects (d) on both backends. */
#define FOR_EACH_VARIANT(d)                                                     \
	for (size_t v_ = 0, d = 0; v_ < 4; d = ++v_ / 2)                        \
		if ((backend = v_ % 2 ? PROG_BACKEND_JIT : PROG_BACKEND_INTERP), 1)

enum { RAW_MEM = 64 };

/* x86-64 struct pt_regs as uprobe programs see it (21 registers). */
enum { REG_RSI = 13, REG_RDI = 14, REG_RAX = 10, NR_REGS = 21 };

static struct object *load(size_t dir, const char *file)
{
	char path[256];
	struct object *obj = NULL;
	struct err e = {{0}};

	snprintf(path, sizeof(path), "%s/%s.bpf.o", obj_dirs[dir], file);
	if (dir > 0 && access(path, R_OK))
		return NULL;
	if (object_open(path, &obj, &e) || object_create_maps(obj, &e))
		fail_msg("%s: %s", path, e.msg);
	for (size_t i = 0; i < obj->prog_cnt; i++) {
		/* Raw programs get RAW_MEM bytes (run_raw). */
		struct vfy_opts vo = {.profile = VFY_PROFILE_AUTO, .mem_size = RAW_MEM};
		if (verifier_check(obj->progs[i], &vo, NULL, &e))
			fail_msg("%s: verifier: %s", path, e.msg);
		if (backend == PROG_BACKEND_JIT && jit_compile(obj->progs[i], NULL, &e))
			fail_msg("%s: JIT: %s", path, e.msg);
	}
	return obj;
}

/* Run prog `name` on a copy of ctx; return r0 as the C function's int. */
static int32_t run(struct object *obj, const char *name, const void *ctx, size_t len)
{
	struct prog *p = object_find_prog(obj, name);
	uint8_t buf[256];
	uint64_t r0 = 0;
	struct err e = {{0}};

	assert_non_null(p);
	assert_true(backend == PROG_BACKEND_INTERP || p->jit);
	assert_true(len <= sizeof(buf));
	memcpy(buf, ctx, len);
	struct prog_run_opts opts = {
		.args = {(uintptr_t)buf, len}, .bounds_check = 1, .mem = buf, .mem_len = len};
	if (prog_run(p, backend, &opts, &r0, &e))
		fail_msg("%s (%s): %s", obj->name, backend == PROG_BACKEND_JIT ? "jit" : "interp",
			 e.msg);
	return (int32_t)r0;
}

static int32_t run_regs(struct object *obj, const char *name, int reg, uint64_t val)
{
	uint64_t regs[NR_REGS] = {0};
	regs[reg] = val;
	return run(obj, name, regs, sizeof(regs));
}

static struct map *map_of(struct object *obj, const char *name)
{
	struct object_map *m = object_find_map(obj, name);
	assert_non_null(m);
	assert_non_null(m->map);
	return m->map;
}

static uint64_t lookup_u64(struct object *obj, const char *map, uint64_t key)
{
	uint64_t v = 0;
	struct map *m = map_of(obj, map);
	uint8_t k[8];
	memcpy(k, &key, sizeof(k)); /* little-endian: 4-byte keys read the low half */
	assert_int_equal(map_lookup_copy(m, k, &v), 0);
	return v;
}

static size_t count_keys(struct map *m, size_t key_size)
{
	uint8_t key[16], next[16];
	size_t n = 0;
	for (int first = 1; !map_get_next_key(m, first ? NULL : key, next); first = 0, n++)
		memcpy(key, next, key_size);
	return n;
}

/* Sum of a per-CPU value's u64 at byte offset off over all CPUs. */
static uint64_t percpu_sum(struct map *m, const void *key, size_t value_size, size_t off)
{
	unsigned cpus = map_nr_cpus(m);
	size_t slot = (value_size + 7) & ~(size_t)7;
	uint8_t *vals = calloc(cpus, slot);
	uint64_t sum = 0, v;
	assert_int_equal(map_lookup_copy(m, key, vals), 0);
	for (unsigned c = 0; c < cpus; c++) {
		memcpy(&v, vals + c * slot + off, 8);
		sum += v;
	}
	free(vals);
	return sum;
}

static void test_array(void **state)
{
	FOR_EACH_VARIANT(d) {
		struct object *obj = load(d, "array_count");
		if (!obj)
			continue;
		assert_int_equal(run_regs(obj, "count_launch", REG_RDI, 10), 1);
		assert_int_equal(run_regs(obj, "count_launch", REG_RDI, 10), 2);
		assert_int_equal(run_regs(obj, "count_launch", REG_RDI, 2), 3);
		assert_int_equal(run_regs(obj, "count_launch", REG_RDI, 7), 1);
		for (uint32_t k = 0; k < 8; k++)
			assert_int_equal(lookup_u64(obj, "launches", k), k == 2 ? 3 : k == 7 ? 1 : 0);
		object_free(obj);
	}
}

static void test_percpu_array(void **state)
{
	FOR_EACH_VARIANT(d) {
		struct object *obj = load(d, "percpu_array");
		if (!obj)
			continue;
		uint64_t rec[3] = {100, 350, 0};
		assert_int_equal(run(obj, "cupti/kernel", rec, sizeof(rec)), 250);
		rec[0] = 1000, rec[1] = 1007;
		assert_int_equal(run(obj, "kernel_time", rec, sizeof(rec)), 7);
		uint32_t zero = 0;
		struct map *m = map_of(obj, "ktime");
		assert_int_equal(percpu_sum(m, &zero, 16, 0), 2);
		assert_int_equal(percpu_sum(m, &zero, 16, 8), 257);
		object_free(obj);
	}
}

static void test_hash(void **state)
{
	FOR_EACH_VARIANT(d) {
		struct object *obj = load(d, "hash_count");
		if (!obj)
			continue;
		assert_int_equal(run_regs(obj, "count_alloc", REG_RSI, 4096), 1);
		assert_int_equal(run_regs(obj, "count_alloc", REG_RSI, 4096), 2);
		assert_int_equal(run_regs(obj, "count_alloc", REG_RSI, 8192), 1);
		assert_int_equal(run_regs(obj, "count_alloc", REG_RSI, 4096), 3);
		assert_int_equal(lookup_u64(obj, "alloc_sizes", 4096), 3);
		assert_int_equal(lookup_u64(obj, "alloc_sizes", 8192), 1);
		assert_int_equal(count_keys(map_of(obj, "alloc_sizes"), 8), 2);
		object_free(obj);
	}
}

static void test_percpu_hash(void **state)
{
	FOR_EACH_VARIANT(d) {
		struct object *obj = load(d, "percpu_hash");
		if (!obj)
			continue;
		struct { uint64_t bytes; uint32_t kind, pad; } rec = {1000, 1, 0};
		assert_int_equal(run(obj, "memcpy_bytes", &rec, sizeof(rec)), 1000);
		assert_int_equal(run(obj, "memcpy_bytes", &rec, sizeof(rec)), 2000);
		rec.bytes = 5, rec.kind = 2;
		assert_int_equal(run(obj, "memcpy_bytes", &rec, sizeof(rec)), 5);
		struct map *m = map_of(obj, "bytes_by_kind");
		uint32_t k1 = 1, k2 = 2;
		assert_int_equal(percpu_sum(m, &k1, 8, 0), 2000);
		assert_int_equal(percpu_sum(m, &k2, 8, 0), 5);
		assert_int_equal(count_keys(m, 4), 2);
		object_free(obj);
	}
}

static void test_lru_hash(void **state)
{
	FOR_EACH_VARIANT(d) {
		struct object *obj = load(d, "lru_hash");
		if (!obj)
			continue;
		uint64_t rec[2] = {(1ull << 21) + 4096, 0};
		for (int i = 1; i <= 3; i++)
			assert_int_equal(run(obj, "count_fault", rec, sizeof(rec)), i);
		/* Eight new blocks through a 4-entry LRU map. */
		for (uint64_t b = 10; b < 18; b++) {
			rec[0] = b << 21;
			assert_int_equal(run(obj, "count_fault", rec, sizeof(rec)), 1);
		}
		struct map *m = map_of(obj, "faults");
		uint64_t last = 17;
		uint32_t v = 0;
		assert_true(count_keys(m, 8) <= 4);
		assert_int_equal(map_lookup_copy(m, &last, &v), 0);
		assert_int_equal(v, 1);
		object_free(obj);
	}
}

struct rb_seen {
	int n;
	uint8_t data[8][16];
	size_t size[8];
};

static int rb_collect(void *arg, const void *data, size_t size)
{
	struct rb_seen *s = arg;
	assert_true(s->n < 8 && size <= 16);
	memcpy(s->data[s->n], data, size);
	s->size[s->n++] = size;
	return 0;
}

static void test_ringbuf(void **state)
{
	FOR_EACH_VARIANT(d) {
		struct object *obj = load(d, "ringbuf");
		if (!obj)
			continue;
		/* An event (8 + 16 bytes) and a marker (8 + 8) per call. */
		assert_int_equal(run_regs(obj, "memcpy_ret", REG_RAX, 4), 40);
		/* A discarded event still takes its space until consumed. */
		assert_int_equal(run_regs(obj, "memcpy_ret", REG_RAX, 5), 80);
		struct rb_seen seen = {0};
		assert_int_equal(map_ringbuf_consume(map_of(obj, "events"), rb_collect, &seen), 3);
		assert_int_equal(seen.n, 3);
		uint64_t ev[2];
		uint32_t marker;
		assert_int_equal(seen.size[0], 16);
		memcpy(ev, seen.data[0], 16);
		assert_int_equal(ev[0], 1);
		assert_int_equal(ev[1], 4);
		assert_int_equal(seen.size[1], 4);
		memcpy(&marker, seen.data[1], 4);
		assert_int_equal(marker, 0xfeed0004);
		memcpy(&marker, seen.data[2], 4);
		assert_int_equal(marker, 0xfeed0005);
		assert_int_equal(lookup_u64(obj, ".bss", 0), 2);
		object_free(obj);
	}
}

static void test_legacy_maps(void **state)
{
	FOR_EACH_VARIANT(d) {
		struct object *obj = load(d, "legacy_maps");
		if (!obj)
			continue;
		assert_int_equal(run_regs(obj, "record_free", REG_RDI, 0x1000), 1);
		assert_int_equal(run_regs(obj, "record_free", REG_RDI, 0x2000), 2);
		assert_int_equal(run_regs(obj, "record_free", REG_RDI, 0x1000), 3);
		uint64_t k = 0x1000;
		uint32_t v = 0;
		assert_int_equal(map_lookup_copy(map_of(obj, "freed"), &k, &v), 0);
		assert_int_equal(v, 1);
		assert_int_equal(count_keys(map_of(obj, "freed"), 8), 2);
		assert_int_equal(lookup_u64(obj, "free_total", 0), 3);
		object_free(obj);
	}
}

static void test_global_data(void **state)
{
	FOR_EACH_VARIANT(d) {
		struct object *obj = load(d, "global_data");
		if (!obj)
			continue;
		assert_int_equal(run(obj, "on_entry", "", 0), 6 * 3 + 100);
		/* const volatile: the user sets .rodata before running. */
		uint32_t scale = 5;
		uint8_t *ro = map_array_base(map_of(obj, ".rodata"));
		size_t scale_off = memcmp(ro, "\x03\0\0\0", 4) ? 8 : 0;
		memcpy(ro + scale_off, &scale, 4);
		assert_int_equal(run(obj, "on_entry", "", 0), 7 * 5 + 100);
		assert_int_equal(lookup_u64(obj, ".data", 0), 7);
		uint8_t bss[24];
		memcpy(bss, map_array_base(map_of(obj, ".bss")), sizeof(bss));
		uint64_t last;
		uint32_t hist[4];
		memcpy(&last, bss, 8);
		memcpy(hist, bss + 8, 16);
		assert_int_equal(last, 135);
		assert_int_equal(hist[2], 118);
		assert_int_equal(hist[3], 135);
		assert_int_equal(hist[0] + hist[1], 0);
		object_free(obj);
	}
}

struct trace_buf {
	char text[512];
	size_t len;
};

static void trace_write(void *arg, const char *line, size_t len)
{
	struct trace_buf *t = arg;
	if (t->len + len < sizeof(t->text)) {
		memcpy(t->text + t->len, line, len);
		t->len += len;
		t->text[t->len] = '\0';
	}
}

static void test_strings(void **state)
{
	FOR_EACH_VARIANT(d) {
		struct object *obj = load(d, "strings");
		if (!obj)
			continue;
		struct trace_buf t = {{0}, 0};
		struct helper_trace_sink sink = {trace_write, &t};
		helper_set_trace_sink(&sink);
		int32_t r0 = run_regs(obj, "on_init", REG_RDI, 5);
		helper_set_trace_sink(NULL);
		const char *bss = map_array_base(map_of(obj, ".bss"));
		assert_string_equal(bss, "gpuext");              /* name */
		assert_string_equal(bss + 16, "flags=5 name=gpuext"); /* msg */
		assert_int_equal(r0, strlen("flags=5 name=gpuext") + 1);
		assert_non_null(strstr(t.text, "cuInit flags=5"));
		object_free(obj);
	}
}

static void test_subprograms(void **state)
{
	FOR_EACH_VARIANT(d) {
		struct object *obj = load(d, "subprogs");
		if (!obj)
			continue;
		uint64_t n = 10;
		assert_int_equal(run(obj, "on_mem", &n, 8), 285);
		n = 100; /* capped at 32 terms: sum of i^2, i < 32 */
		assert_int_equal(run(obj, "on_mem", &n, 8), 31 * 32 * 63 / 6);
		n = 7;
		assert_int_equal(run(obj, "on_exit", &n, 8), 21);
		n = 5000;
		assert_int_equal(run(obj, "on_exit", &n, 8), 11000);
		object_free(obj);
	}
}

static int cmp_u8(const void *a, const void *b)
{
	return *(const uint8_t *)a - *(const uint8_t *)b;
}

static void test_loops(void **state)
{
	FOR_EACH_VARIANT(d) {
		struct object *obj = load(d, "loops");
		if (!obj)
			continue;
		uint8_t in[64] = "\x0bhello world, and more";
		uint32_t h = 2166136261u;
		for (int i = 0; i < 11; i++)
			h = (h ^ in[1 + i]) * 16777619u;
		assert_int_equal((uint32_t)run(obj, "hash_bytes", in, sizeof(in)), h);
		uint8_t want[8];
		memcpy(want, in + 1, 8);
		qsort(want, 8, 1, cmp_u8);
		assert_memory_equal(map_array_base(map_of(obj, ".bss")), want, 8);
		object_free(obj);
	}
}

static void test_atomics(void **state)
{
	FOR_EACH_VARIANT(d) {
		struct object *obj = load(d, "atomics");
		if (!obj)
			continue;
		uint64_t c[8] = {0};
		uint32_t zero = 0;
		c[3] = 0xff; /* and_bits */
		assert_int_equal(map_update(map_of(obj, "ctrs"), &zero, c, MAP_ANY), 0);
		uint64_t x = 10;
		assert_int_equal(run(obj, "atomic_ops", &x, 8), 0);  /* cas: 0 -> 10 */
		x = 3;
		assert_int_equal(run(obj, "atomic_ops", &x, 8), 10); /* cas fails: 10 */
		assert_int_equal(map_lookup_copy(map_of(obj, "ctrs"), &zero, c), 0);
		assert_int_equal(c[0], 10 + 1 + 3 + 1);  /* add */
		assert_int_equal(c[1], 10 + 14);         /* fetch_add results */
		assert_int_equal(c[2], 10 | 3);          /* or */
		assert_int_equal(c[3], 0xff & ~10ull & ~3ull); /* and */
		assert_int_equal(c[4], 10 ^ 3);          /* xor */
		assert_int_equal(c[5], 10);              /* cas */
		assert_int_equal(c[6], 10);              /* xchg returned the old 10 */
		assert_int_equal(c[7] & 0xffffffff, 4);  /* add32 */
		assert_int_equal(lookup_u64(obj, ".bss", 0), 3); /* swapped */
		object_free(obj);
	}
}

/* bpf_gpu_atomic_max: the maximum kept, the old value returned, also
 * where the program drops it; unsigned (a value with the top bit set wins). */
static void test_atomic_max(void **state)
{
	FOR_EACH_VARIANT(d) {
		struct object *obj = load(d, "atomic_max");
		if (!obj)
			continue;
		static const uint64_t xs[] = {10, 3, 12, 1ull << 63};
		static const int32_t olds[] = {0, 10, 10, 12};
		uint64_t m[2];
		uint32_t zero = 0;
		for (size_t i = 0; i < 4; i++)
			assert_int_equal(run_regs(obj, "atomic_max", REG_RDI, xs[i]), olds[i]);
		assert_int_equal(map_lookup_copy(map_of(obj, "maxes"), &zero, m), 0);
		assert_true(m[0] == 1ull << 63 && m[1] == 1ull << 63);
		object_free(obj);
	}
}

static void test_btf_maps_raw_program(void **state)
{
	FOR_EACH_VARIANT(d) {
		struct object *obj = load(d, "btf_maps");
		if (!obj)
			continue;
		uint8_t mem[RAW_MEM] = "gpuext-btf-maps-test-0123456789";
		assert_int_equal(run(obj, "raw/copy", mem, sizeof(mem)), RAW_MEM);
		assert_int_equal(run(obj, "copy_name", mem, 23), -1); /* too short */
		uint64_t len = RAW_MEM;
		uint8_t v16[16], v24[24];
		assert_int_equal(map_lookup_copy(map_of(obj, "by_len"), &len, v16), 0);
		assert_memory_equal(v16, mem, 16);
		assert_int_equal(count_keys(map_of(obj, "by_len"), 8), 1);
		uint32_t slot = RAW_MEM & 3, zero = 0;
		assert_int_equal(map_lookup_copy(map_of(obj, "names"), &slot, v24), 0);
		assert_memory_equal(v24, mem, 24);
		/* slots[0][1].text[0] was incremented once, on some CPU. */
		assert_int_equal(percpu_sum(map_of(obj, "slots"), &zero, 32, 16), 1);
		object_free(obj);
	}
}

static void test_core_read(void **state)
{
	FOR_EACH_VARIANT(d) {
		struct object *obj = load(d, "core_read");
		if (!obj)
			continue;
		/* rdi + sizeof(rdi) + (rsi exists): the compiled layout stands. */
		assert_int_equal(run_regs(obj, "core_read", REG_RDI, 10), 10 + 8 + 1);
		object_free(obj);
	}
}

static void test_multi(void **state)
{
	FOR_EACH_VARIANT(d) {
		struct object *obj = load(d, "multi");
		if (!obj)
			continue;
		uint64_t regs[NR_REGS] = {0};
		assert_int_equal(run(obj, "sync_enter_a", regs, sizeof(regs)), 1);
		assert_int_equal(run(obj, "sync_enter_b", regs, sizeof(regs)), 11);
		assert_int_equal(run(obj, "uprobe/cuStreamSynchronize", regs, sizeof(regs)), 12);
		assert_int_equal(run(obj, "uretprobe/cuStreamSynchronize", regs, sizeof(regs)), 1);
		assert_int_equal(lookup_u64(obj, "calls", 0), 12);
		assert_int_equal(lookup_u64(obj, "calls", 1), 1);
		object_free(obj);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_array),       cmocka_unit_test(test_percpu_array),
		cmocka_unit_test(test_hash),        cmocka_unit_test(test_percpu_hash),
		cmocka_unit_test(test_lru_hash),    cmocka_unit_test(test_ringbuf),
		cmocka_unit_test(test_legacy_maps), cmocka_unit_test(test_global_data),
		cmocka_unit_test(test_strings),     cmocka_unit_test(test_subprograms),
		cmocka_unit_test(test_loops),       cmocka_unit_test(test_atomics),
		cmocka_unit_test(test_atomic_max),
		cmocka_unit_test(test_btf_maps_raw_program),
		cmocka_unit_test(test_core_read),
		cmocka_unit_test(test_multi),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
