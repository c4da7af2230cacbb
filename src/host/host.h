/* SPDX-License-Identifier: MIT */
/*
 * host.h - the kernel-uprobe backend: the uprobe/ and uretprobe/ programs
 * of an object gpuext has verified, loaded into the kernel with libbpf and
 * attached through perf_event uprobes (no tracefs) to one process or all.
 *
 * Targets (the part of the section after "uprobe/"):
 *   PATH:FUNC   PATH contains '/': that file
 *   LIB:FUNC    a library by name (libcuda.so.1, libcudart.so): the file the
 *               process has mapped whose name is LIB or LIB.<version>; with
 *               no process, the file the dynamic linker loads for LIB
 *   FUNC        a CUDA driver function: in libcuda.so.1, else the first
 *               library of the process that defines FUNC
 * FUNC is a symbol of the file's symbol table (.symtab, else .dynsym),
 * attached at its file offset.
 *
 * The kernel's maps are its own: host_copy_maps() copies their contents
 * into the gpuext object's maps so that `gpuext run`'s formatters print
 * them.  Only the CLI and the benchmarks link this layer (and libbpf); the
 * agent never does.
 */
#ifndef GPUEXT_HOST_H
#define GPUEXT_HOST_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/err.h"

struct object;

enum { HOST_FUNC_MAX = 256 };

/* Where a probe goes: a file and the file offset of the function. */
struct host_target {
	char path[PATH_MAX];
	char func[HOST_FUNC_MAX];
	uint64_t offset;
};

/*
 * File offset of the defined function (STT_FUNC or STT_GNU_IFUNC) func in
 * the ELF file path: from .symtab when it has func, else from .dynsym.
 * -ENOENT when the file does not define it.
 */
int host_elf_func_offset(const char *path, const char *func, uint64_t *off, struct err *e);

/* The regular files pid has mapped executable, each once, in address order. */
struct host_libs {
	char **paths;
	size_t cnt;
};
int host_proc_libs(pid_t pid, struct host_libs *out, struct err *e);
void host_libs_free(struct host_libs *libs);

/*
 * Is the file path the library lib: same name up to ".so", then nothing or
 * a version?  The name a program asks for is rarely the file's:
 * libcuda.so.1 is /usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05 in maps.
 */
int host_lib_matches(const char *path, const char *lib);

/*
 * Resolve target (see above) in the libraries of pid, or, with pid <= 0,
 * through the dynamic linker's search (dlopen of LIB in this process).
 * With search set, a target pid has not mapped (yet) is looked up the
 * second way too.
 */
int host_resolve(const char *target, pid_t pid, int search, struct host_target *out,
		 struct err *e);

/* Is section a kernel-uprobe section (uprobe/..., uretprobe/...)?  Its
 * target and direction when it is. */
int host_section_target(const char *section, const char **target, int *retprobe);

struct host;

/*
 * Load obj's uprobe and uretprobe programs (verified by gpuext first) and
 * every map into the kernel from obj's ELF image; other programs are not
 * loaded.  -EPERM names the privileges needed.
 */
int host_open(const struct object *obj, struct host **out, struct err *e);

/*
 * Attach every loaded program to pid (-1: every process), each target
 * resolved with host_resolve(target, pid, search).  Prints one line per
 * probe to stderr when verbose.  Returns the number attached.
 */
int host_attach_all(struct host *h, pid_t pid, int search, int verbose, struct err *e);

/* Attach the program called prog (function name) at t for pid. */
int host_attach_prog(struct host *h, const char *prog, pid_t pid, int retprobe,
		     const struct host_target *t, struct err *e);

/* Detach every probe (the programs and maps stay loaded). */
void host_detach(struct host *h);

/* Ring buffer records as they arrive, with the map's name. */
typedef int (*host_record_fn)(void *arg, const char *map, const void *data, size_t size);

/*
 * Wait up to timeout_ms for ring buffer records and pass each to fn.
 * Returns the number of records or a negative errno.
 */
int host_poll(struct host *h, int timeout_ms, host_record_fn fn, void *arg);

/*
 * Copy the kernel maps' elements into the maps of obj with the same names
 * (ring buffers and global data skipped).  Per-CPU values of CPUs past
 * obj's slots are added into the slots (8-byte values) or dropped.
 */
int host_copy_maps(struct host *h, struct object *obj, struct err *e);

/* One element of the kernel map called map (value: one copy per CPU for
 * per-CPU maps, each rounded up to 8 bytes). */
int host_map_lookup(struct host *h, const char *map, const void *key, void *value,
		    size_t value_size, struct err *e);

void host_close(struct host *h);

#endif /* GPUEXT_HOST_H */
