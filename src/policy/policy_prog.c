/* SPDX-License-Identifier: MIT */
/*
 * policy_prog.c - one struct_ops member program of a policy, verified with
 * the policy's helpers and the op's ctx size, then compiled.
 */
#include "policy_prog.h"

#include "bpf/jit.h"
#include "bpf/verifier.h"

int policy_prog_load(const struct object *obj, const char *op_name, struct prog *p,
		     const struct helper_proto *(*proto)(uint32_t id), uint32_t ctx_size,
		     const struct helper_table *helpers, enum prog_backend *backend,
		     struct err *e)
{
	struct vfy_opts vo = {.profile = VFY_PROFILE_HOST, .helper_proto = proto,
			      .ctx_size = ctx_size};
	int err = verifier_check(p, &vo, NULL, e);

	if (err) {
		err_prefix(e, "%s: %s (prog '%s'): ", obj->name, op_name, p->name);
		return err;
	}
	/* The interpreter runs what the JIT cannot compile (same semantics). */
	*backend = jit_compile(p, helpers, NULL) ? PROG_BACKEND_INTERP : PROG_BACKEND_JIT;
	return 0;
}
