/* SPDX-License-Identifier: MIT */
/*
 * verifier.h - prove a program safe before any backend runs it.
 *
 * verifier_check() explores every path of the program by abstract
 * interpretation (register types, scalar bounds and tnums, stack slots,
 * references) and accepts it only if no path can touch memory it was not
 * given, leak a pointer, leave a ring buffer record unreleased, call a
 * helper with arguments of the wrong kind, or run forever.  Every load path
 * (CLI, libgpuext, agent) calls it; there is no way around it for device
 * programs.
 */
#ifndef GPUEXT_BPF_VERIFIER_H
#define GPUEXT_BPF_VERIFIER_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "helpers.h"
#include "prog.h"

enum vfy_profile {
	VFY_PROFILE_AUTO = 0, /* GPU for gpu/... program types, else HOST */
	VFY_PROFILE_HOST,
	VFY_PROFILE_GPU,      /* HELPER_F_GPU helpers only, none sleepable, lower budgets */
};

enum vfy_log_level {
	VFY_LOG_OFF = 0,
	VFY_LOG_PATH = 1, /* the instructions and states along the failing path */
	VFY_LOG_ALL = 2,  /* every instruction processed, on every path */
};

/* Defaults of the two profiles (0 in vfy_opts picks them). */
enum {
	VFY_HOST_INSN_LIMIT = 1000000,
	VFY_GPU_INSN_LIMIT = 100000,
	VFY_HOST_STACK_LIMIT = 512, /* bytes, all frames of a call chain together */
	VFY_GPU_STACK_LIMIT = 256,
};

struct vfy_opts {
	enum vfy_profile profile;
	enum vfy_log_level log_level;
	char *log_buf;          /* NUL-terminated log; truncated to log_size */
	size_t log_size;
	uint32_t mem_size;      /* PROG_TYPE_RAW: bytes behind r1 (r2 holds it) */
	uint32_t insn_limit;    /* instructions processed, all paths; 0: profile's */
	uint32_t stack_limit;   /* 0: profile's */
	int allow_ptr_leaks;    /* may pointers reach maps, records, helper output? */
	/* Helper prototypes; NULL: helper_proto_find. */
	const struct helper_proto *(*helper_proto)(uint32_t id);
	/* Bytes of ctx the program may read when smaller than its type's
	 * (a struct_ops op's own ctx struct); 0: the type's. */
	uint32_t ctx_size;
};

struct vfy_stats {
	uint64_t insns_processed; /* over all paths */
	uint32_t states;          /* states stored for pruning */
	uint32_t peak_states;     /* most stored at once */
	uint32_t pruned;          /* paths cut by an equivalent explored state */
	uint32_t stack_depth;     /* deepest call chain, bytes */
	uint64_t time_ns;
};

/*
 * Verify p.  opts and stats may be NULL.  On success sets p->verified and
 * p->stack_depth and returns 0.  A program found unsafe gives -EACCES (or
 * -EINVAL for malformed control flow, -E2BIG when a budget is exhausted)
 * with a message "insn N: `disassembly`: what is wrong (file:line: source)";
 * -EFAULT is an internal error of the verifier, never the program's fault.
 */
int verifier_check(struct prog *p, const struct vfy_opts *opts, struct vfy_stats *stats,
		   struct err *e);

#endif /* GPUEXT_BPF_VERIFIER_H */
