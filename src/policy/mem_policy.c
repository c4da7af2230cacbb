/* SPDX-License-Identifier: MIT */
/*
 * mem_policy.c - policy objects: open, bind struct gpu_mem_ops members to
 * ops, verify with the struct_ops profile, compile, call.
 *
 * Several objects can make one policy (an eviction policy and a prefetch
 * policy side by side); each op is set by at most one of them.  The JIT is
 * the backend; a program it refuses runs in the interpreter, and a program
 * that fails at run time (it cannot after verification, but the runtime
 * does not bet the model on that) leaves the driver's default for that call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/jit.h"
#include "bpf/object.h"
#include "mem_impl.h"
#include "policy_prog.h"

enum { MEM_POLICY_MAX_OBJECTS = 8 };

struct mem_policy {
	char *name;
	struct object *objs[MEM_POLICY_MAX_OBJECTS];
	size_t obj_cnt;
	struct prog *ops[MEM_OP_CNT];
	enum prog_backend backend[MEM_OP_CNT];
	struct helper_table helpers; /* the JIT binds helper addresses from here */
};

static const char *const mem_op_names[MEM_OP_CNT] = {
	[MEM_OP_PREFETCH] = "gpu_page_prefetch",
	[MEM_OP_ACTIVATE] = "gpu_block_activate",
	[MEM_OP_ACCESS] = "gpu_block_access",
	[MEM_OP_EVICT] = "gpu_evict_prepare",
};

const char *mem_op_name(enum mem_op op)
{
	return (unsigned)op < MEM_OP_CNT ? mem_op_names[op] : "?";
}

uint32_t mem_op_ctx_size(enum mem_op op)
{
	switch (op) {
	case MEM_OP_PREFETCH: return sizeof(struct gpu_mem_prefetch_ctx);
	case MEM_OP_EVICT: return sizeof(struct gpu_mem_evict_ctx);
	default: return sizeof(struct gpu_mem_block_ctx);
	}
}

_Static_assert(sizeof(struct gpu_mem_prefetch_ctx) <= MEM_CTX_MAX &&
		       sizeof(struct gpu_mem_block_ctx) <= MEM_CTX_MAX &&
		       sizeof(struct gpu_mem_evict_ctx) <= MEM_CTX_MAX,
	       "every ctx fits the verifier's struct_ops ctx");

/* The report name: each file's base name without .bpf.o, joined by '+'. */
static int mem_policy_set_name(struct mem_policy *pol, const char *paths, struct err *e)
{
	size_t len = strlen(paths);
	char *n = malloc(len + 1);

	if (!n)
		return err_set(e, ENOMEM, "policy: out of memory");
	n[0] = '\0';
	for (const char *p = paths; *p;) {
		const char *end = strchr(p, ',');
		size_t plen = end ? (size_t)(end - p) : strlen(p);
		const char *base = p;
		for (size_t i = 0; i < plen; i++)
			if (p[i] == '/')
				base = p + i + 1;
		size_t blen = plen - (size_t)(base - p);
		if (blen > 6 && !strncmp(base + blen - 6, ".bpf.o", 6))
			blen -= 6;
		else if (blen > 2 && !strncmp(base + blen - 2, ".o", 2))
			blen -= 2;
		if (n[0])
			strcat(n, "+");
		strncat(n, base, blen);
		p += plen + (end ? 1 : 0);
	}
	pol->name = n;
	return 0;
}

static int mem_policy_op_of(const char *member)
{
	for (int op = 0; op < MEM_OP_CNT; op++)
		if (!strcmp(member, mem_op_names[op]))
			return op;
	return -1;
}

uint32_t mem_policy_ctx_size(const char *op)
{
	int o = op ? mem_policy_op_of(op) : -1;
	return o < 0 ? 0 : mem_op_ctx_size((enum mem_op)o);
}

/* Verify and compile the program of op (set by obj). */
static int mem_policy_load_op(struct mem_policy *pol, struct object *obj, enum mem_op op,
			      struct prog *p, struct err *e)
{
	int err = policy_prog_load(obj, mem_op_name(op), p, mem_policy_helper_proto,
				   mem_op_ctx_size(op), &pol->helpers, &pol->backend[op], e);
	if (!err)
		pol->ops[op] = p;
	return err;
}

static int mem_policy_add_object(struct mem_policy *pol, const char *path, struct err *e)
{
	struct object *obj;
	int err = object_open(path, &obj, e);

	if (err)
		return err;
	pol->objs[pol->obj_cnt++] = obj;
	if ((err = object_create_maps(obj, e)))
		return err;
	const struct object_struct_ops *so = object_find_struct_ops(obj, "gpu_mem_ops");
	if (!so)
		return err_set(e, ENOENT,
			       "%s: no SEC(\".struct_ops\") variable of type struct gpu_mem_ops "
			       "(include <bpf/gpu_mem_ops.h>)", path);
	for (size_t i = 0; i < so->member_cnt; i++) {
		int op = mem_policy_op_of(so->members[i].name);
		if (op < 0)
			return err_set(e, EINVAL, "%s: struct_ops '%s': unknown op '%s'", path,
				       so->name, so->members[i].name);
		if (pol->ops[op])
			return err_set(e, EINVAL, "%s: %s is already set by another object of "
				       "this policy", path, mem_op_names[op]);
		const struct prog *p = so->members[i].prog;
		if (p->type != PROG_TYPE_STRUCT_OPS)
			return err_set(e, EINVAL, "%s: struct_ops '%s': %s is set to '%s', a "
				       "program of section '%s', not struct_ops/...", path, so->name,
				       mem_op_names[op], p->name, p->section);
		if ((err = mem_policy_load_op(pol, obj, (enum mem_op)op, so->members[i].prog, e)))
			return err;
	}
	return 0;
}

int mem_policy_open(const char *paths, struct mem_policy **out, struct err *e)
{
	struct mem_policy *pol = calloc(1, sizeof(*pol));
	int err;

	*out = NULL;
	if (!pol)
		return err_set(e, ENOMEM, "policy: out of memory");
	pol->helpers = *helper_table_default();
	mem_helpers_install(&pol->helpers);
	err = mem_policy_set_name(pol, paths, e);
	for (const char *p = paths; !err && *p;) {
		const char *end = strchr(p, ',');
		size_t plen = end ? (size_t)(end - p) : strlen(p);
		char path[4096];
		if (!plen || plen >= sizeof(path)) {
			err = err_set(e, EINVAL, "policy '%s': empty or too long file name", paths);
			break;
		}
		if (pol->obj_cnt == MEM_POLICY_MAX_OBJECTS) {
			err = err_set(e, E2BIG, "policy '%s': more than %d objects", paths,
				      MEM_POLICY_MAX_OBJECTS);
			break;
		}
		memcpy(path, p, plen);
		path[plen] = '\0';
		err = mem_policy_add_object(pol, path, e);
		p += plen + (end ? 1 : 0);
	}
	if (err) {
		mem_policy_free(pol);
		return err;
	}
	*out = pol;
	return 0;
}

void mem_policy_free(struct mem_policy *pol)
{
	if (!pol)
		return;
	for (size_t i = 0; i < pol->obj_cnt; i++)
		object_free(pol->objs[i]); /* and the programs' JIT code */
	free(pol->name);
	free(pol);
}

const char *mem_policy_name(const struct mem_policy *pol)
{
	return pol ? pol->name : "none";
}

void mem_policy_use_interp(struct mem_policy *pol)
{
	for (int op = 0; op < MEM_OP_CNT; op++)
		pol->backend[op] = PROG_BACKEND_INTERP;
}

int mem_policy_backend(const struct mem_policy *pol, enum mem_op op)
{
	return pol && pol->ops[op] ? (int)pol->backend[op] : -1;
}

int mem_policy_has(const struct mem_policy *pol, enum mem_op op)
{
	return pol && pol->ops[op];
}

int mem_policy_call(struct mem_policy *pol, struct mem_call *call, uint64_t *r0)
{
	struct prog_run_opts opts = {.args = {(uintptr_t)&call->ctx}, .helpers = &pol->helpers};
	const struct prog *p = pol->ops[call->op];

	call->rt->st.policy_calls++;
	if (pol->backend[call->op] == PROG_BACKEND_JIT) {
		if (!jit_run(p, &opts, r0, NULL))
			return 0;
	} else if (!prog_run(p, PROG_BACKEND_INTERP, &opts, r0, NULL)) {
		return 0;
	}
	call->rt->st.policy_errors++;
	return -1;
}
