/* SPDX-License-Identifier: MIT */
/*
 * agent_mem_env.h - what `gpuext run --mem-budget` and the agent's memory
 * runtime share: the environment that carries the budget, the policy
 * objects (the agent opens and verifies them itself) and the file the
 * statistics come back in.  No CUDA types: the CLI includes it.
 */
#ifndef GPUEXT_AGENT_MEM_ENV_H
#define GPUEXT_AGENT_MEM_ENV_H

#include <stdint.h>

#define AGENT_MEM_BUDGET_ENV "GPUEXT_MEM_BUDGET" /* bytes */
#define AGENT_MEM_POLICY_ENV "GPUEXT_MEM_POLICY" /* objects joined by ',' (absolute) */
#define AGENT_MEM_STATS_ENV "GPUEXT_MEM_STATS"   /* file the statistics go to at exit */
#define AGENT_MEM_TRACE_ENV "GPUEXT_MEM_TRACE"   /* trace of the device signal (formats.md) */
#define AGENT_MEM_ASYNC_ENV "GPUEXT_MEM_ASYNC_HINTS" /* 1: hints from a thread of the agent's */

/*
 * What the runtime did, written at exit as "name value" lines (X(name)).
 * bytes_to_* are what the runtime asked of the driver; htod/dtoh_bytes
 * and faults, what CUPTI reported; peak_resident_blocks, the model's most GPU blocks at once (the
 * budget holds capacity_blocks).  With the device signal
 * (policies/mem-signal.bpf.c): snapshots taken, pages seen touched in them,
 * how many of those the model did not hold (fed as faults), and touches of
 * managed blocks outside the tracked window (untracked_blocks: blocks).
 * Time on the application's threads: the signal's copies (snapshot_ns,
 * waiting for earlier kernels included), the runtime's fault service
 * (service_ns), of which the driver calls of its hints (hint_ns).
 */
#define AGENT_MEM_STATS(X)                                                     \
	X(budget) X(capacity_blocks)                                           \
	X(allocs) X(alloc_bytes)             /* managed allocations seen */    \
	X(fault_records) X(faults)           /* GPU page-fault records, faults */ \
	X(htod_records) X(dtoh_records)                                        \
	X(htod_bytes) X(dtoh_bytes)          /* what CUPTI saw migrate */      \
	X(dtoh_cpu_bytes)                    /* of which for the CPU's accesses */ \
	X(untracked)                         /* records outside managed memory */ \
	X(batches) X(evictions) X(activations)                                 \
	X(prefetch_calls_gpu) X(prefetch_calls_cpu)                            \
	X(bytes_to_gpu) X(bytes_to_cpu)                                        \
	X(peak_resident_blocks)                                                \
	X(clamped) X(policy_errors) X(driver_errors)                           \
	X(signal_snapshots) X(signal_pages) X(signal_faults) X(untracked_blocks) \
	X(block_prefetches)                  /* whole blocks a policy prefetched */ \
	X(snapshot_ns) X(service_ns) X(hint_ns) /* where the runtime's time goes */

struct agent_mem_stats {
#define AGENT_MEM_FIELD(x) uint64_t x;
	AGENT_MEM_STATS(AGENT_MEM_FIELD)
#undef AGENT_MEM_FIELD
};

#endif /* GPUEXT_AGENT_MEM_ENV_H */
