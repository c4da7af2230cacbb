/* SPDX-License-Identifier: MIT */
/*
 * uvm_sim.h - the trace-driven UVM simulator: traces (binary and text,
 * docs/formats.md), synthetic workload generators, and the simulation of
 * fault batches, migrations and link time under a memory budget with any
 * policy (mem.h).
 *
 * Prefixes: uvm_trace_ (traces), uvm_gen_ (generators), uvm_sim_ (the
 * simulator).
 */
#ifndef GPUEXT_POLICY_UVM_SIM_H
#define GPUEXT_POLICY_UVM_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "mem.h"

/* An access as recorded by a tool (uvmtrace: a fault; memtrace: an access). */
enum uvm_access {
	UVM_ACCESS_READ = 0, UVM_ACCESS_WRITE = 1, UVM_ACCESS_ATOMIC = 2,
	/* not an access: the 2 MiB block holding addr is managed memory (what a
	 * whole-block prefetch may name; the agent's traces list every block
	 * of each managed allocation) */
	UVM_ACCESS_MANAGED = 3,
};
/* Their letters in the text form, by value. */
#define UVM_ACCESS_LETTERS "rwam"

struct uvm_rec {
	uint64_t addr;
	uint64_t ts_ns;
	uint32_t launch; /* kernel launch id: a batch never spans two */
	uint32_t pid;
	uint8_t access;  /* enum uvm_access */
};

struct uvm_trace {
	struct uvm_rec *recs;
	size_t cnt, cap;
};

/* The binary form (docs/formats.md): a 32-byte header, 32-byte records. */
#define UVM_TRACE_MAGIC "GPXUVMTR"
enum { UVM_TRACE_VERSION = 1, UVM_TRACE_HDR_SIZE = 32, UVM_TRACE_REC_SIZE = 32 };

int uvm_trace_append(struct uvm_trace *t, const struct uvm_rec *r, struct err *e);
void uvm_trace_free(struct uvm_trace *t);
/* Read a binary or text trace (told apart by the magic); errors name the
 * file and the record or line. */
int uvm_trace_read(const char *path, struct uvm_trace *t, struct err *e);
/* Parse the text form from memory (name for messages). */
int uvm_trace_parse_text(const char *text, size_t len, const char *name, struct uvm_trace *t,
			 struct err *e);
int uvm_trace_write(const char *path, const struct uvm_trace *t, int text, struct err *e);
/* Bytes of the distinct 2 MiB blocks the trace touches. */
uint64_t uvm_trace_footprint(const struct uvm_trace *t);
/* Those blocks' numbers (address >> 21), ascending, in *n (malloc'd; NULL
 * when out of memory). */
uint64_t *uvm_trace_blocks(const struct uvm_trace *t, size_t *n);

/* Synthetic workloads (docs/policies.md describes each). */
struct uvm_gen_opts {
	const char *pattern;   /* seq, random, moe, decode, dnn, mix */
	uint64_t size;         /* footprint, bytes (rounded up to 2 MiB) */
	uint64_t seed;
	uint32_t passes;       /* about passes * size / 4 KiB accesses */
	uint32_t ns_per_access; /* compute time between accesses */
};
int uvm_gen(const struct uvm_gen_opts *o, struct uvm_trace *t, struct err *e);
/* The pattern names and one-line descriptions, NULL-terminated. */
extern const char *const uvm_gen_patterns[][2];

/*
 * The link and driver cost model.  Defaults (docs/policies.md gives the
 * sources): 50 GB/s each way (PCIe 5.0 x16: 32 GT/s x 16 lanes x 128/130 =
 * 63 GB/s per direction, at the ~80% DMA efficiency of pinned copies),
 * 30 us of driver work per fault batch, 200 ns per faulting page.
 */
struct uvm_link {
	double htod_gbps, dtoh_gbps; /* GB/s = 1e9 bytes/s */
	double batch_us;
	double fault_ns;
};
#define UVM_LINK_DEFAULT ((struct uvm_link){50.0, 50.0, 30.0, 200.0})
enum { UVM_BATCH_MAX = 256 }; /* faults the driver services per batch */

struct uvm_sim_opts {
	uint64_t budget;      /* bytes of GPU memory for managed data */
	uint32_t batch_max;   /* 0: UVM_BATCH_MAX */
	int hits;             /* hits reach the policy (mem_rt_hit): a trace of
			       * every access, as the device signal records */
	uint32_t fault_pages; /* pages a fault moves (mem_rt.fault_pages); 0: its default */
	/* Evict the block used furthest in the future (Belady's MIN, from the
	 * trace itself) instead of by a policy: the fewest bytes any eviction
	 * order moves with the driver's prefetch, a reference, not a policy. */
	int optimal;
	struct uvm_link link;
};

struct uvm_sim_result {
	struct mem_rt_stats st;
	uint64_t accesses, hits, dup_faults;
	uint64_t bytes_htod, bytes_dtoh;
	double compute_s, overhead_s, transfer_s, total_s;
	int backend[MEM_OP_CNT]; /* mem_policy_backend of each op */
};

/* Simulate t under o with pol (NULL: the driver's defaults). */
int uvm_sim_run(const struct uvm_trace *t, const struct uvm_sim_opts *o,
		struct mem_policy *pol, struct uvm_sim_result *r, struct err *e);

#endif /* GPUEXT_POLICY_UVM_SIM_H */
