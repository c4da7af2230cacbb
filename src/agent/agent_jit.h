/* SPDX-License-Identifier: MIT */
/*
 * agent_jit.h - instrumented PTX to a loaded module (agent_jit.c), and where
 * a first launch's time goes.
 */
#ifndef GPUEXT_AGENT_JIT_H
#define GPUEXT_AGENT_JIT_H

#include <cuda.h>
#include <time.h>

#include "bpf/err.h"

/* Where a first launch's time goes (GPUEXT_AGENT_VERBOSE), in ms. */
struct agent_timing {
	double init;   /* the device side, once: context, device maps */
	double inject; /* PTX extraction, probe translation, parse, inject */
	double jit;    /* the driver's JIT compile (CU_JIT_WALL_TIME) */
	double load;   /* the rest of cuModuleLoadDataEx */
	const char *runtime; /* how the device runtime got in */
	const char *cache;   /* what the module cache did (ptx_cache.h) */
	char mem[96];        /* how mem probes got in: inline or called; "": none */
	int flat;            /* the module has the kernel's flat twin (ptx_inject.h) */
};

static inline double agent_ms_between(const struct timespec *t0, const struct timespec *t1)
{
	return (double)(t1->tv_sec - t0->tv_sec) * 1e3 + (double)(t1->tv_nsec - t0->tv_nsec) / 1e6;
}

static inline double agent_ms_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return agent_ms_between(t0, &t1);
}

/*
 * Turn instrumented PTX into a loaded module in the current context
 * (*mod).  Linked with the prebuilt runtime (linked): the cubin from the
 * module cache when it has one for exactly this PTX, GPU, driver and JIT
 * options; else compiled by the driver's JIT linker and stored there.  A
 * cache entry that is not valid, or that the driver refuses, is named once
 * and compiled over.  Not linked: the module of a library compiled ahead
 * from the same text when there is one, else cuModuleLoadDataEx (the
 * driver's own cache).  With no device side yet (compiles ahead with no
 * context): compiled into such a library, *mod NULL.
 */
int agent_jit_load(const char *text, int linked, CUmodule *mod, struct agent_timing *tm,
		   struct err *e);

#endif /* GPUEXT_AGENT_JIT_H */
