/* SPDX-License-Identifier: MIT */
/*
 * ptx_rt.h - the host side of the device runtime: a GPU, its device maps,
 * PTX modules, and running a translated program as a standalone kernel.
 *
 * Device maps live in GPU memory (ring buffers: in pinned host memory the
 * GPU writes through the bus).  The host's view of a map is a copy taken
 * when asked (ptx_rt_map_foreach, ptx_rt_map_drops, ptx_rt_map_sync_to_host),
 * in one of two ways (enum ptx_rt_copy): COMPLETE copies on the context's
 * legacy stream, so the copy waits for the work queued before it on the
 * application's blocking streams and holds back what they queue after it:
 * exact once the kernels have completed; SNAPSHOT copies on a non-blocking
 * stream of the runtime's own, which neither waits for nor holds back the
 * application's work: a relaxed snapshot while kernels run (see
 * docs/device-maps.md), for a view refreshed in the background.  Ring
 * buffer records are consumed by polling the pinned memory, which needs no
 * driver call and works while kernels run.
 */
#ifndef GPUEXT_PTX_RT_H
#define GPUEXT_PTX_RT_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/map.h"
#include "bpf/prog.h"
#include "cuda/cu_driver.h"
#include "ptx_devmap.h"
#include "ptx_emit.h"

struct ptx_arena;

struct ptx_rt {
	const struct cu_driver *cu;
	CUdevice dev;
	CUcontext ctx; /* the device's primary context, current on the opening thread */
	struct ptx_target target;
	int nr_sms;
	int cc_major, cc_minor;
	char name[128];
	CUstream snap_stream; /* SNAPSHOT copies' stream, made at the first (0: none) */
	int snap_tried;
	/* where ptx_rt_map_create_at puts maps and ptx_rt_map_ref_planned
	 * plans them (ptx_arena.h; not owned: it outlives contexts); NULL:
	 * maps are cuMemAlloc'd and planned without addresses */
	const struct ptx_arena *arena;
};

/* Open GPU `ordinal` (0 = first) and make its primary context current. */
int ptx_rt_open(int ordinal, struct ptx_rt **out, struct err *e);
/* GPU `ordinal` described (ctx NULL), no context made or made current: to
 * choose PTX for it and plan device maps (ptx_rt_map_ref_planned) before
 * the application has a context. */
int ptx_rt_open_noctx(int ordinal, struct ptx_rt **out, struct err *e);
void ptx_rt_close(struct ptx_rt *rt);

struct ptx_rt_map {
	struct ptx_rt *rt;
	struct map_def def;
	struct ptx_devmap hdr;   /* as written to the device at creation */
	CUdeviceptr dev;         /* header, then data */
	size_t data_len;
	/* ring buffers: one pinned allocation, control page then data */
	void *rb_host;
	struct ptx_rb_ctrl *rb_ctrl;
	unsigned char *rb_data;
	uint64_t rb_cons;        /* consumer position (host-owned) */
	/* the last copy of header and data (ptx_rt_map_fetch), pinned where
	 * the driver gave pinned memory: reused, a copy per refresh */
	unsigned char *stage;
	int stage_pinned;
	int in_arena; /* dev is rt->arena's: not freed with the map */
};

/* How a copy of a device map's contents is taken (see above). */
enum ptx_rt_copy { PTX_RT_COMPLETE, PTX_RT_SNAPSHOT };

/* Device maps: array, per-CPU (per-SM) array, hash (per-CPU and LRU hashes
 * become plain hashes on the device), ring buffer. */
int ptx_rt_map_create(struct ptx_rt *rt, const struct map_def *def, struct ptx_rt_map **out,
		      struct err *e);
/* The same, at place `slot` of rt->arena where it has one for a map of
 * def (ptx_arena_at), else as ptx_rt_map_create. */
int ptx_rt_map_create_at(struct ptx_rt *rt, const struct map_def *def, size_t slot,
			 struct ptx_rt_map **out, struct err *e);
void ptx_rt_map_free(struct ptx_rt_map *m);
struct ptx_map_ref ptx_rt_map_ref(const struct ptx_rt_map *m);
/* What ptx_rt_map_ref will say of a map of def made on rt's GPU with
 * ptx_rt_map_create_at(slot): with rt->arena, all of it (its addresses the
 * arena's); without, all but its addresses (0): the code the translator
 * emits with a map table (ptx_emit_opts.map_table) is the same, so it can
 * be compiled before the map exists. */
struct ptx_map_ref ptx_rt_map_ref_planned(const struct ptx_rt *rt, const struct map_def *def,
					  size_t slot);
/* The device memory of a map of def on rt's GPU: its header and data. */
size_t ptx_rt_map_bytes(const struct ptx_rt *rt, const struct map_def *def);
/* ptx_arena_make on rt's GPU (rt with or without a context) with room for
 * the n maps defs[0..n), each ptx_rt_map_bytes in object order. */
int ptx_rt_arena_make(const struct ptx_rt *rt, uint64_t va, const struct map_def *const *defs,
		      size_t n, struct ptx_arena **out, struct err *e);

/* Set element key of an array map (all SM slots of a per-SM array). */
int ptx_rt_map_array_set(struct ptx_rt_map *m, uint32_t key, const void *value,
			 struct err *e);

/* Bytes [off, off + len) of the value of key of a plain array map (not
 * per-SM) into out: a part of a large value (global data), without a
 * whole copy. */
int ptx_rt_map_value_read(struct ptx_rt_map *m, uint32_t key, uint64_t off, void *out,
			  size_t len, struct err *e);

/* Every element of an array or hash map: nr values (per-SM arrays: one per
 * SM slot), each value_size bytes, value_stride apart. fn != 0 stops. */
typedef int (*ptx_rt_elem_fn)(void *arg, const void *key, const void *values, unsigned nr);
int ptx_rt_map_foreach(struct ptx_rt_map *m, ptx_rt_elem_fn fn, void *arg, struct err *e);
/*
 * The host's view as a host map: copy the device's current contents into
 * host (same definition; per-CPU maps need at least as many CPU slots as the
 * device has SMs: SM s goes to slot s).  Hash keys the device no longer has
 * are deleted from host.  The agent refreshes its session's maps this way
 * (SNAPSHOT in the background, COMPLETE when the application unloads or
 * exits); `gpuext` does it on demand.
 */
int ptx_rt_map_sync_to_host(struct ptx_rt_map *m, struct map *host, enum ptx_rt_copy how,
			    struct err *e);
/* The same from a snapshot (header and data as copied from the device). */
int ptx_rt_snapshot_apply(const struct ptx_devmap *h, const void *data, struct map *host,
			  struct err *e);

/* Live elements of a hash map (the device's count). */
int ptx_rt_map_count(struct ptx_rt_map *m, uint64_t *count, struct err *e);

/* Ring buffers: records dropped because the buffer was full (exact). */
int ptx_rt_map_drops(struct ptx_rt_map *m, uint64_t *drops, enum ptx_rt_copy how,
		     struct err *e);
/* Consume the submitted records in order (discarded ones are skipped);
 * returns how many fn was given, stopping early if fn returns non-zero. */
typedef int (*ptx_rt_rec_fn)(void *arg, const void *data, size_t size);
int ptx_rt_ringbuf_poll(struct ptx_rt_map *m, ptx_rt_rec_fn fn, void *arg);

/* Format a trace_printk record ("%d %u %x %lld %llx %p %c %%") into out. */
int ptx_rt_trace_format(const void *rec, size_t size, char *out, size_t len);

/* Load PTX text; a JIT failure gives the driver's log in the message. */
int ptx_rt_module_load(struct ptx_rt *rt, const char *ptx, CUmodule *mod, struct err *e);
/* The same; *jit_ms gets the driver's JIT compile time (CU_JIT_WALL_TIME). */
int ptx_rt_module_load_timed(struct ptx_rt *rt, const char *ptx, CUmodule *mod,
			     float *jit_ms, struct err *e);
/*
 * Load PTX that declares the runtime functions it calls (.extern, see
 * ptx_emit_runtime_decls): the driver's JIT linker compiles the PTX and
 * links it with the prebuilt runtime (ptx_rt_fatbin), so only the kernel
 * and the programs are compiled.  -ENOEXEC when linking failed (no runtime
 * code for the GPU), -EINVAL when the driver rejected the PTX or the
 * module; either way the caller can load the PTX with the runtime's text.
 * *jit_ms (NULL: not asked) gets the compile and link time.
 */
int ptx_rt_module_link(struct ptx_rt *rt, const char *ptx, CUmodule *mod, float *jit_ms,
		       struct err *e);

/* JIT options of a compile (NULL: the driver's defaults). */
struct ptx_rt_jit {
	int opt_level; /* CU_JIT_OPTIMIZATION_LEVEL 0..4; -1: the default (4) */
	int threads;   /* CU_JIT_SPLIT_COMPILE: 0 all CPUs, N threads; -1: not asked (1) */
	int pic;       /* CU_JIT_POSITION_INDEPENDENT_CODE 0/1; -1: not asked */
};

/*
 * Compile ptx with the driver's JIT linker into a cubin (*cubin malloc'd,
 * *len bytes), linked with the prebuilt runtime when runtime is set (PTX
 * that declares runtime functions, as for ptx_rt_module_link), with the JIT
 * options jit.  Errors as ptx_rt_module_link's.  The cubin can be kept
 * (ptx_cache.h) and loaded with ptx_rt_module_load_image.
 */
int ptx_rt_compile(struct ptx_rt *rt, const char *ptx, int runtime, const struct ptx_rt_jit *jit,
		   void **cubin, size_t *len, float *jit_ms, struct err *e);
/* Load a cubin (ELF image); -EINVAL when the driver refuses it. */
int ptx_rt_module_load_image(struct ptx_rt *rt, const void *cubin, CUmodule *mod,
			     struct err *e);

/*
 * Run p once as a standalone kernel (one thread, warp mode): r1 = a device
 * copy of mem (or 0), r2 = len; map k of the program is maps[k].  mem is
 * updated with what the program wrote.  trace, when not NULL, is the
 * trace_printk ring buffer.
 */
enum { PTX_RT_RUN_CONFORMANCE = 1u << 0 }; /* helper 5 returns r1 */
int ptx_rt_run_prog(struct ptx_rt *rt, const struct prog *p, struct ptx_rt_map **maps,
		    struct ptx_rt_map *trace, void *mem, size_t len, unsigned flags,
		    uint64_t *r0, struct err *e);

/*
 * The "ptx" backend of `gpuext conformance` (interp_run's shape): runs p on
 * the first GPU (opened on first use) with r1/r2 = opts->mem/mem_len and
 * the conformance helper rule.
 */
int ptx_rt_conformance_run(const struct prog *p, const struct prog_run_opts *opts,
			   uint64_t *r0, struct err *e);

#endif /* GPUEXT_PTX_RT_H */
