/* SPDX-License-Identifier: MIT */
/*
 * vfy_helper.c - helper calls: the profile allows the helper, every
 * argument register is what the prototype asks for, memory arguments are
 * readable (or writable) for their whole size, the map fits the helper; r0
 * gets the return type; r1-r5 are clobbered.  Ring buffer records are
 * references: reserve acquires one, submit/discard release it, and every
 * copy of a released record becomes unusable.
 */
#include <errno.h>
#include <string.h>

#include "vfy.h"

static bool is_ringbuf_helper(uint32_t id)
{
	return id == HELPER_RINGBUF_OUTPUT || id == HELPER_RINGBUF_RESERVE ||
	       id == HELPER_RINGBUF_QUERY;
}

/* Does the helper accept this kind of map? */
static int check_map_func(struct vfy_env *env, const struct helper_proto *h, uint32_t map)
{
	const struct map_def *d = vfy_map_def(env, map);
	if (!d)
		return vfy_bug(env, "map %u has no definition", map);
	bool rb = d->type == MAP_TYPE_RINGBUF;
	if (rb != is_ringbuf_helper(h->id))
		return vfy_reject(env, EACCES, "helper %s cannot be used with %s map '%s'", h->name,
				  rb ? "ring buffer" : "non-ring-buffer", d->name);
	if (h->id == HELPER_MAP_DELETE_ELEM &&
	    (d->type == MAP_TYPE_ARRAY || d->type == MAP_TYPE_PERCPU_ARRAY ||
	     d->type == MAP_TYPE_GPU_BLOCK_ARRAY))
		return vfy_reject(env, EACCES, "helper %s cannot delete from array map '%s'",
				  h->name, d->name);
	if ((h->id == HELPER_MAP_UPDATE_ELEM || h->id == HELPER_MAP_DELETE_ELEM) &&
	    (d->flags & MAP_F_RDONLY_PROG))
		return vfy_reject(env, EACCES, "helper %s writes read-only map '%s'", h->name,
				  d->name);
	return 0;
}

static void mark_released(struct vfy_reg *r, void *arg)
{
	const uint32_t *a = arg; /* {ref_id, insn} */
	if (r->ref_id == a[0] && vfy_reg_is_ptr(r)) {
		mark_reg_not_init(r);
		r->type = REG_RELEASED;
		r->insn = a[1];
	}
}

int mark_ref_release(struct vfy_env *env, uint32_t ref_id)
{
	struct vfy_state *s = env->cur;
	for (uint32_t i = 0; i < s->nrefs; i++) {
		if (s->refs[i].id != ref_id)
			continue;
		memmove(&s->refs[i], &s->refs[i + 1], (s->nrefs - i - 1) * sizeof(s->refs[0]));
		s->nrefs--;
		uint32_t arg[2] = {ref_id, env->insn_idx};
		vfy_for_each_reg(s, mark_released, arg);
		return 0;
	}
	return vfy_bug(env, "release of unknown reference %u", ref_id);
}

static const char *arg_kind(enum helper_arg a)
{
	switch (a) {
	case ARG_CONST_MAP_PTR: return "a map";
	case ARG_PTR_TO_MAP_KEY: return "a pointer to the key";
	case ARG_PTR_TO_MAP_VALUE: return "a pointer to the value";
	case ARG_PTR_TO_MEM: return "a pointer to readable memory";
	case ARG_PTR_TO_UNINIT_MEM: return "a pointer to writable memory";
	case ARG_PTR_TO_CTX: return "the ctx";
	case ARG_PTR_TO_RINGBUF_REC: return "a reserved ring buffer record";
	case ARG_PTR_TO_CONST_STR: return "a constant string";
	case ARG_PTR_TO_ATOMIC_U64: return "a pointer to an 8-byte word of a map value";
	default: return "a scalar";
	}
}

/* Memory a pointer argument may refer to (checked in detail by check_helper_mem). */
static bool is_mem_ptr(const struct vfy_reg *r)
{
	return r->type == REG_PTR_STACK || r->type == REG_PTR_MAP_VALUE ||
	       r->type == REG_PTR_RINGBUF_REC || r->type == REG_PTR_MEM;
}

/* The constant string behind a read-only map value pointer must end inside the value. */
static int check_const_str(struct vfy_env *env, uint32_t regno, const struct vfy_reg *r)
{
	const struct map_def *d = vfy_map_def(env, r->map);
	if (r->type != REG_PTR_MAP_VALUE || !d || !(d->flags & MAP_F_RDONLY_PROG))
		return vfy_reject(env, EACCES,
				  "R%u must point to a constant string in read-only data (.rodata), "
				  "not %s", regno, vfy_reg_type_name(r->type));
	if (!vfy_bounds_is_const(&r->b))
		return vfy_reject(env, EACCES, "R%u: constant string at a variable offset", regno);
	int64_t off = (int64_t)r->off + (int64_t)r->b.var.value;
	if (off < 0 || off >= d->value_size)
		return vfy_reject(env, EACCES,
				  "R%u: string offset %lld is outside map '%s' (%u bytes)", regno,
				  (long long)off, d->name, d->value_size);
	const char *base = map_array_base(env->p->maps[r->map]);
	if (base && !memchr(base + off, 0, d->value_size - (size_t)off))
		return vfy_reject(env, EACCES,
				  "R%u: string at offset %lld of map '%s' is not NUL-terminated",
				  regno, (long long)off, d->name);
	return 0;
}

/* A size argument: a scalar with bounds the helper can trust. */
static int check_size_arg(struct vfy_env *env, uint32_t regno, const struct vfy_reg *r,
			  bool zero_ok, const char *fname)
{
	if (r->type != REG_SCALAR)
		return vfy_reject(env, EACCES, "R%u: %s expects a size, not %s", regno, fname,
				  vfy_reg_type_name(r->type));
	if (r->b.smin < 0)
		return vfy_reject(env, EACCES,
				  "R%u: size for %s may be negative (min %lld); bound it with a check",
				  regno, fname, (long long)r->b.smin);
	if (!zero_ok && r->b.umin == 0)
		return vfy_reject(env, EACCES, "R%u: size for %s may be zero; it must be > 0",
				  regno, fname);
	if (r->b.umax > (1u << 29))
		return vfy_reject(env, EACCES,
				  "R%u: size for %s is unbounded (max %llu); bound it with a check",
				  regno, fname, (unsigned long long)r->b.umax);
	return 0;
}

int check_helper_call(struct vfy_env *env, const struct isa_insn *insn)
{
	struct vfy_reg *regs = vfy_cur_regs(env->cur);
	uint32_t id = (uint32_t)insn->imm;
	const struct helper_proto *h = insn->imm < 0 ? NULL : env->proto(id);
	bool gpu = env->profile == VFY_PROFILE_GPU;
	uint32_t map = UINT32_MAX;
	uint64_t alloc_size = 0;
	int err;

	if (!h) {
		const char *linux_name = insn->imm < 0 ? NULL : helper_linux_name(id);
		if (linux_name)
			return vfy_reject(env, EACCES,
					  "unknown helper %d (bpf_%s): gpuext does not implement it",
					  insn->imm, linux_name);
		return vfy_reject(env, EACCES, "unknown helper %d", insn->imm);
	}
	if (gpu && !(h->flags & HELPER_F_GPU))
		return vfy_reject(env, EACCES, "helper %s is not available on the GPU", h->name);
	if (gpu && (h->flags & HELPER_F_SLEEPABLE))
		return vfy_reject(env, EACCES, "helper %s may sleep: not allowed on the GPU",
				  h->name);
	if (!gpu && !(h->flags & HELPER_F_HOST))
		return vfy_reject(env, EACCES, "helper %s is only available on the GPU", h->name);

	for (uint32_t a = 0; a < ISA_MAX_HELPER_ARGS && h->args[a] != ARG_NONE; a++) {
		uint32_t regno = a + 1;
		struct vfy_reg *r = &regs[regno];
		enum helper_arg kind = h->args[a];

		/* Variadic helpers (trace_printk) list more arguments than a call
		 * may pass: an unset one is passed but never interpreted. */
		if (r->type == REG_NOT_INIT && kind == ARG_ANYTHING)
			continue;
		if (r->type == REG_NOT_INIT)
			return vfy_reject(env, EACCES,
					  "R%u !read_ok: argument %u of %s (%s) is not initialized",
					  regno, regno, h->name, arg_kind(kind));
		if (r->type == REG_RELEASED)
			return vfy_reject(env, EACCES,
					  "R%u is a ring buffer record released at insn %u: use after "
					  "release", regno, r->insn);
		switch (kind) {
		case ARG_ANYTHING:
			if (vfy_reg_is_ptr(r) && !env->opts.allow_ptr_leaks &&
			    (h->flags & HELPER_F_PKT_LEAK))
				return vfy_reject(env, EACCES, "R%u leaks a pointer through %s", regno,
						  h->name);
			break;
		case ARG_SCALAR:
			if (r->type != REG_SCALAR)
				return vfy_reject(env, EACCES, "R%u: %s expects a scalar, not %s",
						  regno, h->name, vfy_reg_type_name(r->type));
			break;
		case ARG_CONST_MAP_PTR:
			if (r->type != REG_CONST_MAP)
				return vfy_reject(env, EACCES, "R%u: %s expects a map, not %s", regno,
						  h->name, vfy_reg_type_name(r->type));
			map = r->map;
			if ((err = check_map_func(env, h, map)))
				return err;
			break;
		case ARG_PTR_TO_MAP_KEY:
		case ARG_PTR_TO_MAP_VALUE: {
			const struct map_def *d = vfy_map_def(env, map);
			if (!d)
				return vfy_bug(env, "%s: map argument missing before key/value",
					       h->name);
			if (!is_mem_ptr(r))
				return vfy_reject(env, EACCES, "R%u: %s expects %s, not %s", regno,
						  h->name, arg_kind(kind), vfy_reg_type_name(r->type));
			uint32_t sz = kind == ARG_PTR_TO_MAP_KEY ? d->key_size : d->value_size;
			if ((err = check_helper_mem(env, regno, sz, sz, false, false,
						    kind == ARG_PTR_TO_MAP_KEY ? "the key" : "the value")))
				return err;
			break;
		}
		case ARG_PTR_TO_MEM:
		case ARG_PTR_TO_UNINIT_MEM: {
			bool zero_ok = a + 1 < ISA_MAX_HELPER_ARGS &&
				       h->args[a + 1] == ARG_CONST_SIZE_OR_ZERO;
			if (a + 1 >= ISA_MAX_HELPER_ARGS || (h->args[a + 1] != ARG_CONST_SIZE && !zero_ok))
				return vfy_bug(env, "%s: memory argument without a size", h->name);
			struct vfy_reg *sz = &regs[regno + 1];
			if (sz->type == REG_NOT_INIT)
				return vfy_reject(env, EACCES, "R%u !read_ok: size argument of %s",
						  regno + 1, h->name);
			if ((err = check_size_arg(env, regno + 1, sz, zero_ok, h->name)))
				return err;
			if (sz->b.umax == 0 && vfy_reg_is_null_const(r))
				break;
			if (!is_mem_ptr(r))
				return vfy_reject(env, EACCES, "R%u: %s expects %s, not %s", regno,
						  h->name, arg_kind(kind), vfy_reg_type_name(r->type));
			if ((err = check_helper_mem(env, regno, sz->b.umin, sz->b.umax,
						    kind == ARG_PTR_TO_UNINIT_MEM,
						    h->flags & HELPER_F_PKT_LEAK, "the buffer")))
				return err;
			break;
		}
		case ARG_CONST_SIZE:
		case ARG_CONST_SIZE_OR_ZERO:
			break; /* checked with its pointer */
		case ARG_PTR_TO_CTX:
			if (r->type != REG_PTR_CTX || r->off || !vfy_bounds_is_const(&r->b))
				return vfy_reject(env, EACCES, "R%u: %s expects the ctx, not %s", regno,
						  h->name, vfy_reg_type_name(r->type));
			break;
		case ARG_PTR_TO_RINGBUF_REC:
			if (r->type != REG_PTR_RINGBUF_REC)
				return vfy_reject(env, EACCES,
						  "R%u: %s expects a reserved ring buffer record%s, not %s",
						  regno, h->name,
						  r->type == REG_PTR_RINGBUF_REC_OR_NULL ?
							  " checked against NULL" : "",
						  vfy_reg_type_name(r->type));
			if (r->off || !tnum_equals_const(r->b.var, 0))
				return vfy_reject(env, EACCES,
						  "R%u: %s needs the record's start, not an offset into it",
						  regno, h->name);
			break;
		case ARG_CONST_ALLOC_SIZE:
			if (r->type != REG_SCALAR || !vfy_bounds_is_const(&r->b))
				return vfy_reject(env, EACCES,
						  "R%u: %s needs a constant size", regno, h->name);
			alloc_size = r->b.var.value;
			if (alloc_size == 0 || alloc_size > (1u << 29))
				return vfy_reject(env, EACCES, "R%u: %s size %llu out of range",
						  regno, h->name, (unsigned long long)alloc_size);
			break;
		case ARG_PTR_TO_CONST_STR:
			if ((err = check_const_str(env, regno, r)))
				return err;
			break;
		case ARG_PTR_TO_ATOMIC_U64:
			/* a map value only: the stack is thread-private, and on the
			 * GPU the translator emits a global (or shared) atomic */
			if (r->type != REG_PTR_MAP_VALUE)
				return vfy_reject(env, EACCES, "R%u: %s expects %s, not %s", regno,
						  h->name, arg_kind(kind), vfy_reg_type_name(r->type));
			/* in bounds, writable, 8-aligned (as an atomic instruction) */
			if ((err = check_mem_access(env, regno, 0, 8, ACCESS_ATOMIC, false, NULL,
						    NULL)))
				return err;
			break;
		case ARG_NONE:
			break;
		}
	}

	/* Arguments checked by value (sizes, NULL buffers) must stay what they were. */
	uint16_t by_value = 0;
	for (uint32_t a = 0; a < ISA_MAX_HELPER_ARGS && h->args[a] != ARG_NONE; a++)
		if (h->args[a] != ARG_SCALAR && h->args[a] != ARG_ANYTHING)
			by_value |= (uint16_t)(1u << (a + 1));
	mark_precise(env, by_value);

	/* Releases happen once all arguments are known good. */
	for (uint32_t a = 0; a < ISA_MAX_HELPER_ARGS; a++)
		if (h->args[a] == ARG_PTR_TO_RINGBUF_REC &&
		    (err = mark_ref_release(env, regs[a + 1].ref_id)))
			return err;

	for (uint32_t r = 1; r <= 5; r++)
		mark_reg_not_init(&regs[r]);
	struct vfy_reg *r0 = &regs[0];
	switch (h->ret) {
	case RET_INTEGER:
	case RET_VOID:
		mark_reg_unknown(r0);
		break;
	case RET_PTR_TO_MAP_VALUE_OR_NULL:
		if (map == UINT32_MAX)
			return vfy_bug(env, "%s returns a map value but takes no map", h->name);
		mark_reg_not_init(r0);
		r0->type = REG_PTR_MAP_VALUE_OR_NULL;
		r0->map = map;
		r0->id = ++env->id_gen;
		r0->b = vfy_bounds_const(0);
		break;
	case RET_PTR_TO_RINGBUF_REC_OR_NULL: {
		struct vfy_state *s = env->cur;
		if (!alloc_size)
			return vfy_bug(env, "%s returns a record but takes no size", h->name);
		if (s->nrefs == VFY_MAX_REFS)
			return vfy_reject(env, EACCES,
					  "more than %d ring buffer records reserved at once",
					  VFY_MAX_REFS);
		mark_reg_not_init(r0);
		r0->type = REG_PTR_RINGBUF_REC_OR_NULL;
		r0->id = r0->ref_id = ++env->id_gen;
		r0->size = (uint32_t)alloc_size;
		r0->b = vfy_bounds_const(0);
		s->refs[s->nrefs++] = (struct vfy_ref){.id = r0->id, .insn = env->insn_idx};
		break;
	}
	}
	return 0;
}
