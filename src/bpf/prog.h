/* SPDX-License-Identifier: MIT */
/*
 * prog.h - a program: bytecode, what it attaches to, and what it refers to.
 *
 * Bytecode is kept in "object form": LD_IMM64 with src ISA_PSEUDO_MAP_FD or
 * ISA_PSEUDO_MAP_VALUE carries the index of a map in prog->maps, and local
 * calls carry pc-relative offsets.  Each backend resolves these its own way
 * (the interpreter and the JIT to host addresses of map handles, the PTX
 * translator to device addresses), so one program can run on several
 * backends at once.
 */
#ifndef GPUEXT_BPF_PROG_H
#define GPUEXT_BPF_PROG_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "isa.h"

struct map;
struct helper_table;

/* Attach kind, decided from the ELF section name (see prog_type_from_section). */
enum prog_type {
	PROG_TYPE_RAW = 0,       /* no attach point: r1 = memory, r2 = its length */
	PROG_TYPE_UPROBE,        /* uprobe/FUNC: CUDA API entry, ctx = struct pt_regs */
	PROG_TYPE_URETPROBE,     /* uretprobe/FUNC */
	PROG_TYPE_UPROBE_PATH,   /* uprobe/PATH:FUNC, kernel uprobes through libbpf */
	PROG_TYPE_GPU_ENTRY,     /* gpu/entry/KERNEL (alias kprobe/KERNEL) */
	PROG_TYPE_GPU_EXIT,      /* gpu/exit/KERNEL (alias kretprobe/KERNEL) */
	PROG_TYPE_GPU_MEM,       /* gpu/mem/KERNEL */
	PROG_TYPE_CUPTI_KERNEL,  /* cupti/kernel */
	PROG_TYPE_CUPTI_MEMCPY,  /* cupti/memcpy */
	PROG_TYPE_CUPTI_UVM,     /* cupti/uvm */
	PROG_TYPE_STRUCT_OPS,    /* struct_ops/OP */
	PROG_TYPE_GPU_BLOCK_ENTRY, /* gpu/block_entry/KERNEL: once per block, at its start */
	PROG_TYPE_GPU_BLOCK_EXIT,  /* gpu/block_exit/KERNEL: once per block, at its last exit */
};

/* Is the program run on the GPU (device verifier profile, PTX backend)? */
static inline int prog_type_is_gpu(enum prog_type t)
{
	return t == PROG_TYPE_GPU_ENTRY || t == PROG_TYPE_GPU_EXIT || t == PROG_TYPE_GPU_MEM ||
	       t == PROG_TYPE_GPU_BLOCK_ENTRY || t == PROG_TYPE_GPU_BLOCK_EXIT;
}

/*
 * Section name -> type and attach target (the part after the prefix:
 * FUNC, PATH:FUNC, KERNEL glob, OP).  Unknown sections give -ENOENT.
 */
int prog_type_from_section(const char *section, enum prog_type *type,
			   const char **target);
const char *prog_type_name(enum prog_type t);

/* Source position of an instruction, from BTF line info. */
struct prog_line {
	uint32_t insn;     /* index of the first instruction of the line */
	const char *file;  /* owned by the object */
	const char *text;  /* the source line, owned by the object; may be NULL */
	uint32_t line;
	uint32_t col;
};

struct prog {
	char *name;         /* function symbol ("handle_launch") */
	char *section;      /* ELF section ("uprobe/cuLaunchKernel") */
	enum prog_type type;
	char *target;       /* attach target from the section, or NULL */

	struct isa_insn *insns;
	size_t insn_cnt;

	/* Maps referred to by LD_IMM64 pseudo instructions (not owned). */
	struct map **maps;
	size_t map_cnt;

	/* Sorted by insn; may be empty. */
	struct prog_line *lines;
	size_t line_cnt;

	/* Set by the verifier. */
	int verified;
	uint32_t stack_depth; /* deepest stack use of any frame, bytes */

	/* Set by the JIT (NULL until compiled). */
	void *jit;
};

/* A program from raw bytecode (copied), named for messages. */
int prog_from_insns(const char *name, const struct isa_insn *insns, size_t cnt,
		    struct prog **out, struct err *e);
void prog_free(struct prog *p);

/* The source line covering instruction idx, or NULL. */
const struct prog_line *prog_line_of(const struct prog *p, size_t idx);

/* Execution backends that run a program on the host. */
enum prog_backend { PROG_BACKEND_INTERP, PROG_BACKEND_JIT };

/*
 * Options for one run.  mem/mem_len describe the memory a raw program
 * receives in r1/r2 (conformance, test-run).  With bounds_check set, the
 * interpreter refuses (and reports) any access outside the stack, mem, the
 * ctx, map values and ring buffer records: the verifier's safety net in
 * fuzzing.
 */
struct prog_run_opts {
	uint64_t args[5];                    /* r1..r5 */
	const struct helper_table *helpers;  /* NULL: helper_table_default() */
	int bounds_check;
	const void *mem;                     /* for bounds_check */
	size_t mem_len;
};

/*
 * Run p with backend b (opts may be NULL; opts->helpers NULL means
 * helper_table_default()) and store r0.  Returns 0 or a negative errno
 * with e set.
 */
int prog_run(const struct prog *p, enum prog_backend b, const struct prog_run_opts *opts,
	     uint64_t *r0, struct err *e);

#endif /* GPUEXT_BPF_PROG_H */
