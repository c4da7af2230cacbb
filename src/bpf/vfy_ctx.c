/* SPDX-License-Identifier: MIT */
/*
 * vfy_ctx.c - what r1 points to when a program starts, per program type,
 * and which of its bytes the program may read or write.
 *
 * Every ctx gpuext passes today is read-only: probes observe, they do not
 * change the registers of the process they run in.
 */
#include <errno.h>

#include "bpf/gpuext_cupti.h"
#include "vfy.h"

/* x86-64 struct pt_regs: r15 .. ss, 21 eight-byte registers. */
enum { PT_REGS_SIZE = 21 * 8 };
/* struct_ops callbacks receive their arguments as an array of u64 (up to 12). */
enum { STRUCT_OPS_ARGS_SIZE = 12 * 8 };
/*
 * Device and CUPTI ctxs are records the runtime fills in: read-only bytes,
 * read at any offset and size inside them (field_size 0), variable offsets
 * included (a loop over a kernel's name).  Their sizes bound the structs
 * declared for programs in include/bpf/: the gpu/entry and gpu/exit launch
 * record and the gpu/mem access record 64 bytes; a CUPTI record exactly
 * its struct in include/bpf/gpuext_cupti.h.
 */
enum { GPU_CTX_SIZE = 64 };
/* struct gpuext_block_ctx (include/bpf/gpuext_helpers.h), exactly. */
enum { GPU_BLOCK_CTX_SIZE = 48 };

static const struct vfy_ctx_desc ctx_descs[] = {
	[PROG_TYPE_RAW] = {"program memory", 0, true, 0},
	[PROG_TYPE_UPROBE] = {"struct pt_regs", PT_REGS_SIZE, false, 8},
	[PROG_TYPE_URETPROBE] = {"struct pt_regs", PT_REGS_SIZE, false, 8},
	[PROG_TYPE_UPROBE_PATH] = {"struct pt_regs", PT_REGS_SIZE, false, 8},
	[PROG_TYPE_GPU_ENTRY] = {"the launch record", GPU_CTX_SIZE, false, 0},
	[PROG_TYPE_GPU_EXIT] = {"the launch record", GPU_CTX_SIZE, false, 0},
	[PROG_TYPE_GPU_MEM] = {"the gpu/mem access record", GPU_CTX_SIZE, false, 0},
	[PROG_TYPE_CUPTI_KERNEL] = {"struct gpuext_cupti_kernel",
				    sizeof(struct gpuext_cupti_kernel), false, 0},
	[PROG_TYPE_CUPTI_MEMCPY] = {"struct gpuext_cupti_memcpy",
				    sizeof(struct gpuext_cupti_memcpy), false, 0},
	[PROG_TYPE_CUPTI_UVM] = {"struct gpuext_cupti_uvm",
				 sizeof(struct gpuext_cupti_uvm), false, 0},
	[PROG_TYPE_STRUCT_OPS] = {"the struct_ops arguments", STRUCT_OPS_ARGS_SIZE, false, 8},
	[PROG_TYPE_GPU_BLOCK_ENTRY] = {"struct gpuext_block_ctx", GPU_BLOCK_CTX_SIZE, false, 0},
	[PROG_TYPE_GPU_BLOCK_EXIT] = {"struct gpuext_block_ctx", GPU_BLOCK_CTX_SIZE, false, 0},
};

const struct vfy_ctx_desc *vfy_ctx_of(enum prog_type t)
{
	if ((unsigned)t >= sizeof(ctx_descs) / sizeof(ctx_descs[0]))
		return &ctx_descs[PROG_TYPE_RAW];
	return &ctx_descs[t];
}

int check_ctx_access(struct vfy_env *env, uint32_t regno, int64_t lo, int64_t hi, uint32_t size,
		     bool write)
{
	const struct vfy_ctx_desc *d = vfy_ctx_of(env->p->type);
	const char *type = prog_type_name(env->p->type);
	uint32_t ctx_size = env->opts.ctx_size && env->opts.ctx_size < d->size ? env->opts.ctx_size
									     : d->size;

	if (!d->size)
		return vfy_reject(env, EACCES, "R%u: %s programs have %s", regno, type, d->name);
	if (write && !d->writable)
		return vfy_reject(env, EACCES, "R%u: %s programs may not write %s (read-only ctx)",
				  regno, type, d->name);
	if (lo < 0 || hi + size > ctx_size)
		return vfy_reject(env, EACCES,
				  "R%u: ctx access at offset %lld%s size %u is outside %s (%u bytes)",
				  regno, (long long)lo, lo == hi ? "" : " (or more)", size, d->name,
				  ctx_size);
	if (!d->field_size)
		return 0;
	if (lo != hi)
		return vfy_reject(env, EACCES, "R%u: variable offset into %s prohibited", regno,
				  d->name);
	int64_t off = lo;
	/* A narrower read must stay inside one field and be aligned to its size. */
	if (off % size || (uint64_t)off / d->field_size != ((uint64_t)off + size - 1) / d->field_size)
		return vfy_reject(env, EACCES,
				  "R%u: misaligned ctx access at offset %lld size %u (%s has "
				  "%u-byte fields)", regno, (long long)off, size, d->name,
				  d->field_size);
	return 0;
}
