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
	size_t label, setp, bra;      /* statements of the module */
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

/*
 * The turns with their loads first.  Written in order, the K turns end in
 * their loads' first use (an add waiting on the memory), so the region
 * after them runs only once the loads are back: K x 4 loads in flight,
 * then the probes, in turn.  Renamed, each register a turn writes gets a
 * fresh name (%PFX_vN) and the turns' instructions depend on each other
 * only through what they compute, so they can go in two parts: the
 * probed loads and what their addresses need first (with each address
 * copied into %PFX_a<j>, j counting the accesses in order), then the
 * region (the caller's), then the rest, then each register the loop
 * writes set from its last name.  Taken where no instruction of the loop
 * is guarded, writes memory or synchronises (nothing a load could be
 * moved across) and every register it writes is declared at the kernel's
 * scope with a type of 16 bits or more; else 0 (the turns in order).
 */
struct ptx_unroll_site {
	size_t stmt;        /* a probed access of the loop */
	uint32_t base, off; /* tokens of its address: [base], [base+off] (off 0: none) */
	int neg;            /* [base-off] */
};
struct ptx_unroll_pipe;

/* 1 and *p: the plan for k turns of loop l of function f, its probed
 * accesses sites (in order); 0: refused; <0: out of memory. */
int ptx_unroll_pipe_plan(const struct ptx_module *m, const struct ptx_func *f,
			 const struct ptx_unroll_loop *l, unsigned k,
			 const struct ptx_unroll_site *sites, size_t nsites, const char *pfx,
			 struct ptx_unroll_pipe **p);
/* A scope's opening with the fresh names, then the loads' part. */
void ptx_unroll_pipe_loads(const struct ptx_unroll_pipe *p, struct ptx_buf *b);
/* The rest, the registers set from their last names, the scope's end. */
void ptx_unroll_pipe_rest(const struct ptx_unroll_pipe *p, struct ptx_buf *b);
void ptx_unroll_pipe_free(struct ptx_unroll_pipe *p);

#endif /* GPUEXT_PTX_UNROLL_H */
