/* SPDX-License-Identifier: MIT */
/*
 * libgpuext.c - the public object and program API (maps: libgpuext_map.c),
 * a thin layer over object.h and prog_run() that turns struct err messages
 * into print callbacks and errno.
 */
#include "libgpuext_impl.h"
#include "jit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prog.h"
#include "verifier.h"

struct gpuext_program {
	struct prog *prog;
	struct gpuext_object *owner;
	/* Raw programs (r1 = memory) are verified at test_run for the size of
	 * the memory they get; safe for that size and any larger one. */
	uint32_t verified_mem_size;
};

struct gpuext_object {
	struct object *obj;
	struct gpuext_program *progs; /* one per obj->progs[i] */
	struct gpuext_map *maps;      /* one per obj->maps[i] */
	int loaded;
};

GPUEXT_API void gpuext_object__close(struct gpuext_object *obj)
{
	if (!obj)
		return;
	object_free(obj->obj);
	free(obj->progs);
	free(obj->maps);
	free(obj);
}

GPUEXT_API struct gpuext_object *gpuext_object__open(const char *path,
						     const struct gpuext_object_open_opts *opts)
{
	struct gpuext_object *g;
	struct err e;
	int err;

	if (!path || !api_opts_valid(opts, sizeof(*opts), "gpuext_object__open")) {
		errno = EINVAL;
		return NULL;
	}
	if (!(g = calloc(1, sizeof(*g)))) {
		errno = ENOMEM;
		return NULL;
	}
	if ((err = object_open(path, &g->obj, &e))) {
		api_warn("%s", e.msg);
		free(g);
		errno = -err;
		return NULL;
	}
	const char *name = opts && API_OPTS_HAS(opts, struct gpuext_object_open_opts, object_name)
				   ? opts->object_name : NULL;
	char *renamed = name ? strdup(name) : NULL;
	g->progs = calloc(g->obj->prog_cnt ? g->obj->prog_cnt : 1, sizeof(*g->progs));
	g->maps = calloc(g->obj->map_cnt ? g->obj->map_cnt : 1, sizeof(*g->maps));
	if (!g->progs || !g->maps || (name && !renamed)) {
		free(renamed);
		gpuext_object__close(g);
		errno = ENOMEM;
		return NULL;
	}
	if (renamed) {
		free(g->obj->name);
		g->obj->name = renamed;
	}
	for (size_t i = 0; i < g->obj->prog_cnt; i++)
		g->progs[i] = (struct gpuext_program){g->obj->progs[i], g, 0};
	for (size_t i = 0; i < g->obj->map_cnt; i++) {
		g->maps[i].omap = &g->obj->maps[i];
		api_map_def_export(&g->maps[i].def, &g->obj->maps[i].def);
	}
	return g;
}

/* Verify prog (raw programs: for mem_size bytes behind r1). */
static int api_verify(struct gpuext_program *prog, uint32_t mem_size)
{
	struct vfy_opts opts = {.profile = VFY_PROFILE_AUTO, .mem_size = mem_size};
	struct err e;
	int err = verifier_check(prog->prog, &opts, NULL, &e);

	if (err) {
		api_warn("%s: prog '%s': %s", prog->owner->obj->name, prog->prog->name, e.msg);
		return err;
	}
	prog->verified_mem_size = mem_size;
	return 0;
}

/* Like libbpf's bpf_object__load: maps are created, then every program
 * must pass the verifier (raw programs wait for test_run, which knows the
 * size of their memory). */
GPUEXT_API int gpuext_object__load(struct gpuext_object *obj)
{
	struct err e;
	int err;

	if (obj->loaded) {
		api_warn("%s: object is already loaded", obj->obj->name);
		return -EINVAL;
	}
	if ((err = object_create_maps(obj->obj, &e))) {
		api_warn("%s", e.msg);
		return err;
	}
	for (size_t i = 0; i < obj->obj->prog_cnt; i++)
		if (obj->progs[i].prog->type != PROG_TYPE_RAW && (err = api_verify(&obj->progs[i], 0)))
			return err;
	obj->loaded = 1;
	return 0;
}

GPUEXT_API struct gpuext_program *gpuext_object__next_program(const struct gpuext_object *obj,
							      struct gpuext_program *prev)
{
	size_t next = prev ? (size_t)(prev - obj->progs) + 1 : 0;
	return next < obj->obj->prog_cnt ? &obj->progs[next] : NULL;
}

GPUEXT_API struct gpuext_program *
gpuext_object__find_program_by_name(const struct gpuext_object *obj, const char *name)
{
	struct prog *p = object_find_prog(obj->obj, name);

	for (size_t i = 0; p && i < obj->obj->prog_cnt; i++)
		if (obj->progs[i].prog == p)
			return &obj->progs[i];
	errno = ENOENT;
	return NULL;
}

GPUEXT_API struct gpuext_map *gpuext_object__find_map_by_name(const struct gpuext_object *obj,
							      const char *name)
{
	struct object_map *m = object_find_map(obj->obj, name);

	if (!m) {
		errno = ENOENT;
		return NULL;
	}
	return &obj->maps[m - obj->obj->maps];
}

GPUEXT_API const char *gpuext_program__name(const struct gpuext_program *prog)
{
	return prog->prog->name;
}

GPUEXT_API const char *gpuext_program__section(const struct gpuext_program *prog)
{
	return prog->prog->section;
}

GPUEXT_API size_t gpuext_program__insn_cnt(const struct gpuext_program *prog)
{
	return prog->prog->insn_cnt;
}

enum { API_CTX_MIN = 4096 };

static uint64_t api_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

GPUEXT_API int gpuext_program__test_run(struct gpuext_program *prog,
					struct gpuext_test_run_opts *opts)
{
	typedef struct gpuext_test_run_opts O;
	const char *name = prog->prog->name;
	struct err e;

	if (!opts || !api_opts_valid(opts, sizeof(*opts), "gpuext_program__test_run"))
		return -EINVAL;
	if (!prog->owner->loaded) {
		api_warn("prog '%s': test_run: the object is not loaded (gpuext_object__load)", name);
		return -EINVAL;
	}
	int use_ctx = API_OPTS_HAS(opts, O, ctx_size_in) && opts->ctx_in;
	const void *in = use_ctx ? opts->ctx_in
				 : API_OPTS_HAS(opts, O, data_size_in) ? opts->data_in : NULL;
	size_t len = !in ? 0 : use_ctx ? opts->ctx_size_in : opts->data_size_in;
	int repeat = API_OPTS_HAS(opts, O, repeat) && opts->repeat ? opts->repeat : 1;
	if (repeat < 0) {
		api_warn("prog '%s': test_run: repeat %d is negative", name, repeat);
		return -EINVAL;
	}
	enum prog_backend backend = PROG_BACKEND_JIT;
	if (API_OPTS_HAS(opts, O, backend) && opts->backend == GPUEXT_BACKEND_INTERP)
		backend = PROG_BACKEND_INTERP;
	else if (API_OPTS_HAS(opts, O, backend) && opts->backend != GPUEXT_BACKEND_JIT &&
		 opts->backend != GPUEXT_BACKEND_DEFAULT) {
		api_warn("prog '%s': test_run: unknown backend %d", name, (int)opts->backend);
		return -EINVAL;
	}
	int err = 0;
	if (prog->prog->type == PROG_TYPE_RAW &&
	    (!prog->prog->verified || len < prog->verified_mem_size))
		err = api_verify(prog, (uint32_t)len);
	if (err)
		return err;
	/* A private copy: the program may write its input.  Each run sees the
	 * same input.  Zero-padded to API_CTX_MIN: the verifier lets a program
	 * read its whole ctx record (pt_regs, ...), all smaller than that, so
	 * JIT-compiled code never reads past the copy of a shorter ctx_in. */
	unsigned char *buf = calloc(1, len > API_CTX_MIN ? len : API_CTX_MIN);
	if (!buf)
		return -ENOMEM;
	/* The JIT compiles once, after the maps exist. */
	if (backend == PROG_BACKEND_JIT && !prog->prog->jit &&
	    (err = jit_compile(prog->prog, NULL, &e))) {
		api_warn("prog '%s': %s", name, e.msg);
		free(buf);
		return err;
	}
	uint64_t r0 = 0, start = api_now_ns();
	for (int i = 0; !err && i < repeat; i++) {
		if (len)
			memcpy(buf, in, len);
		struct prog_run_opts ro = {.args = {(uintptr_t)buf, len}, .mem = buf, .mem_len = len};
		err = prog_run(prog->prog, backend, &ro, &r0, &e);
	}
	uint64_t mean = (api_now_ns() - start) / (uint64_t)repeat;
	if (err) {
		api_warn("prog '%s': %s", name, e.msg);
	} else {
		if (API_OPTS_HAS(opts, O, retval))
			opts->retval = r0;
		if (API_OPTS_HAS(opts, O, duration))
			opts->duration = mean > UINT32_MAX ? UINT32_MAX : (uint32_t)mean;
		if (!use_ctx && API_OPTS_HAS(opts, O, data_size_out) && opts->data_out) {
			size_t room = opts->data_size_out;
			memcpy(opts->data_out, buf, room < len ? room : len);
			opts->data_size_out = (uint32_t)len;
			if (room < len)
				err = -ENOSPC; /* libbpf's answer: the output was cut */
		}
	}
	free(buf);
	return err;
}
