/* SPDX-License-Identifier: MIT */
/*
 * agent_tier.h - the form a kernel's mem probes take (agent_tier.c): pasted
 * at every access, or called; and tiers: a kernel whose pasted form is
 * predicted slow to compile runs the called form first while the pasted
 * one is compiled in the background, then the pasted one, from the first
 * launch after that compile on.
 */
#ifndef GPUEXT_AGENT_TIER_H
#define GPUEXT_AGENT_TIER_H

#include <cuda.h>
#include <stddef.h>

#include "agent_impl.h"

/* How many bytes of a mem probe's PTX a kernel may get pasted, one copy per
 * access (ptx_inject_opts.mem_inline_max), before its accesses call the
 * probe instead (local: a mem program uses local memory). */
size_t agent_mem_inline_max(int local);
/* ptx_inject_opts.mem_run_loop: GPUEXT_PTX_MEM_INLINE=loop. */
int agent_mem_run_loop(void);
/* ptx_inject_opts.mem_wait: GPUEXT_PTX_MEM_WAIT=1 (always) or 0 (never);
 * unset: the injector's choice (docs/ptx-inject.md). */
int agent_mem_wait(void);
/* ptx_inject_opts/ptx_emit_opts.elect_sync: the device is sm_90 or newer
 * (out of loops; GPUEXT_PTX_ELECT=all: in loops too), unless
 * GPUEXT_PTX_ELECT=0 (the lane-mask election, to compare). */
int agent_elect_sync(void);
/* ptx_inject_opts.flat_twin: kernels with block probes get a twin for flat
 * launches, unless GPUEXT_PTX_FLAT=0 (every launch the general form, to
 * compare). */
int agent_flat_twin(void);
/* ptx_inject_opts.mem_simt: a run's accesses probed by as many lanes at
 * once, unless GPUEXT_PTX_MEM_SIMT=0 (the runner one after the other). */
int agent_mem_simt(void);
/* ptx_inject_opts.mem_agg: the lanes' reductions issued once per address
 * and value in regions of at least AGENT_MEM_AGG_MIN accesses;
 * GPUEXT_PTX_MEM_AGG=N at least N (1: every lanes region), =0 nowhere (every
 * lane its own, to compare).  Measured on the H200 (bench/results/
 * 2026-11-22-h200-memtrace-s8.md): reduce's unrolled region of 16 accesses
 * 1.438x -> 1.059x; vecadd's region of 3 (three arrays, no word shared),
 * combined too, 1.305x -> 2.674x: the matches cost there and save nothing. */
#define AGENT_MEM_AGG_MIN 8
unsigned agent_mem_agg(void);
/* ptx_inject_opts.mem_unroll: 4 turns a pass, GPUEXT_PTX_UNROLL=2 two, =8
 * eight, =0 none (the loops as written, to compare). */
unsigned agent_mem_unroll(void);
/* ptx_inject_opts.mem_unroll_in_order: GPUEXT_PTX_UNROLL_ORDER=turns (the
 * unrolled turns in order, not their loads first, to compare). */
int agent_mem_unroll_in_order(void);

/* Tiers on?  GPUEXT_AGENT_TIER unset or 1 (0: off); off too when a form
 * is forced with GPUEXT_PTX_MEM_INLINE. */
int agent_tier_on(void);

/* Is a kernel's pasted form (pasted_len bytes of PTX, called_len for the
 * called form) predicted slow to compile?  (GPUEXT_AGENT_TIER=1: every
 * one is.) */
int agent_tier_slow(size_t pasted_len, size_t called_len);

enum agent_tier_state {
	AGENT_TIER_COMPILING, /* queued, or in the driver */
	AGENT_TIER_BUILT,     /* its library is there (agent_ahead_lib_module) */
	AGENT_TIER_FAILED,    /* the called form stays */
};

/* A kernel's pasted form, compiled in the background. */
struct agent_tier {
	struct agent_tier *next;
	char *text;          /* the pasted form's PTX (the runtime compiled in) */
	char *kernel;        /* its name, for what the agent says */
	CUcontext ctx;       /* where the launches run the called form (NULL: none yet) */
	int state;           /* enum agent_tier_state (atomic) */
	CUfunction fn;       /* the pasted form in ctx, once made (atomic) */
	double ms;           /* its compile */
	unsigned long called_launches; /* launches of the called form after the first */
	int queued;          /* its compile queued (agent_tier_start) */
	int told;
};

/*
 * The tier of pasted text for kernel, whose called form runs in ctx from
 * now on (agent_gpu_lock held): made when there is none for this text;
 * takes text.  *state: what it is now; NULL when out of memory.  A tier
 * COMPILING makes the pasted form's function in ctx when its compile ends,
 * for agent_tier_take.
 */
struct agent_tier *agent_tier_want(char *text, const char *kernel, CUcontext ctx,
				   enum agent_tier_state *state);

/* Queue t's compile on the background thread (agent_ahead_call), once:
 * after the called form is loaded, so that the driver's JIT compiler is
 * loaded before the thread's exit handler is registered for the compile
 * (agent_ahead.c: a compile that outlives the compiler at exit crashes). */
void agent_tier_start(struct agent_tier *t);

/* At a launch of k while its called form runs (k->tier): the pasted form
 * when it is ready (k->inst swapped, k->tier cleared, told once with
 * GPUEXT_AGENT_VERBOSE), nothing while it compiles, k->tier cleared when
 * its compile failed. */
void agent_tier_take(struct agent_kernel *k, struct agent_tier *t);

#endif /* GPUEXT_AGENT_TIER_H */
