/* SPDX-License-Identifier: MIT */
/*
 * agent_mem.h - memory policies over the application's real managed memory
 * (agent_mem.c; docs/policies.md "The agent side").
 */
#ifndef GPUEXT_AGENT_MEM_H
#define GPUEXT_AGENT_MEM_H

#include <stdint.h>

#include <cuda.h>

#include "bpf/err.h"
#include "bpf/gpuext_cupti.h"
#include "agent_mem_env.h"

/* The driver calls the runtime makes and where its messages go (the
 * agent's, or a test's: unit tests link agent_mem.o without the agent's
 * hooks). */
struct agent_mem_driver {
	CUresult (*prefetch)(CUdeviceptr va, size_t len, CUmemLocation loc, unsigned flags,
			     CUstream s);
	CUresult (*stream_create)(CUstream *s, unsigned flags);
	CUresult (*ctx_set_current)(CUcontext c);
	CUresult (*ctx_get_current)(CUcontext *c);
	CUresult (*ctx_get_device)(CUdevice *d);
	/* One message for a person (the agent's notice). */
	__attribute__((format(printf, 1, 2))) void (*notice)(const char *fmt, ...);
};


/*
 * Start the runtime: budget in bytes, policy paths (NULL or "": the
 * driver-like defaults, LRU and the density tree), the driver's calls.
 * Errors leave the runtime off (the application runs on).
 */
int agent_mem_setup(uint64_t budget, const char *policies, const struct agent_mem_driver *drv,
		    struct err *e);
/* Stop it and free everything (tests; the agent keeps it for the process). */
void agent_mem_teardown(void);
int agent_mem_active(void);
/* The application allocated (freed) managed memory. */
void agent_mem_alloc(uint64_t va, uint64_t len);
void agent_mem_free(uint64_t va);
/* A CUPTI unified-memory record (from the CUPTI thread). */
void agent_mem_uvm(const struct gpuext_cupti_uvm *r);
/* Service the faults still queued. */
void agent_mem_flush(void);
/* Hints through a thread of the agent's (on) or made by the thread that
 * services the faults (off, the default; stops the thread, dropping what
 * it has not sent yet). */
void agent_mem_async_hints(int on);
/* Wait until the hint thread has sent every queued hint. */
void agent_mem_hints_drain(void);
void agent_mem_stats_get(struct agent_mem_stats *st);

/*
 * The device access signal (agent_mem_signal.c, policies/mem_signal.h).
 * trace: keep every touch the device reports, for agent_mem_trace_write.
 * window: the tracked window over the managed ranges, at most max_blocks
 * 2 MiB blocks from *base (-1: no managed memory yet).  touched: the pages
 * (addresses, in order) the device saw touched in snapshot `snapshot`: the
 * model's missing ones are serviced as faults, in batches that end with
 * the snapshot; from the first call on, CUPTI's records are only counted.
 */
void agent_mem_trace(int on);
int agent_mem_window(uint32_t max_blocks, uint64_t *base, uint32_t *blocks);
void agent_mem_touched(const uint64_t *addrs, size_t n, uint32_t snapshot, uint64_t ts_ns);
/* A snapshot's copies took ns (waiting for the kernels before it included). */
void agent_mem_snapshot_time(uint64_t ns);
/* CLOCK_MONOTONIC in ns: the statistics' clock. */
uint64_t agent_mem_now_ns(void);
/* Write the recorded trace (binary, docs/formats.md). */
int agent_mem_trace_write(const char *path, struct err *e);

#endif /* GPUEXT_AGENT_MEM_H */
