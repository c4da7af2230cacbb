/* SPDX-License-Identifier: MIT */
/*
 * ptx_unroll.h - counted loops the injector may unroll (internal to
 * src/ptx).
 *
 * ptxas unrolls a short loop of loads only while nothing else is in it: a
 * mem probe's region inside keeps the loop as written, with as few loads
 * in flight a warp as one turn has (reduce's loop: 16 loads uninstrumented,
 * 4 probed).  So the injector unrolls such a loop itself, K turns back to
 * back with one region after them, leaving the original, probed as
 * before, to the turns that remain.  The shape recognised is
 * NVVM's counted loop: one straight line from a label to
 *
 *	setp.ne.TYPE P, X, BOUND;                (or BOUND, X; or eq with @!P)
 *	@P bra LABEL;
 *
 * where X is written once in the loop, either as the counter itself,
 * `add.{s,u}{32,64} X, X, STEP` (or sub), or as `add X, CNT, INV` after
 * the counter's one update `add CNT, CNT, STEP`; STEP a constant other
 * than 0, BOUND and INV constants or registers the loop does not write.
 * Then X after turn j is X0 + j * STEP, with X0 = CNT + INV at the loop's
 * head; with D the distance left to BOUND in the counter's direction
 * (X0 - BOUND counting down, BOUND - X0 counting up, unsigned, modulo
 * 2^width) and C = |STEP|, the loop runs K more turns at least whenever
 * D >= K * C: turn j < K ends with a distance D - j * C > 0.  Everything
 * else is refused (left as it is).
 */
#ifndef GPUEXT_PTX_UNROLL_H
#define GPUEXT_PTX_UNROLL_H

#include <stddef.h>
#include <stdint.h>

#include "ptx_buf.h"

struct ptx_module;
struct ptx_func;

struct ptx_unroll_loop {
	size_t label, add, setp, bra; /* statements of the module */
	uint32_t cnt;                 /* token: the counter register */
	uint32_t inv, ninv;           /* tokens: INV (ninv 0: X is CNT) */
	uint32_t bound, nbound;       /* tokens: the bound (register or constant) */
	int down;                     /* the counter steps towards BOUND from above */
	unsigned long long step;      /* C, > 0 */
	unsigned bits;                /* 32 or 64 */
};

/* 1 and *l when statement i of function f is the label of a loop of that
 * shape; else 0. */
int ptx_unroll_loop_at(const struct ptx_module *m, const struct ptx_func *f, size_t i,
		       struct ptx_unroll_loop *l);

/* Can the loop's K turns in a row be checked (K * C fits the counter)? */
int ptx_unroll_fits(const struct ptx_unroll_loop *l, unsigned k);

/* The test at the loop's label: fewer than k turns to go for sure
 * (D < k * C): a branch to label `rest` (registers named from pfx, in a
 * scope of their own). */
void ptx_unroll_head(const struct ptx_module *m, const struct ptx_unroll_loop *l, unsigned k,
		     const char *pfx, const char *rest, struct ptx_buf *b);

/* The loop's back edge `@P bra LABEL;` to `to` instead (same guard). */
void ptx_unroll_branch(const struct ptx_module *m, const struct ptx_unroll_loop *l,
		       const char *to, struct ptx_buf *b);

#endif /* GPUEXT_PTX_UNROLL_H */
