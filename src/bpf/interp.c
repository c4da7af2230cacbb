/* SPDX-License-Identifier: MIT */
/*
 * interp.c - the reference interpreter (RFC 9669 semantics).
 *
 * The dispatch loop lives in interp_loop.h and is instantiated twice: a
 * fast one that trusts verified code and a bounds-checking one.  In
 * checking mode a memory access must fall inside one of the regions the
 * program may touch: the active stack frames, opts->mem, and every map
 * value or ring buffer record a helper handed it during this run (the
 * region registry below).
 */
#include "interp.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "disasm.h"
#include "helpers.h"
#include "map.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "the interpreter's le/be assume a little-endian host");

/* A local call's saved state: callee-saved r6..r9 and the call insn. */
struct interp_frame {
	uint64_t saved[4];
	const struct isa_insn *ret;
};

/* Memory a program obtained from a helper or lddw: [lo, hi). */
struct interp_region {
	uint64_t lo, hi;
};

struct interp_run {
	const struct prog *prog;
	const struct prog_run_opts *opts;
	struct err *e;
	uint64_t reg[ISA_NR_REGS];
	uint64_t stack_top; /* r10 of the outermost frame */
	struct interp_frame frames[ISA_MAX_CALL_DEPTH];
	/* Checking mode only: the region registry (grows, never shrinks
	 * within a run: a value stays valid after a map delete). */
	struct interp_region *regions;
	size_t region_cnt, region_cap;
};

/* Signed division and modulo without C's traps: x/0 = 0, x%0 = x,
 * INT_MIN/-1 = INT_MIN, INT_MIN%-1 = 0 (RFC 9669 section 4.1). */
static inline uint64_t interp_sdiv64(uint64_t a, uint64_t b)
{
	if (!b)
		return 0;
	if ((int64_t)b == -1)
		return 0 - a;
	return (uint64_t)((int64_t)a / (int64_t)b);
}

static inline uint64_t interp_smod64(uint64_t a, uint64_t b)
{
	if (!b)
		return a;
	if ((int64_t)b == -1)
		return 0;
	return (uint64_t)((int64_t)a % (int64_t)b);
}

static inline uint32_t interp_sdiv32(uint32_t a, uint32_t b)
{
	if (!b)
		return 0;
	if ((int32_t)b == -1)
		return 0 - a;
	return (uint32_t)((int32_t)a / (int32_t)b);
}

static inline uint32_t interp_smod32(uint32_t a, uint32_t b)
{
	if (!b)
		return a;
	if ((int32_t)b == -1)
		return 0;
	return (uint32_t)((int32_t)a % (int32_t)b);
}

static int interp_add_region(struct interp_run *run, uint64_t lo, uint64_t size)
{
	for (size_t i = 0; i < run->region_cnt; i++)
		if (run->regions[i].lo == lo && run->regions[i].hi == lo + size)
			return 0;
	if (run->region_cnt == run->region_cap) {
		size_t cap = run->region_cap ? run->region_cap * 2 : 16;
		struct interp_region *r = realloc(run->regions, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		run->regions = r;
		run->region_cap = cap;
	}
	run->regions[run->region_cnt++] = (struct interp_region){lo, lo + size};
	return 0;
}

static int interp_in(uint64_t lo, uint64_t hi, uint64_t addr, uint64_t size)
{
	return addr >= lo && addr <= hi && size <= hi - addr;
}

/* Checking mode: may insn idx access [addr, addr+size)?  0 or -EFAULT. */
static int interp_check(struct interp_run *run, const struct interp_frame *frame, size_t idx,
			uint64_t addr, uint64_t size, const char *what)
{
	const struct prog_run_opts *o = run->opts;
	/* The active frames lie contiguously below stack_top. */
	uint64_t stack_lo = run->stack_top -
			    (uint64_t)(frame - run->frames + 1) * ISA_STACK_SIZE;
	int ok = interp_in(stack_lo, run->stack_top, addr, size);
	char text[DISASM_BUF_SIZE];

	if (!ok && o->mem)
		ok = interp_in((uintptr_t)o->mem, (uintptr_t)o->mem + o->mem_len, addr, size);
	for (size_t i = 0; !ok && i < run->region_cnt; i++)
		ok = interp_in(run->regions[i].lo, run->regions[i].hi, addr, size);
	if (ok && (strcmp(what, "atomic access") || addr % size == 0))
		return 0;
	disasm_insn(run->prog->insns, run->prog->insn_cnt, idx, 0, text, sizeof(text));
	if (!ok)
		return err_set(run->e, EFAULT,
			       "insn %zu (%s): %s of %" PRIu64 " bytes at 0x%" PRIx64
			       " is outside the stack, the memory and every map value or record the program obtained",
			       idx, text, what, size, addr);
	return err_set(run->e, EFAULT, "insn %zu (%s): misaligned atomic access at 0x%" PRIx64,
		       idx, text, addr);
}

/* Call helper id with r1..r5; in checking mode, record what it returned. */
static int interp_helper(struct interp_run *run, size_t idx, uint32_t id)
{
	uint64_t *reg = run->reg;
	helper_fn fn = id < HELPER_TABLE_SIZE ? run->opts->helpers->fn[id] : NULL;

	if (!fn)
		return err_set(run->e, ENOENT, "insn %zu: unknown helper %u", idx, id);
	uint64_t r1 = reg[1], r2 = reg[2];
	reg[0] = fn(reg[1], reg[2], reg[3], reg[4], reg[5]);
	if (!run->opts->bounds_check || !reg[0])
		return 0;
	int ret = 0;
	if (id == HELPER_MAP_LOOKUP_ELEM)
		ret = interp_add_region(run, reg[0],
					map_get_def((struct map *)(uintptr_t)r1)->value_size);
	else if (id == HELPER_RINGBUF_RESERVE)
		ret = interp_add_region(run, reg[0], r2);
	if (ret)
		return err_set(run->e, ENOMEM, "insn %zu: out of memory", idx);
	return 0;
}

/* lddw with a map pseudo source: the map handle, or the address of its value. */
static int interp_ld_map(struct interp_run *run, size_t idx)
{
	const struct prog *p = run->prog;
	const struct isa_insn *in = &p->insns[idx];
	uint64_t *dst = &run->reg[in->dst];

	if ((uint64_t)in->imm >= p->map_cnt || !p->maps[in->imm])
		return err_set(run->e, EINVAL, "insn %zu: map index %d out of range (program has %zu maps)",
			       idx, in->imm, p->map_cnt);
	struct map *m = p->maps[in->imm];
	if (in->src == ISA_PSEUDO_MAP_FD) {
		*dst = (uintptr_t)m;
		return 0;
	}
	*dst = (uintptr_t)map_array_base(m) + (uint32_t)in[1].imm;
	if (run->opts->bounds_check &&
	    interp_add_region(run, (uintptr_t)map_array_base(m), map_get_def(m)->value_size))
		return err_set(run->e, ENOMEM, "insn %zu: out of memory", idx);
	return 0;
}

#define INTERP_LOOP interp_loop_fast
#define INTERP_CHECKED 0
#include "interp_loop.h"
#undef INTERP_LOOP
#undef INTERP_CHECKED

#define INTERP_LOOP interp_loop_checked
#define INTERP_CHECKED 1
#include "interp_loop.h"
#undef INTERP_LOOP
#undef INTERP_CHECKED

int interp_run(const struct prog *p, const struct prog_run_opts *opts, uint64_t *r0,
	       struct err *e)
{
	/* Every frame's stack, 8-byte aligned; frame 0 at the top. */
	uint64_t stack[ISA_MAX_CALL_DEPTH * ISA_STACK_SIZE / sizeof(uint64_t)];
	struct interp_run run = {.prog = p, .opts = opts, .e = e};
	int ret;

	if (!opts || !opts->helpers)
		return err_set(e, EINVAL, "prog '%s': interp_run needs opts with a helper table",
			       p->name);
	memcpy(&run.reg[1], opts->args, sizeof(opts->args));
	run.stack_top = (uintptr_t)stack + sizeof(stack);
	run.reg[ISA_REG_FP] = run.stack_top;
	ret = opts->bounds_check ? interp_loop_checked(&run) : interp_loop_fast(&run);
	free(run.regions);
	if (ret == 0)
		*r0 = run.reg[0];
	else
		err_prefix(e, "prog '%s': ", p->name);
	return ret;
}
