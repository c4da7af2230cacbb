/* SPDX-License-Identifier: MIT */
/*
 * vfy.h - the verifier's internals, shared by its files (not an API: see
 * verifier.h).
 *
 *   vfy_cfg.c     control flow: functions, jumps, reachability, call graph
 *   vfy_state.c   registers, stack slots, frames; copying and comparing states
 *   vfy_mem.c     loads, stores and atomics on every kind of pointer
 *   vfy_ctx.c     which ctx offsets each program type may read or write
 *   vfy_helper.c  helper calls against their prototypes; references
 *   vfy_prec.c    precision: which scalars' exact values a path relied on
 *   vfy_log.c     the log and the error messages
 *   verifier.c    the exploration: ALU, jumps, calls, pruning, budgets
 *
 * Naming: check_* may reject the program, mark_* only updates state.  A
 * rejection is vfy_reject() (-EACCES/-EINVAL/-E2BIG, the program's fault);
 * vfy_bug() (-EFAULT) is a broken invariant of the verifier itself.
 */
#ifndef GPUEXT_BPF_VFY_H
#define GPUEXT_BPF_VFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "helpers.h"
#include "map.h"
#include "verifier.h"
#include "vfy_range.h"

enum vfy_reg_type {
	REG_NOT_INIT = 0,
	REG_SCALAR,
	REG_PTR_CTX,
	REG_PTR_STACK,
	REG_PTR_MAP_VALUE,
	REG_PTR_MAP_VALUE_OR_NULL,
	REG_CONST_MAP,
	REG_PTR_RINGBUF_REC,
	REG_PTR_RINGBUF_REC_OR_NULL,
	REG_PTR_MEM,     /* raw programs: the memory behind r1 */
	REG_RELEASED,    /* a ring buffer record after submit/discard */
};

/*
 * One register (or spilled register).  For scalars, b is the value.  For
 * pointers, the address is region base + off + (a value in b): off is the
 * known part, b the variable part (constant 0 unless a variable was added).
 */
struct vfy_reg {
	uint8_t type;     /* enum vfy_reg_type */
	uint8_t frameno;  /* PTR_STACK: whose frame */
	/*
	 * Scalars of stored states only (always 0 on the path being explored):
	 * some path below the state relied on this value's bounds (vfy_prec.c),
	 * so pruning must compare them; other scalars match any scalar.
	 */
	uint8_t precise;
	/*
	 * Scalars with an id: every scalar with the same id holds the same
	 * value (LINK_COPY) or a 32-bit view of it, so a branch that bounds one
	 * bounds the others (compilers check a copy and use the original).
	 */
	uint8_t link;
	int32_t off;
	uint32_t id;      /* *_OR_NULL: shared by copies, so one check marks all;
			   * scalars: see link */
	uint32_t ref_id;  /* ring buffer records: the reference to release */
	uint32_t map;     /* map index: CONST_MAP, MAP_VALUE(_OR_NULL) */
	uint32_t size;    /* bytes of the region: PTR_MEM, RINGBUF_REC(_OR_NULL) */
	uint32_t insn;    /* RELEASED: where it was released */
	struct vfy_bounds b;
};

enum {
	LINK_COPY = 0,
	LINK_ZEXT32, /* the low 32 bits of the value, zero-extended */
	LINK_SEXT32, /* ... sign-extended */
	LINK_SHL32,  /* the value << 32: half way to one of the two above */
};

/* Per stack byte: what the program wrote there. */
enum {
	SLOT_INVALID = 0,
	SLOT_MISC,    /* data */
	SLOT_SPILL,   /* part of an 8-byte spilled register (spill[]) */
	SLOT_SPILL32, /* part of a 4-byte spilled scalar (spill32_min/max[]) */
};
enum { VFY_SLOTS = ISA_STACK_SIZE / 8 };

struct vfy_frame {
	struct vfy_reg regs[ISA_NR_REGS];
	uint8_t stype[ISA_STACK_SIZE];     /* byte fp-512+i */
	struct vfy_reg spill[VFY_SLOTS];   /* slot i covers fp-512+8i .. +8 */
	/* 4-byte half i (fp-512+4i): the u32 bounds of a spilled 32-bit scalar */
	uint32_t spill32_min[ISA_STACK_SIZE / 4], spill32_max[ISA_STACK_SIZE / 4];
	uint32_t callsite;                 /* call insn, UINT32_MAX in the main frame */
	uint32_t subprog;
};

enum { VFY_MAX_REFS = 16 };
struct vfy_ref {
	uint32_t id;
	uint32_t insn; /* where it was acquired */
};

struct vfy_state {
	struct vfy_frame *frames[ISA_MAX_CALL_DEPTH];
	uint32_t curframe;
	uint32_t nrefs;
	struct vfy_ref refs[VFY_MAX_REFS];
};

/* A function of the program: [start, end) instruction slots. */
struct vfy_subprog {
	uint32_t start, end;
	uint32_t stack_depth;  /* deepest byte touched below fp, rounded to 8 */
	uint32_t *callees;     /* subprog indexes, may repeat */
	uint32_t ncallees;
};

/* Per-instruction facts from the CFG pass. */
enum {
	INSN_PRUNE = 1u << 0,   /* worth storing/comparing states here */
	INSN_SEEN = 1u << 1,    /* reached by exploration */
	INSN_LDDW_HI = 1u << 2, /* second slot of an lddw */
	INSN_LOOP = 1u << 3,    /* target of a backward jump: a loop's head */
};

/* A stored state, at a prune point. */
struct vfy_explored {
	struct vfy_state *st;
	struct vfy_explored *parent; /* stored state this one's path came through */
	struct vfy_explored *next;   /* same instruction, same list */
	struct vfy_explored **pprev; /* the link that points here */
	uint32_t insn;
	uint32_t branches;           /* paths still being explored below this one */
	uint32_t hits, misses;       /* pruned a path / failed to, once complete */
	uint32_t trail_pos;          /* the path's trail entry just before st */
	bool hashed;                 /* hash computed (only loops need it) */
	uint64_t hash;               /* vfy_state_hash of st */
};

/*
 * The trail: one entry per instruction processed, linked to the entry
 * before it on the same path (paths share their common prefix).  Walking it
 * backwards from the current instruction is how precision finds which
 * earlier values a value came from.
 */
enum { TRAIL_NONE = UINT32_MAX, TRAIL_STACK_VAR = 0xffff };
struct vfy_trail {
	uint32_t insn;
	uint32_t prev;  /* TRAIL_NONE at the program's first instruction */
	uint8_t frame;  /* the frame the instruction ran in */
	/* a load/store of the stack: 1 + frameno * VFY_SLOTS + slot at a
	 * constant offset, TRAIL_STACK_VAR at a variable one; 0 otherwise */
	uint16_t stack;
	/* registers and top 16 stack slots (fp-128..fp-1) of `frame` whose
	 * precision was carried back from here already */
	uint16_t done, done_slots;
};

struct vfy_env {
	struct prog *p;
	struct vfy_opts opts;       /* defaults resolved */
	enum vfy_profile profile;   /* HOST or GPU */
	struct err *e;
	const struct helper_proto *(*proto)(uint32_t id);

	uint8_t *insn_flags;
	uint16_t *live, *precise; /* register masks per insn (vfy_live.c) */
	uint32_t *insn_subprog;
	struct vfy_subprog *subprogs;
	uint32_t nsubprogs;

	struct vfy_state *cur;
	uint32_t insn_idx;
	uint32_t id_gen;
	struct vfy_explored *parent; /* the current path's last stored state */

	struct vfy_trail *trail;
	uint32_t trail_len, trail_cap;
	uint32_t trail_tail;          /* the current path's newest entry */

	struct vfy_explored **explored; /* per insn: complete stored states */
	struct vfy_explored **looping;  /* per insn: those still being explored */
	uint64_t last_stored;           /* insns_processed when a state was last stored */
	uint32_t forks_since_stored;    /* branches pushed since then */
	struct vfy_stats stats;
	uint32_t live_states;

	/* The log: log_len is the logical length (may exceed what fits). */
	size_t log_len;
};

/* vfy_cfg.c */
int vfy_cfg_check(struct vfy_env *env);
int vfy_check_stack_depth(struct vfy_env *env);
void vfy_cfg_free(struct vfy_env *env);
uint32_t vfy_subprog_of(const struct vfy_env *env, uint32_t insn);

/* vfy_live.c */
int vfy_live_compute(struct vfy_env *env);

/* vfy_prec.c */
/* A new trail entry for the current instruction (env->trail_tail). */
int vfy_trail_push(struct vfy_env *env);
/* The current instruction accesses stack slot `slot` of frame f (or a variable one). */
void vfy_trail_note_stack(struct vfy_env *env, uint32_t frameno, int64_t lo, int64_t hi);
/* The current instruction relies on the exact bounds of these registers. */
void mark_precise(struct vfy_env *env, uint16_t regs);
/* The current path was pruned by old: it relies on what old's paths relied on. */
void mark_precise_as(struct vfy_env *env, const struct vfy_state *old);
/* A state about to be stored starts with no precise scalar. */
void mark_all_imprecise(struct vfy_state *s);

/* vfy_state.c */
struct vfy_state *vfy_state_new(void);
struct vfy_state *vfy_state_copy(const struct vfy_state *s);
void vfy_state_free(struct vfy_state *s);
struct vfy_frame *vfy_frame_new(uint32_t callsite, uint32_t subprog, uint32_t frameno);
static inline struct vfy_frame *vfy_cur_frame(const struct vfy_state *s)
{
	return s->frames[s->curframe];
}
static inline struct vfy_reg *vfy_cur_regs(const struct vfy_state *s)
{
	return s->frames[s->curframe]->regs;
}
void mark_reg_not_init(struct vfy_reg *r);
void mark_reg_unknown(struct vfy_reg *r);
void mark_reg_const(struct vfy_reg *r, uint64_t v);
void mark_reg_scalar(struct vfy_reg *r, struct vfy_bounds b);
static inline bool vfy_reg_is_ptr(const struct vfy_reg *r)
{
	return r->type != REG_NOT_INIT && r->type != REG_SCALAR && r->type != REG_RELEASED;
}
static inline bool vfy_reg_is_null_const(const struct vfy_reg *r)
{
	return r->type == REG_SCALAR && tnum_equals_const(r->b.var, 0);
}
/* Calls fn on every register and spilled register of every frame. */
void vfy_for_each_reg(struct vfy_state *s, void (*fn)(struct vfy_reg *r, void *arg), void *arg);
/*
 * Is every behaviour of cur at the current instruction covered by old (old
 * explored safely)?  exact: equal in everything that matters there.
 */
bool vfy_states_equal(const struct vfy_env *env, const struct vfy_state *old,
		      const struct vfy_state *cur, bool exact);
/* Equal for states vfy_states_equal(exact) calls equal (a quick filter). */
uint64_t vfy_state_hash(const struct vfy_env *env, const struct vfy_state *s);
const char *vfy_reg_type_name(enum vfy_reg_type t);

/* The definition of the program's map number map, or NULL if there is none. */
static inline const struct map_def *vfy_map_def(const struct vfy_env *env, uint32_t map)
{
	if (map >= env->p->map_cnt || !env->p->maps || !env->p->maps[map])
		return NULL;
	return map_get_def(env->p->maps[map]);
}

/* vfy_mem.c */
enum vfy_access { ACCESS_READ, ACCESS_WRITE, ACCESS_ATOMIC };
/*
 * Access size bytes at R[regno] + off.  Loads put the value in *loaded;
 * stores take it from *value (NULL: an immediate, a scalar).
 */
int check_mem_access(struct vfy_env *env, uint32_t regno, int32_t off, uint32_t size,
		     enum vfy_access kind, bool sign_extend, const struct vfy_reg *value,
		     struct vfy_reg *loaded);
/*
 * The bytes [R+0, R+size_min..size_max) for a helper argument.  leaks: the
 * helper shows what it reads to a user, so no spilled pointer may be among it.
 */
int check_helper_mem(struct vfy_env *env, uint32_t regno, uint64_t size_min, uint64_t size_max,
		     bool write, bool leaks, const char *what);
int check_load_store(struct vfy_env *env, const struct isa_insn *insn);

/* vfy_ctx.c */
struct vfy_ctx_desc {
	const char *name;    /* "struct pt_regs" */
	uint32_t size;       /* bytes; 0: the program has no ctx */
	bool writable;
	uint32_t field_size; /* fields are this size and aligned to it; 0: any bytes */
};
const struct vfy_ctx_desc *vfy_ctx_of(enum prog_type t);
int check_ctx_access(struct vfy_env *env, uint32_t regno, int64_t lo, int64_t hi,
		     uint32_t size, bool write);

/* vfy_helper.c */
int check_helper_call(struct vfy_env *env, const struct isa_insn *insn);
int mark_ref_release(struct vfy_env *env, uint32_t ref_id);

/* vfy_log.c */
__attribute__((format(printf, 2, 3))) void vfy_log(struct vfy_env *env, const char *fmt, ...);
static inline bool vfy_log_on(const struct vfy_env *env)
{
	return env->opts.log_level != VFY_LOG_OFF && env->opts.log_buf && env->opts.log_size;
}
void vfy_log_insn(struct vfy_env *env, uint32_t idx);
void vfy_log_state(struct vfy_env *env, const struct vfy_state *s);
void vfy_log_truncate(struct vfy_env *env, size_t len);
/* Reject at the current instruction: the message gets "insn N: `asm`: ". */
__attribute__((format(printf, 3, 4))) int vfy_reject(struct vfy_env *env, int errnum,
						     const char *fmt, ...);
/* Reject at instruction idx. */
__attribute__((format(printf, 4, 5))) int vfy_reject_at(struct vfy_env *env, uint32_t idx,
							int errnum, const char *fmt, ...);
__attribute__((format(printf, 2, 3))) int vfy_bug(struct vfy_env *env, const char *fmt, ...);
/* "R1=map_value(map 0, off 8)" etc. into buf. */
int vfy_reg_str(char *buf, size_t size, const struct vfy_reg *r);

#endif /* GPUEXT_BPF_VFY_H */
