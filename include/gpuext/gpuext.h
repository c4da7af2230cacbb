/* SPDX-License-Identifier: MIT */
/*
 * gpuext.h - the public C API of libgpuext.
 *
 * Names and conventions follow libbpf, so that code written against libbpf
 * reads the same:
 *   - gpuext_object__verb / gpuext_program__verb / gpuext_map__verb;
 *   - functions returning int return 0 (or a count) on success and a
 *     negative errno on failure; functions returning a pointer return NULL
 *     and set errno;
 *   - every failure also sends one message naming the file, program or map
 *     to the print callback (gpuext_set_print), which by default writes
 *     warnings to stderr;
 *   - option structs begin with their size (sz), so that fields can be
 *     added later without breaking callers compiled against an older
 *     header; bytes past the fields this library knows must be zero.
 *
 * Every symbol declared here is exported from libgpuext; nothing else is.
 */
#ifndef GPUEXT_GPUEXT_H
#define GPUEXT_GPUEXT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPUEXT_API __attribute__((visibility("default")))

struct gpuext_object;
struct gpuext_program;
struct gpuext_map;

/* ---- messages ---------------------------------------------------------- */

enum gpuext_print_level { GPUEXT_WARN, GPUEXT_INFO, GPUEXT_DEBUG };

typedef int (*gpuext_print_fn_t)(enum gpuext_print_level level, const char *fmt, va_list ap);

/* Replace the print callback (NULL: print nothing).  Returns the old one. */
GPUEXT_API gpuext_print_fn_t gpuext_set_print(gpuext_print_fn_t fn);

/* ---- objects and programs ---------------------------------------------- */

struct gpuext_object_open_opts {
	size_t sz;               /* sizeof(struct gpuext_object_open_opts) */
	const char *object_name; /* name used in messages instead of the path */
};

/* Parse a clang-compiled eBPF object (clang -O2 -g -target bpf).  opts may be NULL. */
GPUEXT_API struct gpuext_object *gpuext_object__open(const char *path,
						     const struct gpuext_object_open_opts *opts);
/* Create the maps (global data initialised); programs become runnable. */
GPUEXT_API int gpuext_object__load(struct gpuext_object *obj);
GPUEXT_API void gpuext_object__close(struct gpuext_object *obj);

/* The program after prev (NULL: the first), or NULL after the last. */
GPUEXT_API struct gpuext_program *gpuext_object__next_program(const struct gpuext_object *obj,
							      struct gpuext_program *prev);
#define gpuext_object__for_each_program(pos, obj)                              \
	for ((pos) = gpuext_object__next_program((obj), NULL); (pos);          \
	     (pos) = gpuext_object__next_program((obj), (pos)))

/* By function name (then by section name, as a convenience). */
GPUEXT_API struct gpuext_program *
gpuext_object__find_program_by_name(const struct gpuext_object *obj, const char *name);
/* By map name; global data maps are named like libbpf's ("x.rodata", ...). */
GPUEXT_API struct gpuext_map *gpuext_object__find_map_by_name(const struct gpuext_object *obj,
							      const char *name);

GPUEXT_API const char *gpuext_program__name(const struct gpuext_program *prog);
GPUEXT_API const char *gpuext_program__section(const struct gpuext_program *prog);
GPUEXT_API size_t gpuext_program__insn_cnt(const struct gpuext_program *prog);

/* Host backends that test_run can use. */
/* GPUEXT_BACKEND_DEFAULT is the JIT, like everywhere programs run on the host. */
enum gpuext_backend { GPUEXT_BACKEND_DEFAULT = 0, GPUEXT_BACKEND_INTERP = 1, GPUEXT_BACKEND_JIT = 2 };

/*
 * Like libbpf's bpf_test_run_opts.  The program gets r1 = a private copy of
 * ctx_in (or, without ctx_in, of data_in) and r2 = its size; with data_out
 * set, the copy is written back there after the runs.
 */
struct gpuext_test_run_opts {
	size_t sz; /* sizeof(struct gpuext_test_run_opts) */
	const void *data_in;
	void *data_out;
	uint32_t data_size_in;
	uint32_t data_size_out; /* in: room in data_out; out: bytes written */
	const void *ctx_in;
	uint32_t ctx_size_in;
	int repeat;        /* runs; 0 means 1 */
	uint64_t retval;   /* out: r0 of the last run */
	uint32_t duration; /* out: mean nanoseconds per run */
	enum gpuext_backend backend; /* in: x86-64 JIT (default) or interpreter */
};

/* Run the program on the host, JIT-compiled unless opts->backend asks for
 * the interpreter.  Needs gpuext_object__load first (maps, verifier). */
GPUEXT_API int gpuext_program__test_run(struct gpuext_program *prog,
					struct gpuext_test_run_opts *opts);

/* ---- maps -------------------------------------------------------------- */

/* Linux's numbers (BPF_MAP_TYPE_*, BPF_ANY, ...). */
enum gpuext_map_type {
	GPUEXT_MAP_TYPE_HASH = 1,
	GPUEXT_MAP_TYPE_ARRAY = 2,
	GPUEXT_MAP_TYPE_PERCPU_HASH = 5,
	GPUEXT_MAP_TYPE_PERCPU_ARRAY = 6,
	GPUEXT_MAP_TYPE_LRU_HASH = 9,
	GPUEXT_MAP_TYPE_RINGBUF = 27,
	/* gpuext's own: an array in each GPU block's shared memory, for device
	 * programs only; the host sees no values (docs/device-maps.md) */
	GPUEXT_MAP_TYPE_GPU_BLOCK_ARRAY = 256,
};
enum { GPUEXT_ANY = 0, GPUEXT_NOEXIST = 1, GPUEXT_EXIST = 2 };

struct gpuext_map_def {
	uint32_t type; /* enum gpuext_map_type */
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	uint32_t flags;
	char name[64];
};

/* A map of its own (not part of an object); free with gpuext_map__destroy. */
GPUEXT_API struct gpuext_map *gpuext_map__create(enum gpuext_map_type type, const char *name,
						 uint32_t key_size, uint32_t value_size,
						 uint32_t max_entries, uint32_t flags);
GPUEXT_API void gpuext_map__destroy(struct gpuext_map *map);

GPUEXT_API const struct gpuext_map_def *gpuext_map__def(const struct gpuext_map *map);
/* Value slots of a per-CPU map (1 for other maps): a per-CPU value buffer
 * holds this many values, each rounded up to 8 bytes. */
GPUEXT_API unsigned gpuext_map__nr_cpus(const struct gpuext_map *map);

/*
 * Element access from the user side, sizes checked as libbpf's
 * bpf_map__lookup_elem does: key_sz must be the key size, value_sz the value
 * size (per-CPU maps: nr_cpus values of round_up(value_size, 8)).  flags:
 * GPUEXT_ANY / GPUEXT_NOEXIST / GPUEXT_EXIST for update, 0 otherwise.
 * Maps of an object need gpuext_object__load first.
 */
GPUEXT_API int gpuext_map__lookup_elem(const struct gpuext_map *map, const void *key,
				       size_t key_sz, void *value, size_t value_sz,
				       uint64_t flags);
GPUEXT_API int gpuext_map__update_elem(const struct gpuext_map *map, const void *key,
				       size_t key_sz, const void *value, size_t value_sz,
				       uint64_t flags);
GPUEXT_API int gpuext_map__delete_elem(const struct gpuext_map *map, const void *key,
				       size_t key_sz, uint64_t flags);
/* cur_key NULL: the first key.  -ENOENT after the last. */
GPUEXT_API int gpuext_map__get_next_key(const struct gpuext_map *map, const void *cur_key,
					void *next_key, size_t key_sz);

/* Ring buffers: hand each unread record to fn in order; fn returning
 * non-zero stops.  Returns the number of records consumed or -errno. */
typedef int (*gpuext_ringbuf_fn_t)(void *ctx, const void *data, size_t size);
GPUEXT_API int gpuext_map__ringbuf_consume(const struct gpuext_map *map, gpuext_ringbuf_fn_t fn,
					   void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* GPUEXT_GPUEXT_H */
