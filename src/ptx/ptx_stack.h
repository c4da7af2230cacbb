/* SPDX-License-Identifier: MIT */
/*
 * ptx_stack.h - which eBPF stack slots (and mem-probe ctx fields) the
 * translator may keep in PTX registers.
 *
 * The eBPF stack is a .local frame (ptx_emit.h); every store to it and load
 * from it is a local-memory round trip through L1, on the path of every
 * probe (map keys are built there).  ptx_stack_analyze proves, for one eBPF
 * function, that its frame is only ever touched at constant offsets from
 * r10 that it can see: it follows, by a forward data-flow fixpoint over the
 * function's control flow, which registers hold r10 + a constant (and, for an
 * inline probe's function 0, r1 = ctx + a constant).  Every other thing done
 * with such a pointer -- stored to memory, passed to a helper or a callee
 * other than as the key/value of an inline array lookup or update, used in
 * arithmetic other than +/- a constant, compared, an atomic on it, a
 * variable offset, an access crossing an 8-byte boundary -- makes the frame
 * escape: the function keeps today's memory frame.  Along the way it follows
 * the pointers an inline lookup in a block-local array returns (and what is
 * derived from them by adding offsets): loads, stores and atomics through
 * them are marked PTX_SPACE_SHARED, for .shared-space instructions on the
 * pointer's shared-window address, which the emitter keeps beside it
 * (shared_def says where it moves); likewise the pointers an inline lookup
 * in an array in device memory returns: PTX_SPACE_GLOBAL, for .global-space
 * instructions.  Both with the address mod 8 where what was added is known
 * mod 8 (constants, and scalars with known low zero bits: `(i & 15) << 4`;
 * values are 8-aligned), so that an access proven aligned needs no run-time
 * alignment test.  It also bounds
 * scalars and what the frame's 4-byte units hold (constants, masks, shifts,
 * sums, products), so that an inline lookup whose key is proven below
 * max_entries needs no bounds test (key_in_range).  The
 * analysis is its own
 * proof (it does not trust the verifier's), so it holds for unverified
 * programs (the conformance cases) too.
 *
 * A promoted frame is one .b64 register per 8-byte slot (%fp0..%fp63, slot
 * s = bytes [8s - 512, 8s - 504) from r10); narrower accesses are bit-field
 * extracts and inserts, so a slot written at one width and read at another
 * reads what memory would hold (little endian).
 */
#ifndef GPUEXT_PTX_STACK_H
#define GPUEXT_PTX_STACK_H

#include <stdint.h>

#include "bpf/err.h"
#include "bpf/prog.h"

/* ptx_stack_use.space: what an instruction's memory operand is. */
enum ptx_stack_space {
	PTX_SPACE_OTHER = 0, /* not provably the frame or the ctx */
	PTX_SPACE_STACK,     /* the function's frame, at off from r10 */
	PTX_SPACE_CTX,       /* the probe's ctx (only read), at byte off */
	PTX_SPACE_SHARED,    /* a block-local array: the block's shared memory;
			      * off as for PTX_SPACE_GLOBAL */
	PTX_SPACE_GLOBAL,    /* a device map's value: global memory; off is the
			      * address mod 8, or -1 when not known */
};

/* ptx_stack_use.shared_def: an ALU64 instruction whose dst is (or stays) a
 * block-local array pointer, so the emitter moves the pointer's
 * shared-window address with it. */
enum ptx_shared_def {
	PTX_SHARED_NONE = 0,
	PTX_SHARED_COPY,    /* dst = src, src the pointer */
	PTX_SHARED_ADD,     /* dst, the pointer, += src or the immediate (-= for SUB) */
	PTX_SHARED_ADD_SRC, /* dst, a scalar, += src, the pointer */
};

/* Per instruction: a load/store's operand; at an inline map call, the key
 * (r2); value (r3) is the update's value. */
struct ptx_stack_use {
	uint8_t space, value_space;
	uint8_t key_in_range; /* an inline map call: the key is proven below
			       * max_entries (in a promoted frame) */
	uint8_t shared_def;   /* enum ptx_shared_def */
	int32_t off, value_off;
};

/* What a call at an instruction reads through its argument registers,
 * filled in by the translator for each helper call. */
struct ptx_stack_call {
	uint8_t nargs;       /* r1..r(nargs) are passed (helpers); 5 for local calls */
	uint8_t inline_map;  /* the call is an inline array lookup/update: r2 is
			      * read as a 4-byte key, r3 as value_bytes */
	uint32_t value_bytes;
	uint32_t max_entries; /* an inline map call's array */
	uint8_t block_array; /* an inline lookup in a block-local array: r0 is
			      * NULL or a generic pointer into shared memory,
			      * 8-aligned (its values are) */
	uint8_t global_value; /* an inline lookup in an array in device memory:
			       * r0 is NULL or an 8-aligned pointer to global
			       * memory (ptx_devmap.h: values 8-aligned) */
	uint8_t atomic_r1;    /* the call updates the word r1 points to
			       * atomically (bpf_gpu_atomic_max): use.space
			       * says its space, as for an atomic instruction */
};

struct ptx_stack {
	int promoted;          /* the frame is registers */
	int ctx_in_regs;       /* ctx fields are read from registers only */
	uint64_t slots;        /* bit s: slot s is accessed */
	struct ptx_stack_use *use; /* per instruction of the program */
};

enum { PTX_STACK_SLOTS = 64 }; /* 512 bytes */

/*
 * Analyse function [start, end) of p.  calls[i] describes the call at
 * instruction i (ignored elsewhere).  ctx_bytes: r1 holds the probe's ctx of
 * that size at the function's start (ctx_in_regs says whether it escaped;
 * a load of it inside one 8-byte word stays PTX_SPACE_CTX); 0: no ctx.
 * st->use must hold p->insn_cnt entries; those of [start, end) are set.
 */
int ptx_stack_analyze(const struct prog *p, size_t start, size_t end,
		      const struct ptx_stack_call *calls, unsigned ctx_bytes, struct ptx_stack *st,
		      struct err *e);

/* Slot register of byte offset off (from r10) and the byte within it. */
static inline unsigned ptx_stack_slot(int32_t off)
{
	return (unsigned)(off + 512) / 8;
}

static inline unsigned ptx_stack_byte(int32_t off)
{
	return (unsigned)(off + 512) % 8;
}

#endif /* GPUEXT_PTX_STACK_H */
