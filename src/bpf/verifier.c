/* SPDX-License-Identifier: MIT */
/*
 * verifier.c - the exploration.
 *
 * Depth-first over all paths: at a conditional jump whose outcome the
 * bounds do not decide, the other direction is saved on a worklist and
 * explored after the current path ends (exit of the program or pruned).
 *
 * Pruning: at prune points (jump targets, after conditional jumps, function
 * entries) the state is stored.  A later path reaching the same instruction
 * in a state that a stored one covers (vfy_states_equal) need not go on,
 * provided the stored state's own exploration has finished safely.  Each
 * stored state counts the paths still running below it (branches); it is
 * only a proof once that count is 0.  A state covered by one whose
 * exploration is still running is on a loop back to it: if the two are
 * identical, the loop makes no progress ("infinite loop"); otherwise the
 * loop is unrolled, and the instruction budget bounds how far.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vfy.h"

/*
 * Bounds on memory: states stored per instruction and in all, and paths
 * waiting on the worklist.  Past the first two the verifier only prunes less
 * (completed states are evicted first); past the third it gives up.
 */
enum { VFY_STATES_PER_INSN = 64, VFY_MAX_STATES = 16384, VFY_MAX_PENDING = 8192 };
/* Instructions between two states stored past VFY_STATES_PER_INSN at a loop head. */
enum { VFY_LOOP_GAP = 16 };

struct vfy_pending {
	struct vfy_state *st;
	uint32_t insn;
	uint32_t trail_tail;
	struct vfy_explored *parent;
	size_t log_len;
};

struct vfy_worklist {
	struct vfy_pending *items;
	size_t n, cap;
};

static const char *rn(uint32_t r)
{
	static const char *const n[] = {"R0", "R1", "R2", "R3", "R4", "R5",
					"R6", "R7", "R8", "R9", "R10"};
	return r < ISA_NR_REGS ? n[r] : "R?";
}

static void list_insert(struct vfy_explored **head, struct vfy_explored *x)
{
	x->next = *head;
	if (x->next)
		x->next->pprev = &x->next;
	x->pprev = head;
	*head = x;
}

static void list_remove(struct vfy_explored *x)
{
	*x->pprev = x->next;
	if (x->next)
		x->next->pprev = x->pprev;
}

/* A path ended: stored states whose exploration is now complete may prune. */
static void release_path(struct vfy_env *env, struct vfy_explored *node)
{
	while (node && --node->branches == 0) {
		list_remove(node);
		list_insert(&env->explored[node->insn], node);
		node = node->parent;
	}
}

/* The other direction of a branch: explored later, from the current path. */
static int push_branch(struct vfy_env *env, struct vfy_worklist *wl, struct vfy_state *st,
		       uint32_t insn)
{
	struct vfy_explored *parent = env->parent;

	if (wl->n >= VFY_MAX_PENDING)
		return vfy_reject(env, E2BIG,
				  "program too complex: more than %d branches waiting to be explored",
				  VFY_MAX_PENDING);
	if (wl->n == wl->cap) {
		size_t cap = wl->cap ? wl->cap * 2 : 64;
		struct vfy_pending *p = realloc(wl->items, cap * sizeof(*p));
		if (!p)
			return vfy_bug(env, "out of memory");
		wl->items = p;
		wl->cap = cap;
	}
	wl->items[wl->n++] = (struct vfy_pending){st, insn, env->trail_tail, parent, env->log_len};
	env->forks_since_stored++;
	if (parent)
		parent->branches++;
	return 0;
}

static void explored_free(struct vfy_explored *x)
{
	vfy_state_free(x->st);
	free(x);
}

/* Stored-state lookup at a prune point: 1 = pruned, 0 = go on, <0 = error. */
static int is_state_visited(struct vfy_env *env, uint32_t insn)
{
	struct vfy_explored **victim = NULL;
	uint64_t hash = 0;
	bool hashed = false;
	unsigned n = 0;
	struct vfy_explored **link = &env->explored[insn], *x;

	/* Complete states: does one cover the current state? */
	while ((x = *link)) {
		if (vfy_states_equal(env, x->st, env->cur, false)) {
			x->hits++;
			env->stats.pruned++;
			mark_precise_as(env, x->st);
			return 1;
		}
		/* A state that keeps failing to prune only costs time (as in Linux). */
		if (++x->misses > x->hits * 3 + 3) {
			list_remove(x);
			explored_free(x);
			env->live_states--;
			continue;
		}
		victim = link; /* the oldest one, at the end */
		link = &x->next;
		n++;
	}
	/* States still being explored (newest first): only an identical one, a
	 * loop that makes no progress, matters here; it would be among the
	 * newest.  Hashes are computed when first needed. */
	for (x = env->looping[insn]; x && n < VFY_STATES_PER_INSN; x = x->next, n++) {
		if (!hashed) {
			hash = vfy_state_hash(env, env->cur);
			hashed = true;
		}
		if (!x->hashed) {
			x->hash = vfy_state_hash(env, x->st);
			x->hashed = true;
		}
		if (x->hash == hash && vfy_states_equal(env, x->st, env->cur, true))
			return vfy_reject(env, EACCES,
					  "infinite loop: the program returns here in the same "
					  "state without making progress");
	}
	/* A loop's head keeps a state per time round (at most one per
	 * VFY_LOOP_GAP instructions) if the path forked since the last one:
	 * the other ways come back here in the same round and are pruned
	 * instead of running every round after it. */
	bool full = n >= VFY_STATES_PER_INSN;
	if (full && (env->insn_flags[insn] & INSN_LOOP) && env->forks_since_stored &&
	    env->stats.insns_processed - env->last_stored >= VFY_LOOP_GAP)
		full = false;
	if (full || env->live_states >= VFY_MAX_STATES) {
		if (!victim)
			return 0;
		x = *victim;
		list_remove(x);
		explored_free(x);
		env->live_states--;
	}
	x = calloc(1, sizeof(*x));
	if (!x || !(x->st = vfy_state_copy(env->cur))) {
		free(x);
		return vfy_bug(env, "out of memory");
	}
	mark_all_imprecise(x->st);
	x->parent = env->parent;
	x->branches = 1;
	x->trail_pos = env->trail_tail;
	x->hashed = hashed;
	x->hash = hash;
	x->insn = insn;
	list_insert(&env->looping[insn], x);
	env->parent = x;
	env->last_stored = env->stats.insns_processed;
	env->forks_since_stored = 0;
	env->stats.states++;
	if (++env->live_states > env->stats.peak_states)
		env->stats.peak_states = env->live_states;
	return 0;
}

/* r1 and r2 at the program's start, by program type. */
static void init_entry_regs(struct vfy_env *env, struct vfy_reg *regs)
{
	if (env->p->type == PROG_TYPE_RAW) {
		mark_reg_not_init(&regs[1]);
		regs[1].type = REG_PTR_MEM;
		regs[1].size = env->opts.mem_size;
		regs[1].b = vfy_bounds_const(0);
		mark_reg_const(&regs[2], env->opts.mem_size);
		return;
	}
	mark_reg_not_init(&regs[1]);
	regs[1].type = REG_PTR_CTX;
	regs[1].b = vfy_bounds_const(0);
}

static int check_reg_read(struct vfy_env *env, uint32_t regno)
{
	const struct vfy_reg *r = &vfy_cur_regs(env->cur)[regno];
	if (r->type == REG_NOT_INIT)
		return vfy_reject(env, EACCES, "%s !read_ok: the register is not initialized",
				  rn(regno));
	if (r->type == REG_RELEASED)
		return vfy_reject(env, EACCES,
				  "%s is a ring buffer record released at insn %u: use after release",
				  rn(regno), r->insn);
	return 0;
}

/* Largest variable offset a pointer may carry (keeps offsets far from overflow). */
enum { VFY_MAX_VAR_OFF = 1 << 29 };

static const char *alu_name(unsigned op)
{
	switch (op) {
#define X(name, val, mn) case val: return mn;
		ISA_ALU_OPS(X)
#undef X
	}
	return "?";
}

/* dst = dst op src where one of them is a pointer. */
static int check_ptr_alu(struct vfy_env *env, uint32_t dreg, struct vfy_reg *dst,
			 const struct vfy_reg *src, unsigned op, bool is64, uint32_t sreg)
{
	bool dptr = vfy_reg_is_ptr(dst), sptr = vfy_reg_is_ptr(src);
	const struct vfy_reg *ptr = dptr ? dst : src, *off = dptr ? src : dst;
	uint32_t preg = dptr ? dreg : sreg;

	if (!is64)
		return vfy_reject(env, EACCES, "%s 32-bit arithmetic on a pointer (%s) prohibited",
				  rn(preg), vfy_reg_type_name(ptr->type));
	if (dptr && sptr) {
		bool same = dst->type == src->type && dst->map == src->map &&
			    dst->frameno == src->frameno && dst->ref_id == src->ref_id;
		if (op != ISA_ALU_SUB || !same)
			return vfy_reject(env, EACCES, "%s pointer %s pointer prohibited%s", rn(dreg),
					  alu_name(op),
					  op == ISA_ALU_SUB ? " (they point into different regions)" : "");
		/* The distance of two known offsets into one region is known. */
		if (vfy_bounds_is_const(&dst->b) && vfy_bounds_is_const(&src->b))
			mark_reg_const(dst, (uint64_t)((int64_t)dst->off - src->off) +
						    dst->b.var.value - src->b.var.value);
		else
			mark_reg_unknown(dst);
		return 0;
	}
	if (op != ISA_ALU_ADD && !(op == ISA_ALU_SUB && dptr))
		return vfy_reject(env, EACCES, "%s pointer arithmetic with %s prohibited on %s",
				  rn(preg), dptr ? alu_name(op) : "a pointer as subtrahend",
				  vfy_reg_type_name(ptr->type));
	switch (ptr->type) {
	case REG_PTR_MAP_VALUE_OR_NULL:
	case REG_PTR_RINGBUF_REC_OR_NULL:
		return vfy_reject(env, EACCES,
				  "%s pointer arithmetic on %s prohibited: check it against NULL first",
				  rn(preg), vfy_reg_type_name(ptr->type));
	case REG_CONST_MAP:
		return vfy_reject(env, EACCES, "%s pointer arithmetic on a map pointer prohibited",
				  rn(preg));
	case REG_PTR_CTX:
		if (!vfy_bounds_is_const(&off->b) && vfy_ctx_of(env->p->type)->field_size)
			return vfy_reject(env, EACCES,
					  "%s variable offset into the ctx prohibited", rn(preg));
		break;
	default:
		break;
	}
	if (!vfy_bounds_is_const(&off->b) &&
	    (off->b.smin < -VFY_MAX_VAR_OFF || off->b.smax > VFY_MAX_VAR_OFF)) {
		char b[200];
		vfy_bounds_str(b, sizeof(b), &off->b);
		return vfy_reject(env, EACCES,
				  "%s math between %s pointer and a register with unbounded value "
				  "%s is not allowed: bound it with a check first",
				  rn(preg), vfy_reg_type_name(ptr->type), b);
	}
	struct vfy_reg res = *ptr;
	int64_t fixed = 0;
	struct vfy_bounds var = off->b;
	if (vfy_bounds_is_const(&off->b)) {
		fixed = (int64_t)off->b.var.value;
		if (op == ISA_ALU_SUB && fixed == INT64_MIN)
			fixed = INT64_MAX; /* out of range either way */
		var = vfy_bounds_const(0);
	}
	if (op == ISA_ALU_SUB) {
		fixed = -fixed;
		struct vfy_bounds zero = vfy_bounds_const(0);
		vfy_bounds_alu(&zero, &var, ISA_ALU_SUB, 0, true);
		var = zero;
	}
	int64_t noff;
	if (__builtin_add_overflow((int64_t)res.off, fixed, &noff))
		noff = INT64_MAX;
	if (noff < -VFY_MAX_VAR_OFF || noff > VFY_MAX_VAR_OFF)
		return vfy_reject(env, EACCES, "%s pointer offset %lld out of range", rn(preg),
				  (long long)noff);
	res.off = (int32_t)noff;
	vfy_bounds_alu(&res.b, &var, ISA_ALU_ADD, 0, true);
	if (res.b.smin < -VFY_MAX_VAR_OFF || res.b.smax > VFY_MAX_VAR_OFF)
		return vfy_reject(env, EACCES, "%s variable pointer offset out of range", rn(preg));
	*dst = res;
	return 0;
}

static int check_alu(struct vfy_env *env, const struct isa_insn *insn)
{
	struct vfy_reg *regs = vfy_cur_regs(env->cur);
	bool is64 = ISA_CLASS(insn->code) == ISA_ALU64;
	unsigned op = ISA_OP(insn->code);
	struct vfy_reg *dst = &regs[insn->dst];
	struct vfy_reg srcv;
	int err;

	if (ISA_SRC(insn->code) == ISA_X && op != ISA_ALU_END && op != ISA_ALU_NEG) {
		if ((err = check_reg_read(env, insn->src)))
			return err;
		srcv = regs[insn->src];
	} else {
		uint64_t imm = is64 ? (uint64_t)(int64_t)insn->imm : (uint32_t)insn->imm;
		mark_reg_const(&srcv, imm);
	}

	if (op == ISA_ALU_MOV) {
		struct vfy_reg *src = ISA_SRC(insn->code) == ISA_X ? &regs[insn->src] : NULL;
		/* A copy of a scalar (or of its low 32 bits) is linked to it. */
		uint8_t link = is64 && !insn->off ? LINK_COPY
			       : !is64 && !insn->off ? LINK_ZEXT32
			       : is64 && insn->off == 32 ? LINK_SEXT32 : UINT8_MAX;
		bool linked = src && src->type == REG_SCALAR && link != UINT8_MAX &&
			      (src->link == LINK_COPY || (src->link == link && link != LINK_COPY));
		if (linked && !src->id) {
			src->id = ++env->id_gen;
			src->link = LINK_COPY;
		}
		if (is64 && !insn->off) {
			*dst = *(src ? src : &srcv);
			return 0;
		}
		if (vfy_reg_is_ptr(&srcv)) {
			if (!env->opts.allow_ptr_leaks)
				return vfy_reject(env, EACCES,
						  "%s: %s of a pointer (%s) would leak its address",
						  rn(insn->src), insn->off ? "sign-extending move" : "32-bit move",
						  vfy_reg_type_name(srcv.type));
			mark_reg_unknown(&srcv);
		}
		struct vfy_bounds b = vfy_bounds_unknown();
		vfy_bounds_alu(&b, &srcv.b, ISA_ALU_MOV, insn->off, is64);
		mark_reg_scalar(dst, b);
		if (linked) {
			dst->id = src->id;
			dst->link = src->link == LINK_COPY ? link : src->link;
		}
		return 0;
	}
	if ((err = check_reg_read(env, insn->dst)))
		return err;
	if (op == ISA_ALU_END || op == ISA_ALU_NEG) {
		if (dst->type != REG_SCALAR)
			return vfy_reject(env, EACCES, "%s %s of a pointer (%s) prohibited",
					  rn(insn->dst), alu_name(op), vfy_reg_type_name(dst->type));
		if (op == ISA_ALU_NEG)
			vfy_bounds_alu(&dst->b, &dst->b, op, 0, is64);
		else
			vfy_bounds_end(&dst->b, (unsigned)insn->imm,
				       is64 || ISA_SRC(insn->code) == ISA_X);
		return 0;
	}
	if (vfy_reg_is_ptr(dst) || vfy_reg_is_ptr(&srcv)) {
		/* A scalar that moves a pointer must be what it was. */
		if (!vfy_reg_is_ptr(dst))
			mark_precise(env, (uint16_t)(1u << insn->dst));
		else if (ISA_SRC(insn->code) == ISA_X && !vfy_reg_is_ptr(&srcv))
			mark_precise(env, (uint16_t)(1u << insn->src));
		return check_ptr_alu(env, insn->dst, dst, &srcv, op, is64, insn->src);
	}
	vfy_bounds_alu(&dst->b, &srcv.b, op, insn->off, is64);
	/* x << 32 >> 32 (s>> 32): the zero- (sign-) extended low half of x. */
	bool by32 = is64 && ISA_SRC(insn->code) == ISA_K && insn->imm == 32;
	if (dst->id && by32 && op == ISA_ALU_LSH && dst->link == LINK_COPY) {
		dst->link = LINK_SHL32;
	} else if (dst->id && by32 && dst->link == LINK_SHL32 &&
		   (op == ISA_ALU_RSH || op == ISA_ALU_ARSH)) {
		dst->link = op == ISA_ALU_RSH ? LINK_ZEXT32 : LINK_SEXT32;
	} else {
		dst->id = 0;
		dst->link = LINK_COPY;
	}
	return 0;
}

struct null_mark {
	uint32_t id;
	bool is_null;
};

static void mark_null_fn(struct vfy_reg *r, void *arg)
{
	const struct null_mark *m = arg;
	if (r->id != m->id || (r->type != REG_PTR_MAP_VALUE_OR_NULL &&
			       r->type != REG_PTR_RINGBUF_REC_OR_NULL))
		return;
	if (m->is_null) {
		mark_reg_const(r, 0);
		return;
	}
	r->type = r->type == REG_PTR_MAP_VALUE_OR_NULL ? REG_PTR_MAP_VALUE : REG_PTR_RINGBUF_REC;
}

/* Every copy of a maybe-NULL pointer learns the outcome of one check. */
static int mark_ptr_or_null(struct vfy_env *env, struct vfy_state *st, uint32_t id,
			    uint32_t ref_id, bool is_null)
{
	struct null_mark m = {id, is_null};
	vfy_for_each_reg(st, mark_null_fn, &m);
	if (is_null && ref_id) {
		/* A NULL record needs no release. */
		for (uint32_t i = 0; i < st->nrefs; i++)
			if (st->refs[i].id == ref_id) {
				memmove(&st->refs[i], &st->refs[i + 1],
					(st->nrefs - i - 1) * sizeof(st->refs[0]));
				st->nrefs--;
				return 0;
			}
		return vfy_bug(env, "null check of unknown reference %u", ref_id);
	}
	return 0;
}

static bool is_or_null(const struct vfy_reg *r)
{
	return r->type == REG_PTR_MAP_VALUE_OR_NULL || r->type == REG_PTR_RINGBUF_REC_OR_NULL;
}

struct link_refine {
	const struct vfy_reg *r; /* the register a branch refined */
	bool changed;
};

/* What r's new bounds say about a register linked to it. */
static void refine_linked_fn(struct vfy_reg *x, void *arg)
{
	struct link_refine *lr = arg;
	const struct vfy_reg *r = lr->r;

	if (x == r || x->type != REG_SCALAR || x->id != r->id)
		return;
	struct vfy_bounds b = x->b;
	if (x->link == r->link) {
		b = r->b;
	} else if (x->link == LINK_COPY && r->link == LINK_ZEXT32) {
		b.u32min = b.u32min > r->b.umin ? b.u32min : (uint32_t)r->b.umin;
		b.u32max = b.u32max < r->b.umax ? b.u32max : (uint32_t)r->b.umax;
	} else if (x->link == LINK_COPY && r->link == LINK_SEXT32) {
		b.s32min = b.s32min > r->b.smin ? b.s32min : (int32_t)r->b.smin;
		b.s32max = b.s32max < r->b.smax ? b.s32max : (int32_t)r->b.smax;
	} else {
		return;
	}
	/* An empty result would be a contradiction: keep what was known. */
	if (vfy_bounds_sync(&b) && !vfy_bounds_equal(&b, &x->b)) {
		x->b = b;
		lr->changed = true;
	}
}

/* After a branch refined R[regno] in st: refine the registers linked to it. */
static bool refine_linked(struct vfy_state *st, uint32_t regno)
{
	struct link_refine lr = {&vfy_cur_regs(st)[regno], false};

	if (lr.r->type == REG_SCALAR && lr.r->id && lr.r->link != LINK_SHL32)
		vfy_for_each_reg(st, refine_linked_fn, &lr);
	return lr.changed;
}

/*
 * A conditional jump.  Sets *next to where the current path goes (or
 * UINT32_MAX if it cannot go on); may push the other direction.
 */
static int check_cond_jmp(struct vfy_env *env, struct vfy_worklist *wl,
			  const struct isa_insn *insn, uint32_t *next)
{
	struct vfy_reg *regs = vfy_cur_regs(env->cur);
	bool is32 = ISA_CLASS(insn->code) == ISA_JMP32;
	unsigned op = ISA_OP(insn->code);
	uint32_t target = (uint32_t)((int64_t)env->insn_idx + 1 + insn->off);
	uint32_t fall = env->insn_idx + 1;
	struct vfy_reg *dst = &regs[insn->dst], srcv, *src = NULL;
	enum vfy_rel rel_t, rel_f;
	int err;

	if ((err = check_reg_read(env, insn->dst)))
		return err;
	if (ISA_SRC(insn->code) == ISA_X) {
		if ((err = check_reg_read(env, insn->src)))
			return err;
		src = &regs[insn->src];
		srcv = *src;
	} else {
		mark_reg_const(&srcv, is32 ? (uint32_t)insn->imm : (uint64_t)(int64_t)insn->imm);
	}
	if (!vfy_rel_of_jump(op, true, &rel_t) || !vfy_rel_of_jump(op, false, &rel_f))
		return vfy_bug(env, "jump opcode %#x has no relation", insn->code);

	bool dptr = vfy_reg_is_ptr(dst), sptr = vfy_reg_is_ptr(&srcv);
	if (dptr || sptr) {
		const struct vfy_reg *p = dptr ? dst : &srcv, *o = dptr ? &srcv : dst;
		/* Whether the scalar is NULL decides what the comparison means. */
		if (!dptr)
			mark_precise(env, (uint16_t)(1u << insn->dst));
		else if (src && !sptr)
			mark_precise(env, (uint16_t)(1u << insn->src));
		bool eq_ne = op == ISA_JMP_JEQ || op == ISA_JMP_JNE;
		if (eq_ne && !is32 && !(dptr && sptr) && vfy_reg_is_null_const(o)) {
			/* "p == NULL" / "p != NULL" */
			bool null_if_taken = op == ISA_JMP_JEQ;
			if (!is_or_null(p)) {
				/* A checked pointer is never NULL: one direction only. */
				*next = null_if_taken ? fall : target;
				return 0;
			}
			struct vfy_state *other = vfy_state_copy(env->cur);
			if (!other)
				return vfy_bug(env, "out of memory");
			if ((err = mark_ptr_or_null(env, other, p->id, p->ref_id, null_if_taken)) ||
			    (err = mark_ptr_or_null(env, env->cur, p->id, p->ref_id, !null_if_taken)) ||
			    (err = push_branch(env, wl, other, target))) {
				vfy_state_free(other);
				return err;
			}
			*next = fall;
			return 0;
		}
		if (is_or_null(p))
			return vfy_reject(env, EACCES,
					  "%s is %s: it may only be compared with 0 before the check",
					  rn(dptr ? insn->dst : insn->src), vfy_reg_type_name(p->type));
		if (!(dptr && sptr) && !env->opts.allow_ptr_leaks)
			return vfy_reject(env, EACCES,
					  "%s: comparing a pointer (%s) with a scalar would leak its "
					  "address", rn(dptr ? insn->dst : insn->src),
					  vfy_reg_type_name(p->type));
		if (dptr && sptr && (dst->type != src->type || is32))
			return vfy_reject(env, EACCES, "comparison of pointers %s and %s into "
					  "different regions prohibited", rn(insn->dst), rn(insn->src));
		/* Both directions, nothing learned. */
		struct vfy_state *other = vfy_state_copy(env->cur);
		if (!other)
			return vfy_bug(env, "out of memory");
		if ((err = push_branch(env, wl, other, target))) {
			vfy_state_free(other);
			return err;
		}
		*next = fall;
		return 0;
	}

	/* Scalars: refine a copy for each direction; impossible ones are dropped. */
	struct vfy_reg td = *dst, ts = srcv, fd = *dst, fs = srcv;
	bool can_take = vfy_bounds_refine(&td.b, &ts.b, rel_t, is32);
	bool can_fall = vfy_bounds_refine(&fd.b, &fs.b, rel_f, is32);
	if (src == dst) {
		/* r op r: one register, both sides refined together. */
		can_take = can_take && vfy_bounds_equal(&td.b, &ts.b);
		can_fall = can_fall && vfy_bounds_equal(&fd.b, &fs.b);
	}
	uint16_t jmp_regs = (uint16_t)((1u << insn->dst) | (src ? 1u << insn->src : 0));
	bool linked = false;
	/* An outcome the bounds decide: the other way was never explored. */
	if (!(can_take && can_fall))
		mark_precise(env, jmp_regs);
	if (can_take && can_fall) {
		struct vfy_state *other = vfy_state_copy(env->cur);
		if (!other)
			return vfy_bug(env, "out of memory");
		struct vfy_reg *oregs = vfy_cur_regs(other);
		oregs[insn->dst].b = td.b;
		if (src && src != dst)
			oregs[insn->src].b = ts.b;
		linked |= refine_linked(other, insn->dst);
		if (src)
			linked |= refine_linked(other, insn->src);
		if ((err = push_branch(env, wl, other, target))) {
			vfy_state_free(other);
			return err;
		}
	}
	if (can_fall) {
		dst->b = fd.b;
		if (src && src != dst)
			src->b = fs.b;
		*next = fall;
	} else if (can_take) {
		dst->b = td.b;
		if (src && src != dst)
			src->b = ts.b;
		*next = target;
	} else {
		*next = UINT32_MAX;
	}
	if (*next != UINT32_MAX) {
		linked |= refine_linked(env->cur, insn->dst);
		if (src)
			linked |= refine_linked(env->cur, insn->src);
	}
	/* What the linked registers learned rests on the compared values. */
	if (linked)
		mark_precise(env, jmp_regs);
	return 0;
}

static int check_local_call(struct vfy_env *env, const struct isa_insn *insn, uint32_t *next)
{
	struct vfy_state *s = env->cur;
	uint32_t target = (uint32_t)((int64_t)env->insn_idx + 1 + insn->imm);

	if (s->curframe + 1 >= ISA_MAX_CALL_DEPTH)
		return vfy_reject(env, EACCES, "call depth exceeds %d frames", ISA_MAX_CALL_DEPTH);
	struct vfy_frame *f = vfy_frame_new(env->insn_idx, vfy_subprog_of(env, target),
					    s->curframe + 1);
	if (!f)
		return vfy_bug(env, "out of memory");
	struct vfy_reg *caller = vfy_cur_regs(s);
	for (int r = 1; r <= 5; r++)
		f->regs[r] = caller[r];
	s->frames[++s->curframe] = f;
	*next = target;
	return 0;
}

/* exit: return to the caller, or end the path.  *next = UINT32_MAX at the end. */
static int check_exit(struct vfy_env *env, uint32_t *next)
{
	struct vfy_state *s = env->cur;
	struct vfy_reg *r0 = &vfy_cur_regs(s)[0];
	int err;

	if ((err = check_reg_read(env, 0)))
		return err;
	if (s->curframe > 0) {
		if (r0->type == REG_PTR_STACK && r0->frameno == s->curframe)
			return vfy_reject(env, EACCES,
					  "R0 points to the stack of the returning function");
		struct vfy_frame *callee = s->frames[s->curframe];
		struct vfy_reg ret = *r0;
		uint32_t callsite = callee->callsite;
		free(callee);
		s->frames[s->curframe--] = NULL;
		struct vfy_reg *regs = vfy_cur_regs(s);
		regs[0] = ret;
		for (int r = 1; r <= 5; r++)
			mark_reg_not_init(&regs[r]);
		*next = callsite + 1;
		return 0;
	}
	if (r0->type != REG_SCALAR)
		return vfy_reject(env, EACCES,
				  "R0 is %s at exit: a program returns a scalar (this would leak "
				  "an address)", vfy_reg_type_name(r0->type));
	if (s->nrefs)
		return vfy_reject(env, EACCES,
				  "ring buffer record reserved at insn %u is not released on this "
				  "path: submit or discard it on every path", s->refs[0].insn);
	*next = UINT32_MAX;
	return 0;
}

static int check_ld_imm64(struct vfy_env *env, const struct isa_insn *insn)
{
	struct vfy_reg *dst = &vfy_cur_regs(env->cur)[insn->dst];
	const struct isa_insn *hi = insn + 1;

	switch (insn->src) {
	case ISA_PSEUDO_NONE:
		mark_reg_const(dst, (uint32_t)insn->imm | ((uint64_t)(uint32_t)hi->imm << 32));
		return 0;
	case ISA_PSEUDO_MAP_FD:
	case ISA_PSEUDO_MAP_VALUE: {
		uint32_t map = (uint32_t)insn->imm;
		const struct map_def *d = vfy_map_def(env, map);
		if (!d)
			return vfy_reject(env, EINVAL,
					  "map index %d out of range or map not created (the program "
					  "has %zu maps)", insn->imm, env->p->map_cnt);
		if (d->type == MAP_TYPE_GPU_BLOCK_ARRAY && env->profile != VFY_PROFILE_GPU)
			return vfy_reject(env, EACCES,
					  "map '%s' is a block-local array (GPU shared memory): only "
					  "device programs (gpu/...) can use it", d->name);
		mark_reg_not_init(dst);
		dst->map = map;
		dst->b = vfy_bounds_const(0);
		if (insn->src == ISA_PSEUDO_MAP_FD) {
			dst->type = REG_CONST_MAP;
			return 0;
		}
		if (d->type != MAP_TYPE_ARRAY || d->max_entries != 1 ||
		    (uint32_t)hi->imm >= d->value_size)
			return vfy_reject(env, EINVAL,
					  "direct value access to map '%s' at offset %u: needs a "
					  "one-element array map and an offset below its value size %u",
					  d->name, (uint32_t)hi->imm, d->value_size);
		dst->type = REG_PTR_MAP_VALUE;
		dst->off = hi->imm;
		return 0;
	}
	default:
		return vfy_reject(env, EINVAL, "lddw with unsupported source %u", insn->src);
	}
}

/* One instruction of the current path.  *next: following insn or UINT32_MAX. */
static int do_insn(struct vfy_env *env, struct vfy_worklist *wl, uint32_t *next)
{
	const struct isa_insn *insn = &env->p->insns[env->insn_idx];
	unsigned cls = ISA_CLASS(insn->code), op = ISA_OP(insn->code);

	*next = env->insn_idx + 1;
	switch (cls) {
	case ISA_ALU:
	case ISA_ALU64:
		return check_alu(env, insn);
	case ISA_LDX:
	case ISA_ST:
	case ISA_STX:
		return check_load_store(env, insn);
	case ISA_LD:
		*next = env->insn_idx + 2;
		return check_ld_imm64(env, insn);
	default:
		break;
	}
	/* JMP, JMP32 */
	switch (op) {
	case ISA_JMP_JA:
		*next = (uint32_t)((int64_t)env->insn_idx + 1 +
				   (cls == ISA_JMP32 ? insn->imm : insn->off));
		return 0;
	case ISA_JMP_EXIT:
		return check_exit(env, next);
	case ISA_JMP_CALL:
		if (insn->src == ISA_CALL_LOCAL)
			return check_local_call(env, insn, next);
		if (insn->src != ISA_CALL_HELPER)
			return vfy_reject(env, EINVAL, "kfunc calls are not supported");
		return check_helper_call(env, insn);
	default:
		return check_cond_jmp(env, wl, insn, next);
	}
}

static int do_check(struct vfy_env *env)
{
	struct vfy_worklist wl = {0};
	int err = 0;

	env->cur = vfy_state_new();
	if (!env->cur || !(env->cur->frames[0] = vfy_frame_new(UINT32_MAX, 0, 0)))
		return vfy_bug(env, "out of memory");
	init_entry_regs(env, env->cur->frames[0]->regs);
	env->insn_idx = 0;
	env->trail_tail = TRAIL_NONE;

	for (;;) {
		uint32_t idx = env->insn_idx, next;

		if (++env->stats.insns_processed > env->opts.insn_limit) {
			err = vfy_reject(env, E2BIG,
					 "program too complex: more than %u instructions processed "
					 "(a loop may not be bounded, or too many paths)",
					 env->opts.insn_limit);
			break;
		}
		env->insn_flags[idx] |= INSN_SEEN;
		if (env->insn_flags[idx] & INSN_PRUNE) {
			err = is_state_visited(env, idx);
			if (err < 0)
				break;
			if (err == 1) {
				err = 0;
				vfy_log(env, "%u: pruned: covered by an explored state\n", idx);
				next = UINT32_MAX;
				goto path_end;
			}
		}
		if (vfy_log_on(env)) {
			vfy_log_insn(env, idx);
		}
		if ((err = vfy_trail_push(env)) || (err = do_insn(env, &wl, &next)))
			break;
		if (env->opts.log_level == VFY_LOG_ALL ||
		    (env->opts.log_level == VFY_LOG_PATH && next != idx + 1))
			vfy_log_state(env, env->cur);
		if (next != UINT32_MAX) {
			env->insn_idx = next;
			continue;
		}
path_end:
		release_path(env, env->parent);
		if (!wl.n)
			break;
		struct vfy_pending pd = wl.items[--wl.n];
		vfy_state_free(env->cur);
		env->cur = pd.st;
		env->insn_idx = pd.insn;
		env->trail_tail = pd.trail_tail;
		env->parent = pd.parent;
		if (env->opts.log_level == VFY_LOG_PATH)
			vfy_log_truncate(env, pd.log_len);
		vfy_log(env, "from branch: %u\n", pd.insn);
	}
	while (wl.n)
		vfy_state_free(wl.items[--wl.n].st);
	free(wl.items);
	return err;
}

static const struct helper_proto *default_proto(uint32_t id)
{
	return helper_proto_find(id);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void env_free(struct vfy_env *env)
{
	for (size_t i = 0; env->explored && i < env->p->insn_cnt; i++) {
		for (struct vfy_explored *x = env->explored[i], *n; x; x = n) {
			n = x->next;
			explored_free(x);
		}
		for (struct vfy_explored *x = env->looping[i], *n; x; x = n) {
			n = x->next;
			explored_free(x);
		}
	}
	free(env->explored);
	vfy_state_free(env->cur);
	free(env->trail);
	vfy_cfg_free(env);
}

int verifier_check(struct prog *p, const struct vfy_opts *opts, struct vfy_stats *stats,
		   struct err *e)
{
	struct vfy_env env = {.p = p, .e = e};
	struct isa_error ie;
	uint64_t t0 = now_ns();
	int err;

	if (opts)
		env.opts = *opts;
	env.profile = env.opts.profile;
	if (env.profile == VFY_PROFILE_AUTO)
		env.profile = prog_type_is_gpu(p->type) ? VFY_PROFILE_GPU : VFY_PROFILE_HOST;
	bool gpu = env.profile == VFY_PROFILE_GPU;
	if (!env.opts.insn_limit)
		env.opts.insn_limit = gpu ? VFY_GPU_INSN_LIMIT : VFY_HOST_INSN_LIMIT;
	if (!env.opts.stack_limit)
		env.opts.stack_limit = gpu ? VFY_GPU_STACK_LIMIT : VFY_HOST_STACK_LIMIT;
	env.proto = env.opts.helper_proto ? env.opts.helper_proto
		    : gpu		   ? helper_proto_find_gpu
					   : default_proto;
	if (env.opts.log_buf && env.opts.log_size)
		env.opts.log_buf[0] = '\0';
	p->verified = 0;

	if (!p->insn_cnt) {
		err = err_set(e, EINVAL, "program '%s' has no instructions", p->name ? p->name : "");
		goto out;
	}
	if ((err = isa_decode(p->insns, p->insn_cnt, 0, &ie))) {
		err = vfy_reject_at(&env, (uint32_t)ie.index, EINVAL, "%s", ie.msg);
		goto out;
	}
	env.explored = calloc(2 * p->insn_cnt, sizeof(*env.explored));
	env.looping = env.explored ? env.explored + p->insn_cnt : NULL;
	if (!env.explored) {
		err = vfy_bug(&env, "out of memory");
		goto out;
	}
	if ((err = vfy_cfg_check(&env)) || (err = vfy_live_compute(&env)) || (err = do_check(&env)) ||
	    (err = vfy_check_stack_depth(&env)))
		goto out;
	p->verified = 1;
	p->stack_depth = env.stats.stack_depth;
out:
	env.stats.time_ns = now_ns() - t0;
	if (stats)
		*stats = env.stats;
	if (env.opts.log_buf && env.opts.log_size && env.log_len >= env.opts.log_size)
		env.opts.log_buf[env.opts.log_size - 1] = '\0';
	env_free(&env);
	return err;
}
