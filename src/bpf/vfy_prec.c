/* SPDX-License-Identifier: MIT */
/*
 * vfy_prec.c - precision: which scalars' exact bounds a path relied on.
 *
 * Most scalars never matter for safety: a loop's accumulator, a hash, a
 * value that is only stored or returned.  Pruning that compares them keeps
 * paths apart that differ only there, and a loop whose body computes such
 * values never converges.  So a scalar matches any scalar unless it is
 * marked precise in the stored state, and it gets marked when an
 * instruction below that state relies on its bounds:
 *
 *   - a scalar added to (or subtracted from) a pointer,
 *   - a conditional jump whose outcome the bounds decide (the other way
 *     was never explored), a scalar compared with a pointer (NULL checks),
 *   - a helper argument the verifier checks by value (sizes, NULL buffers).
 *
 * Marking walks the path's trail backwards from that instruction, keeping
 * the set of registers and stack slots the value came from (r1 = r2 + r3
 * needs r2 and r3; a fill needs the slot, the spill before it the stored
 * register), and marks that set in each stored state the walk passes, up
 * to where the set is empty (values from constants, loads or helpers).  A
 * state marked earlier stops the walk for what it already has: its
 * ancestors were marked then.  A path pruned by an explored state relies
 * on everything that state's paths relied on, so the old state's precise
 * scalars are marked along the pruned path too.
 *
 * Only stored states carry marks; they are final when the state's
 * exploration has finished (branches == 0), the only time it may prune.
 * Where the walk cannot follow a value (a fill from a variable stack
 * offset), every scalar of every state on the path becomes precise.
 */
#include <stdlib.h>
#include <string.h>

#include "vfy.h"

int vfy_trail_push(struct vfy_env *env)
{
	if (env->trail_len == env->trail_cap) {
		uint32_t cap = env->trail_cap ? env->trail_cap * 2 : 4096;
		struct vfy_trail *t = realloc(env->trail, (size_t)cap * sizeof(*t));
		if (!t)
			return vfy_bug(env, "out of memory");
		env->trail = t;
		env->trail_cap = cap;
	}
	env->trail[env->trail_len] = (struct vfy_trail){
		.insn = env->insn_idx,
		.prev = env->trail_tail,
		.frame = (uint8_t)env->cur->curframe,
	};
	env->trail_tail = env->trail_len++;
	return 0;
}

void vfy_trail_note_stack(struct vfy_env *env, uint32_t frameno, int64_t lo, int64_t hi)
{
	if (env->trail_tail == TRAIL_NONE)
		return;
	uint16_t v = TRAIL_STACK_VAR;
	if (lo == hi)
		v = (uint16_t)(1 + frameno * VFY_SLOTS + (uint32_t)(lo + ISA_STACK_SIZE) / 8);
	env->trail[env->trail_tail].stack = v;
}

/* What a value still depends on, per frame. */
struct prec_set {
	uint16_t regs[ISA_MAX_CALL_DEPTH];
	uint64_t slots[ISA_MAX_CALL_DEPTH];
};

#define R(n) (1u << (n))
enum { ARG_REGS = R(1) | R(2) | R(3) | R(4) | R(5) };

static bool set_empty(const struct prec_set *s)
{
	for (int f = 0; f < ISA_MAX_CALL_DEPTH; f++)
		if ((s->regs[f] & ~R(ISA_REG_FP)) || s->slots[f])
			return false;
	return true;
}

enum { MEMO_SLOT0 = VFY_SLOTS - 16 }; /* the slots a trail entry remembers */

/* Can the trail remember this set: one frame's registers and top slots? */
static bool memo_fits(const struct prec_set *s, uint32_t frame)
{
	for (uint32_t f = 0; f < ISA_MAX_CALL_DEPTH; f++)
		if (f != frame && (s->regs[f] || s->slots[f]))
			return false;
	return !(s->slots[frame] & ((1ull << MEMO_SLOT0) - 1));
}

/* The stack slot of a trail entry: frame and slot index, false if none. */
static bool entry_slot(const struct vfy_trail *t, uint32_t *frame, uint32_t *slot)
{
	if (!t->stack || t->stack == TRAIL_STACK_VAR)
		return false;
	*frame = (uint32_t)(t->stack - 1) / VFY_SLOTS;
	*slot = (uint32_t)(t->stack - 1) % VFY_SLOTS;
	return true;
}

/*
 * Undo one instruction: the set after it becomes the set before it.
 * Returns false where the value cannot be followed (give up: all precise).
 */
static bool backtrack_insn(const struct vfy_env *env, const struct vfy_trail *t,
			   struct prec_set *s)
{
	const struct isa_insn *in = &env->p->insns[t->insn];
	unsigned cls = ISA_CLASS(in->code), op = ISA_OP(in->code), f = t->frame;
	uint16_t *regs = &s->regs[f];
	uint16_t src = ISA_SRC(in->code) == ISA_X ? (uint16_t)R(in->src) : 0;
	uint32_t sf, slot;
	bool has_slot = entry_slot(t, &sf, &slot);
	bool slot_needed = has_slot && (s->slots[sf] >> slot & 1);

	switch (cls) {
	case ISA_ALU:
	case ISA_ALU64:
		if (!(*regs & R(in->dst)))
			return true;
		if (op == ISA_ALU_MOV)
			*regs = (uint16_t)((*regs & ~R(in->dst)) | src);
		else if (op != ISA_ALU_END && op != ISA_ALU_NEG)
			*regs |= src;
		return true;
	case ISA_LD:
		*regs &= (uint16_t)~R(in->dst);
		return true;
	case ISA_LDX:
		if (!(*regs & R(in->dst)))
			return true;
		*regs &= (uint16_t)~R(in->dst);
		if (t->stack == TRAIL_STACK_VAR)
			return false;
		if (has_slot)
			s->slots[sf] |= 1ull << slot;
		return true;
	case ISA_ST:
		/* A whole-slot store of a constant ends the slot's history. */
		if (slot_needed && isa_size_bytes(in->code) == 8)
			s->slots[sf] &= ~(1ull << slot);
		return true;
	case ISA_STX:
		if (ISA_MODE(in->code) == ISA_ATOMIC) {
			uint16_t r0 = in->imm == ISA_ATOMIC_CMPXCHG ? (uint16_t)R(0) : 0;
			if (slot_needed || (*regs & (src | r0)))
				*regs |= (uint16_t)(src | r0);
			return true;
		}
		if (!slot_needed)
			return true;
		/* A narrower store leaves older bytes in the slot: keep it too. */
		if (isa_size_bytes(in->code) == 8)
			s->slots[sf] &= ~(1ull << slot);
		*regs |= src;
		return true;
	default:
		break;
	}
	switch (op) {
	case ISA_JMP_JA:
		return true;
	case ISA_JMP_EXIT:
		/* Back into the callee from the instruction after its call. */
		if (f > 0) {
			if (s->regs[f - 1] & R(0))
				*regs |= R(0);
			s->regs[f - 1] &= (uint16_t)~(R(0) | ARG_REGS);
		}
		return true;
	case ISA_JMP_CALL:
		if (in->src == ISA_CALL_LOCAL) {
			/* Back from the callee's first instruction: its arguments are ours. */
			if (f + 1 < ISA_MAX_CALL_DEPTH) {
				uint16_t callee = s->regs[f + 1] & (uint16_t)~R(ISA_REG_FP);
				if ((callee & ~ARG_REGS) || s->slots[f + 1])
					return false;
				*regs |= callee;
				s->regs[f + 1] = 0;
			}
			return true;
		}
		*regs &= (uint16_t)~(R(0) | ARG_REGS);
		return true;
	default: /* conditional jumps: a register compared with another refines both */
		if (src && (*regs & (src | R(in->dst))))
			*regs |= (uint16_t)(src | R(in->dst));
		return true;
	}
}

/* Mark the set in a stored state; drop what is marked already or no scalar. */
static void mark_in_state(struct vfy_state *st, struct prec_set *s)
{
	for (uint32_t f = 0; f < ISA_MAX_CALL_DEPTH; f++) {
		if (f > st->curframe) {
			s->regs[f] = 0;
			s->slots[f] = 0;
			continue;
		}
		struct vfy_frame *fr = st->frames[f];
		for (int i = 0; i < ISA_REG_FP; i++) {
			if (!(s->regs[f] & R(i)))
				continue;
			struct vfy_reg *r = &fr->regs[i];
			if (r->type != REG_SCALAR || r->precise)
				s->regs[f] &= (uint16_t)~R(i);
			else
				r->precise = 1;
		}
		s->regs[f] &= (uint16_t)~R(ISA_REG_FP);
		for (int i = 0; i < VFY_SLOTS; i++) {
			if (!(s->slots[f] >> i & 1))
				continue;
			struct vfy_reg *r = &fr->spill[i];
			if (fr->stype[i * 8] != SLOT_SPILL || r->type != REG_SCALAR || r->precise)
				s->slots[f] &= ~(1ull << i);
			else
				r->precise = 1;
		}
	}
}

static void mark_precise_fn(struct vfy_reg *r, void *arg)
{
	(void)arg;
	if (r->type == REG_SCALAR)
		r->precise = 1;
}

/* The fallback: every scalar of every state on the path. */
static void mark_path_precise(struct vfy_env *env)
{
	for (struct vfy_explored *x = env->parent; x; x = x->parent)
		vfy_for_each_reg(x->st, mark_precise_fn, NULL);
}

/* Walk back from trail entry `from` (the newest instruction still to undo). */
static void backtrack(struct vfy_env *env, struct prec_set *s, uint32_t from)
{
	struct vfy_explored *st = env->parent;
	uint32_t e = from;

	for (;;) {
		while (st && e == st->trail_pos) {
			mark_in_state(st->st, s);
			if (set_empty(s))
				return;
			st = st->parent;
		}
		if (e == TRAIL_NONE || !st)
			return; /* the program's start, or no stored state left to mark */
		/* A walk from here with these values was done before: the states
		 * above are marked.  (Only for the common sets, see memo_fits.) */
		struct vfy_trail *t = &env->trail[e];
		if (memo_fits(s, t->frame)) {
			uint16_t r = s->regs[t->frame];
			uint16_t sl = (uint16_t)(s->slots[t->frame] >> MEMO_SLOT0);
			if (!(r & ~t->done) && !(sl & ~t->done_slots))
				return;
			t->done |= r;
			t->done_slots |= sl;
		}
		if (!backtrack_insn(env, t, s)) {
			mark_path_precise(env);
			return;
		}
		if (set_empty(s))
			return;
		e = t->prev;
	}
}

void mark_precise(struct vfy_env *env, uint16_t regs)
{
	struct prec_set s;
	const struct vfy_reg *cur = vfy_cur_regs(env->cur);

	memset(&s, 0, sizeof(s));
	for (int i = 0; i < ISA_REG_FP; i++)
		if ((regs & R(i)) && cur[i].type == REG_SCALAR)
			s.regs[env->cur->curframe] |= (uint16_t)R(i);
	if (set_empty(&s) || env->trail_tail == TRAIL_NONE)
		return;
	/* The current instruction's own entry is where the need starts. */
	backtrack(env, &s, env->trail[env->trail_tail].prev);
}

void mark_precise_as(struct vfy_env *env, const struct vfy_state *old)
{
	struct prec_set s;

	memset(&s, 0, sizeof(s));
	for (uint32_t f = 0; f <= old->curframe; f++) {
		const struct vfy_frame *fr = old->frames[f];
		for (int i = 0; i < ISA_REG_FP; i++)
			if (fr->regs[i].type == REG_SCALAR && fr->regs[i].precise)
				s.regs[f] |= (uint16_t)R(i);
		for (int i = 0; i < VFY_SLOTS; i++)
			if (fr->stype[i * 8] == SLOT_SPILL && fr->spill[i].type == REG_SCALAR &&
			    fr->spill[i].precise)
				s.slots[f] |= 1ull << i;
	}
	if (!set_empty(&s))
		/* The path stopped before running this instruction: undo from its tail. */
		backtrack(env, &s, env->trail_tail);
}

static void mark_imprecise_fn(struct vfy_reg *r, void *arg)
{
	(void)arg;
	r->precise = 0;
}

void mark_all_imprecise(struct vfy_state *s)
{
	vfy_for_each_reg(s, mark_imprecise_fn, NULL);
}
