/* SPDX-License-Identifier: MIT */
/*
 * vfy_cfg.c - control flow before any state is tracked: functions
 * (bpf-to-bpf call targets), jumps that stay inside their function, no
 * fall-through past a function's end, no unreachable instruction, no
 * recursion, call chains within ISA_MAX_CALL_DEPTH; and, after exploration,
 * the stack used by the deepest call chain.
 *
 * isa_decode() has already checked that every jump and call target lies in
 * the program and not inside an lddw.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vfy.h"

static bool is_lddw(const struct isa_insn *i) { return i->code == ISA_OPC_LD_IMM64; }

static bool is_local_call(const struct isa_insn *i)
{
	return i->code == ISA_OPC_JMP_CALL && i->src == ISA_CALL_LOCAL;
}

static bool is_jump(const struct isa_insn *i)
{
	unsigned cls = ISA_CLASS(i->code), op = ISA_OP(i->code);
	return (cls == ISA_JMP || cls == ISA_JMP32) && op != ISA_JMP_CALL && op != ISA_JMP_EXIT;
}

static bool is_uncond_jump(const struct isa_insn *i)
{
	return is_jump(i) && ISA_OP(i->code) == ISA_JMP_JA;
}

static uint32_t jump_target(const struct isa_insn *i, uint32_t idx)
{
	/* JMP32|JA (gotol) carries its offset in imm. */
	int64_t off = ISA_CLASS(i->code) == ISA_JMP32 && ISA_OP(i->code) == ISA_JMP_JA ? i->imm : i->off;
	return (uint32_t)((int64_t)idx + 1 + off);
}

uint32_t vfy_subprog_of(const struct vfy_env *env, uint32_t insn)
{
	return env->insn_subprog[insn];
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static int find_subprogs(struct vfy_env *env)
{
	const struct isa_insn *in = env->p->insns;
	uint32_t cnt = (uint32_t)env->p->insn_cnt, n = 1;
	uint32_t *starts = malloc(sizeof(*starts) * (cnt + 1));

	if (!starts)
		return vfy_bug(env, "out of memory");
	starts[0] = 0;
	for (uint32_t i = 0; i < cnt; i++)
		if (is_local_call(&in[i]))
			starts[n++] = (uint32_t)((int64_t)i + 1 + in[i].imm);
	qsort(starts, n, sizeof(*starts), cmp_u32);
	uint32_t u = 0;
	for (uint32_t i = 0; i < n; i++)
		if (!u || starts[u - 1] != starts[i])
			starts[u++] = starts[i];
	env->subprogs = calloc(u, sizeof(*env->subprogs));
	if (!env->subprogs) {
		free(starts);
		return vfy_bug(env, "out of memory");
	}
	env->nsubprogs = u;
	for (uint32_t s = 0; s < u; s++) {
		env->subprogs[s].start = starts[s];
		env->subprogs[s].end = s + 1 < u ? starts[s + 1] : cnt;
		for (uint32_t i = env->subprogs[s].start; i < env->subprogs[s].end; i++)
			env->insn_subprog[i] = s;
	}
	free(starts);
	return 0;
}

static int add_callee(struct vfy_env *env, struct vfy_subprog *sp, uint32_t callee)
{
	uint32_t *c = realloc(sp->callees, sizeof(*c) * (sp->ncallees + 1));
	if (!c)
		return vfy_bug(env, "out of memory");
	sp->callees = c;
	sp->callees[sp->ncallees++] = callee;
	return 0;
}

/* Jumps stay in their function, functions end in exit or ja, calls recorded. */
static int check_jumps(struct vfy_env *env)
{
	const struct isa_insn *in = env->p->insns;
	int err;

	for (uint32_t s = 0; s < env->nsubprogs; s++) {
		struct vfy_subprog *sp = &env->subprogs[s];
		uint32_t last = sp->start;
		for (uint32_t i = sp->start; i < sp->end; i += is_lddw(&in[i]) ? 2 : 1) {
			last = i;
			if (is_lddw(&in[i]) && i + 1 < sp->end)
				env->insn_flags[i + 1] |= INSN_LDDW_HI;
			if (is_local_call(&in[i])) {
				uint32_t t = (uint32_t)((int64_t)i + 1 + in[i].imm);
				if ((err = add_callee(env, sp, env->insn_subprog[t])))
					return err;
				env->insn_flags[t] |= INSN_PRUNE;
				continue;
			}
			if (!is_jump(&in[i]))
				continue;
			uint32_t t = jump_target(&in[i], i);
			if (t < sp->start || t >= sp->end)
				return vfy_reject_at(env, i, EINVAL,
						     "jump to insn %u leaves the function at insns %u..%u",
						     t, sp->start, sp->end - 1);
			env->insn_flags[t] |= INSN_PRUNE | (t <= i ? INSN_LOOP : 0);
			if (!is_uncond_jump(&in[i]) && i + 1 < sp->end)
				env->insn_flags[i + 1] |= INSN_PRUNE;
		}
		if (in[last].code != ISA_OPC_JMP_EXIT && !is_uncond_jump(&in[last]))
			return vfy_reject_at(env, last, EINVAL,
					     "execution falls through past the end of the %s "
					     "(the last instruction must be exit or ja)",
					     s + 1 < env->nsubprogs ? "function" : "program");
	}
	return 0;
}

/* Every instruction must be reachable from insn 0 (calls included). */
static int check_reachable(struct vfy_env *env)
{
	const struct isa_insn *in = env->p->insns;
	uint32_t cnt = (uint32_t)env->p->insn_cnt, top = 0;
	uint32_t *stack = malloc(sizeof(*stack) * (cnt + 1));
	uint8_t *seen = calloc(cnt, 1);
	int err = 0;

	if (!stack || !seen) {
		err = vfy_bug(env, "out of memory");
		goto out;
	}
#define VISIT(t)                                                               \
	do {                                                                   \
		if ((t) < cnt && !seen[t]) {                                   \
			seen[t] = 1;                                           \
			stack[top++] = (t);                                    \
		}                                                              \
	} while (0)
	VISIT(0u);
	while (top) {
		uint32_t i = stack[--top];
		const struct isa_insn *x = &in[i];
		if (x->code == ISA_OPC_JMP_EXIT)
			continue;
		if (is_local_call(x))
			VISIT((uint32_t)((int64_t)i + 1 + x->imm));
		if (is_jump(x)) {
			VISIT(jump_target(x, i));
			if (is_uncond_jump(x))
				continue;
		}
		VISIT(i + (is_lddw(x) ? 2u : 1u));
	}
#undef VISIT
	for (uint32_t i = 0; i < cnt; i += is_lddw(&in[i]) ? 2 : 1)
		if (!seen[i]) {
			err = vfy_reject_at(env, i, EINVAL, "unreachable instruction");
			goto out;
		}
out:
	free(stack);
	free(seen);
	return err;
}

/* Depth-first over the call graph: no cycle, no chain deeper than allowed. */
static int check_call_chain(struct vfy_env *env, uint32_t s, uint32_t depth, uint8_t *on_path)
{
	struct vfy_subprog *sp = &env->subprogs[s];
	int err;

	if (depth > ISA_MAX_CALL_DEPTH)
		return vfy_reject_at(env, sp->start, EINVAL,
				     "call chain is deeper than %d frames", ISA_MAX_CALL_DEPTH);
	on_path[s] = 1;
	for (uint32_t c = 0; c < sp->ncallees; c++) {
		uint32_t t = sp->callees[c];
		if (on_path[t])
			return vfy_reject_at(env, env->subprogs[t].start, EINVAL,
					     "recursive call: the function at insn %u calls itself "
					     "(from the function at insn %u)",
					     env->subprogs[t].start, sp->start);
		if ((err = check_call_chain(env, t, depth + 1, on_path)))
			return err;
	}
	on_path[s] = 0;
	return 0;
}

int vfy_cfg_check(struct vfy_env *env)
{
	uint32_t cnt = (uint32_t)env->p->insn_cnt;
	int err;

	env->insn_flags = calloc(cnt, 1);
	env->insn_subprog = calloc(cnt, sizeof(*env->insn_subprog));
	if (!env->insn_flags || !env->insn_subprog)
		return vfy_bug(env, "out of memory");
	if ((err = find_subprogs(env)) || (err = check_jumps(env)) ||
	    (err = check_reachable(env)))
		return err;
	uint8_t *on_path = calloc(env->nsubprogs, 1);
	if (!on_path)
		return vfy_bug(env, "out of memory");
	err = check_call_chain(env, 0, 1, on_path);
	free(on_path);
	return err;
}

static uint32_t deepest_chain(struct vfy_env *env, uint32_t s, uint32_t *worst_leaf)
{
	struct vfy_subprog *sp = &env->subprogs[s];
	uint32_t best = 0, leaf = s;
	for (uint32_t c = 0; c < sp->ncallees; c++) {
		uint32_t l, d = deepest_chain(env, sp->callees[c], &l);
		if (d > best) {
			best = d;
			leaf = l;
		}
	}
	*worst_leaf = leaf;
	return sp->stack_depth + best;
}

int vfy_check_stack_depth(struct vfy_env *env)
{
	uint32_t leaf, depth = deepest_chain(env, 0, &leaf);

	env->stats.stack_depth = depth;
	if (depth > env->opts.stack_limit)
		return vfy_reject_at(env, env->subprogs[leaf].start, EACCES,
				     "the call chain ending in the function at insn %u uses %u "
				     "bytes of stack, more than the %s limit of %u",
				     env->subprogs[leaf].start, depth,
				     env->profile == VFY_PROFILE_GPU ? "GPU" : "host",
				     env->opts.stack_limit);
	return 0;
}

void vfy_cfg_free(struct vfy_env *env)
{
	for (uint32_t s = 0; s < env->nsubprogs; s++)
		free(env->subprogs[s].callees);
	free(env->subprogs);
	free(env->insn_flags);
	free(env->insn_subprog);
	free(env->live);
	free(env->precise);
}
