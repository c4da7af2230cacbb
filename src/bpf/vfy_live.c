/* SPDX-License-Identifier: MIT */
/*
 * vfy_live.c - which registers matter where, computed once, backwards over
 * the control flow of each function, so that pruning can ignore the rest.
 *
 *   live    the register is read on some path from here before it is
 *           written: its type matters (a later instruction checks it).
 *   precise its value matters: it flows into an address, a pointer offset,
 *           a stored value, a branch condition, a memory or size argument of
 *           a helper, or a function's return value.
 *
 * A scalar that is live but not precise (a counter that is only returned,
 * a flags argument) may differ between an explored state and the current
 * one without making the current one less safe: without this, every
 * if/else that sets a different constant doubles the paths.  Stack slots
 * are all treated as precise.  A local call counts r1-r5 as precise uses.
 */
#include <stdlib.h>

#include "vfy.h"

#define R(n) (1u << (n))
enum { ARG_REGS = R(1) | R(2) | R(3) | R(4) | R(5), CALL_DEFS = R(0) | ARG_REGS };

/* use/def sets of one instruction; precise uses may depend on precise_out. */
static void insn_sets(const struct vfy_env *env, uint32_t idx, uint16_t precise_out,
		      uint16_t *use, uint16_t *use_precise, uint16_t *def)
{
	const struct isa_insn *in = &env->p->insns[idx];
	unsigned cls = ISA_CLASS(in->code), op = ISA_OP(in->code);
	uint16_t src = ISA_SRC(in->code) == ISA_X ? R(in->src) : 0;

	*use = *use_precise = *def = 0;
	switch (cls) {
	case ISA_ALU:
	case ISA_ALU64:
		*def = R(in->dst);
		if (op == ISA_ALU_MOV) {
			*use = src;
		} else if (op == ISA_ALU_END || op == ISA_ALU_NEG) {
			*use = R(in->dst);
		} else {
			*use = R(in->dst) | src;
		}
		if (precise_out & R(in->dst))
			*use_precise = *use;
		return;
	case ISA_LD:
		*def = R(in->dst);
		return;
	case ISA_LDX:
		*def = R(in->dst);
		*use = *use_precise = R(in->src);
		return;
	case ISA_ST:
		*use = *use_precise = R(in->dst);
		return;
	case ISA_STX:
		*use = *use_precise = R(in->dst) | R(in->src);
		if (ISA_MODE(in->code) == ISA_ATOMIC && in->imm == ISA_ATOMIC_CMPXCHG) {
			*use |= R(0);
			*use_precise |= R(0);
		}
		return;
	default:
		break;
	}
	switch (op) {
	case ISA_JMP_JA:
		return;
	case ISA_JMP_EXIT:
		*use = R(0);
		if (vfy_subprog_of(env, idx) != 0)
			*use_precise = R(0);
		return;
	case ISA_JMP_CALL: {
		*def = CALL_DEFS;
		const struct helper_proto *h =
			in->src == ISA_CALL_HELPER && in->imm >= 0 ? env->proto((uint32_t)in->imm) : NULL;
		if (!h) {
			*use = *use_precise = ARG_REGS;
			return;
		}
		for (int a = 0; a < ISA_MAX_HELPER_ARGS && h->args[a] != ARG_NONE; a++) {
			*use |= R(a + 1);
			if (h->args[a] != ARG_SCALAR && h->args[a] != ARG_ANYTHING)
				*use_precise |= R(a + 1);
		}
		return;
	}
	default: /* conditional jumps */
		*use = *use_precise = R(in->dst) | src;
		return;
	}
}

/* Successors inside the function (calls continue at the next instruction). */
static unsigned successors(const struct vfy_env *env, uint32_t idx, uint32_t succ[2])
{
	const struct isa_insn *in = &env->p->insns[idx];
	unsigned cls = ISA_CLASS(in->code), op = ISA_OP(in->code), n = 0;

	if (cls == ISA_LD) {
		succ[n++] = idx + 2;
		return n;
	}
	if (cls != ISA_JMP && cls != ISA_JMP32) {
		succ[n++] = idx + 1;
		return n;
	}
	if (op == ISA_JMP_EXIT)
		return 0;
	if (op == ISA_JMP_CALL) {
		succ[n++] = idx + 1;
		return n;
	}
	int64_t off = cls == ISA_JMP32 && op == ISA_JMP_JA ? in->imm : in->off;
	succ[n++] = (uint32_t)((int64_t)idx + 1 + off);
	if (op != ISA_JMP_JA)
		succ[n++] = idx + 1;
	return n;
}

int vfy_live_compute(struct vfy_env *env)
{
	uint32_t cnt = (uint32_t)env->p->insn_cnt;
	bool changed = true;

	env->live = calloc(cnt, sizeof(*env->live));
	env->precise = calloc(cnt, sizeof(*env->precise));
	if (!env->live || !env->precise)
		return vfy_bug(env, "out of memory");
	/* Backwards until nothing changes; loops take a few rounds. */
	while (changed) {
		changed = false;
		for (uint32_t i = cnt; i-- > 0;) {
			uint32_t succ[2];
			uint16_t live_out = 0, precise_out = 0, use, use_p, def;
			if (env->insn_flags[i] & INSN_LDDW_HI)
				continue;
			unsigned n = successors(env, i, succ);
			for (unsigned s = 0; s < n; s++)
				if (succ[s] < cnt) {
					live_out |= env->live[succ[s]];
					precise_out |= env->precise[succ[s]];
				}
			insn_sets(env, i, precise_out, &use, &use_p, &def);
			uint16_t live_in = (uint16_t)((live_out & ~def) | use);
			uint16_t precise_in = (uint16_t)((precise_out & ~def) | use_p);
			if (live_in != env->live[i] || precise_in != env->precise[i]) {
				env->live[i] = live_in;
				env->precise[i] = precise_in;
				changed = true;
			}
		}
	}
	return 0;
}
