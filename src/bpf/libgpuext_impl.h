/* SPDX-License-Identifier: MIT */
/*
 * libgpuext_impl.h - what the files of the public API share (libgpuext.c,
 * libgpuext_map.c, libgpuext_print.c).  The public API converts the
 * library's struct err messages into print callbacks and errno, once, here
 * at the boundary.
 */
#ifndef GPUEXT_BPF_LIBGPUEXT_IMPL_H
#define GPUEXT_BPF_LIBGPUEXT_IMPL_H

#include <stddef.h>

#include "gpuext/gpuext.h"
#include "map.h"
#include "object.h"

/* A map handed to users: a map of its own, or one of an object's maps
 * (whose storage exists only after gpuext_object__load). */
struct gpuext_map {
	struct gpuext_map_def def;
	struct map *own;         /* gpuext_map__create()d, else NULL */
	struct object_map *omap; /* an object's map, else NULL */
};

/* The map's storage handle, or NULL (with a message) before load. */
struct map *api_map_handle(const struct gpuext_map *map, const char *op);

/* Fill the public definition from the library's. */
void api_map_def_export(struct gpuext_map_def *out, const struct map_def *def);

/* Send one warning to the print callback (a newline is added). */
__attribute__((format(printf, 1, 2))) void api_warn(const char *fmt, ...);

/*
 * Options structs: opts->sz must cover at least the size field, and bytes
 * past the fields this library knows (known bytes) must be zero.
 */
int api_opts_valid(const void *opts, size_t known, const char *what);

/* Is field (offset, size) inside an options struct of sz bytes? */
#define API_OPTS_HAS(opts, type, field)                                        \
	((opts)->sz >= offsetof(type, field) + sizeof((opts)->field))

#endif /* GPUEXT_BPF_LIBGPUEXT_IMPL_H */
