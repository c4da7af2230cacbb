/* SPDX-License-Identifier: MIT */
/*
 * sched_policy.c - scheduling policy objects: bind struct gpu_sched_ops
 * members to ops, verify with the scheduling profile, compile, call.
 *
 * The JIT is the backend; a program it refuses runs in the interpreter.  A
 * program that fails at run time (it cannot after verification, but a
 * tenant's launches are not bet on that) gives the default: admit, no
 * settings.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/jit.h"
#include "policy_prog.h"
#include "sched_impl.h"

struct sched_policy {
	struct object *owned; /* sched_policy_open's object, else NULL */
	struct prog *ops[SCHED_OP_CNT];
	enum prog_backend backend[SCHED_OP_CNT];
	struct helper_table helpers; /* the JIT binds helper addresses from here */
};

static const char *const sched_op_names[SCHED_OP_CNT] = {
	[SCHED_OP_TASK_INIT] = "gpu_task_init",
	[SCHED_OP_BIND] = "gpu_bind",
	[SCHED_OP_TASK_DESTROY] = "gpu_task_destroy",
	[SCHED_OP_LAUNCH_ADMIT] = "gpu_launch_admit",
};

_Static_assert(sizeof(struct gpu_sched_task_ctx) <= SCHED_CTX_MAX &&
		       sizeof(struct gpu_sched_launch_ctx) <= SCHED_CTX_MAX,
	       "every ctx fits the verifier's struct_ops ctx");

const char *sched_op_name(enum sched_op op)
{
	return (unsigned)op < SCHED_OP_CNT ? sched_op_names[op] : "?";
}

static int sched_op_of(const char *member)
{
	for (int op = 0; op < SCHED_OP_CNT; op++)
		if (!strcmp(member, sched_op_names[op]))
			return op;
	return -1;
}

static uint32_t sched_op_ctx_size(enum sched_op op)
{
	return op == SCHED_OP_LAUNCH_ADMIT ? sizeof(struct gpu_sched_launch_ctx)
					   : sizeof(struct gpu_sched_task_ctx);
}

uint32_t sched_policy_ctx_size(const char *op)
{
	int o = op ? sched_op_of(op) : -1;
	return o < 0 ? 0 : sched_op_ctx_size((enum sched_op)o);
}

static int sched_policy_load_op(struct sched_policy *pol, const struct object *obj,
				enum sched_op op, struct prog *p, struct err *e)
{
	int err = policy_prog_load(obj, sched_op_name(op), p, sched_policy_helper_proto,
				   sched_op_ctx_size(op), &pol->helpers, &pol->backend[op], e);
	if (!err)
		pol->ops[op] = p;
	return err;
}

int sched_policy_from_object(struct object *obj, struct sched_policy **out, struct err *e)
{
	const struct object_struct_ops *so = object_find_struct_ops(obj, "gpu_sched_ops");
	struct sched_policy *pol;
	int err = 0;

	*out = NULL;
	if (!so)
		return err_set(e, ENOENT,
			       "%s: no SEC(\".struct_ops\") variable of type struct gpu_sched_ops "
			       "(include <bpf/gpu_sched_ops.h>)", obj->name);
	if (!(pol = calloc(1, sizeof(*pol))))
		return err_set(e, ENOMEM, "%s: out of memory", obj->name);
	pol->helpers = *helper_table_default();
	sched_helpers_install(&pol->helpers);
	for (size_t i = 0; !err && i < so->member_cnt; i++) {
		int op = sched_op_of(so->members[i].name);
		struct prog *p = so->members[i].prog;
		if (op < 0)
			err = err_set(e, EINVAL, "%s: struct_ops '%s': unknown op '%s' (ops: "
				      "gpu_task_init, gpu_bind, gpu_task_destroy, gpu_launch_admit)",
				      obj->name, so->name, so->members[i].name);
		else if (p->type != PROG_TYPE_STRUCT_OPS)
			err = err_set(e, EINVAL, "%s: struct_ops '%s': %s is set to '%s', a "
				      "program of section '%s', not struct_ops/...", obj->name,
				      so->name, sched_op_names[op], p->name, p->section);
		else
			err = sched_policy_load_op(pol, obj, (enum sched_op)op, p, e);
	}
	if (err) {
		free(pol);
		return err;
	}
	*out = pol;
	return 0;
}

int sched_policy_open(const char *path, struct sched_policy **out, struct err *e)
{
	struct object *obj;
	int err = object_open(path, &obj, e);

	*out = NULL;
	err = err ? err : object_create_maps(obj, e);
	err = err ? err : sched_policy_from_object(obj, out, e);
	if (err) {
		object_free(obj);
		return err;
	}
	(*out)->owned = obj;
	return 0;
}

void sched_policy_free(struct sched_policy *pol)
{
	if (!pol)
		return;
	object_free(pol->owned); /* and the programs' JIT code */
	free(pol);
}

int sched_policy_has(const struct sched_policy *pol, enum sched_op op)
{
	return pol && pol->ops[op];
}

static int sched_policy_call(struct sched_policy *pol, struct sched_call *call, uint64_t *r0)
{
	struct prog_run_opts opts = {.args = {(uintptr_t)&call->ctx}, .helpers = &pol->helpers};
	const struct prog *p = pol->ops[call->op];

	if (pol->backend[call->op] == PROG_BACKEND_JIT)
		return jit_run(p, &opts, r0, NULL) ? -1 : 0;
	return prog_run(p, PROG_BACKEND_INTERP, &opts, r0, NULL) ? -1 : 0;
}

int sched_policy_task(struct sched_policy *pol, enum sched_op op,
		      const struct gpu_sched_task_ctx *ctx, struct sched_settings *set,
		      int64_t *r0)
{
	struct sched_settings scratch = *set;
	struct sched_call call = {.op = op, .set = &scratch};
	uint64_t r = 0;

	*r0 = 0;
	if (!sched_policy_has(pol, op))
		return 0;
	call.ctx.task = *ctx;
	if (sched_policy_call(pol, &call, &r))
		return -1;
	*set = scratch;
	*r0 = (int64_t)r;
	return 0;
}

enum gpu_sched_decision sched_policy_admit(struct sched_policy *pol,
					   const struct gpu_sched_launch_ctx *ctx,
					   uint64_t *delay_us)
{
	struct sched_call call = {.op = SCHED_OP_LAUNCH_ADMIT};
	uint64_t r = GPU_SCHED_ADMIT;

	*delay_us = 0;
	call.ctx.launch = *ctx;
	if (!sched_policy_has(pol, SCHED_OP_LAUNCH_ADMIT) || sched_policy_call(pol, &call, &r))
		return GPU_SCHED_ADMIT;
	if (r == GPU_SCHED_HOLD)
		return GPU_SCHED_HOLD;
	if (r == GPU_SCHED_DELAY) {
		*delay_us = call.delay_us;
		return GPU_SCHED_DELAY;
	}
	return GPU_SCHED_ADMIT;
}
