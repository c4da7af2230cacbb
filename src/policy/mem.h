/* SPDX-License-Identifier: MIT */
/*
 * mem.h - the memory-policy runtime: block table, eviction list, policy
 * programs, fault-batch service.  Used by the UVM simulator (uvm_sim.h) and,
 * next, by the agent over real managed memory (docs/policies.md): both feed
 * fault batches in and act on the migrations that come out through
 * struct mem_rt_backend.
 *
 * Model (include/bpf/gpu_mem_ops.h): 2 MiB blocks of 512 pages of 4 KiB,
 * 64 KiB groups of 16 pages; GPU memory is given out a whole block at a
 * time (UVM's root chunk), so the budget is a number of blocks; the head of
 * the eviction list is evicted first.
 *
 * Prefixes: mem_table_ (blocks), mem_list_ (eviction order), mem_policy_
 * (programs), mem_rt_ (the runtime).
 */
#ifndef GPUEXT_POLICY_MEM_H
#define GPUEXT_POLICY_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/err.h"
#include "bpf/gpu_mem_ops.h"
#include "bpf/helpers.h"
#include "bpf/prog.h"

enum {
	MEM_PAGE_SHIFT = 12,
	MEM_BLOCK_SHIFT = 21,
	MEM_PAGES = 512,       /* per block */
	MEM_GROUP_PAGES = 16,  /* 64 KiB */
	MEM_WORDS = MEM_PAGES / 64,
	MEM_THRESHOLD_PCT = 51, /* uvm_perf_prefetch's density threshold */
};
#define MEM_NIL UINT32_MAX
/* Whole-block prefetches queued per service, at most. */
enum { MEM_RT_AHEAD_MAX = 64 };
/* Blocks one evict_prepare call of mem_rt_trim asks for, at most. */
enum { MEM_RT_TRIM_STEP = 32 };

/* A page bitmap of one block: bit p = page p. */
struct mem_bits {
	uint64_t w[MEM_WORDS];
};

/* Pages of [first, end) set in b. */
uint32_t mem_bits_count(const struct mem_bits *b, uint32_t first, uint32_t end);
void mem_bits_set_range(struct mem_bits *b, uint32_t first, uint32_t end);
static inline int mem_bits_test(const struct mem_bits *b, uint32_t p)
{
	return (int)(b->w[p / 64] >> (p % 64) & 1);
}
static inline void mem_bits_set(struct mem_bits *b, uint32_t p)
{
	b->w[p / 64] |= 1ull << (p % 64);
}
/* Bit g: 64 KiB group g has a page set. */
uint32_t mem_bits_groups(const struct mem_bits *b);

struct mem_block {
	uint64_t va;              /* first address, 2 MiB aligned */
	struct mem_bits resident; /* pages on the GPU */
	uint64_t faults;          /* faulting pages serviced, all batches */
	uint64_t activations;     /* times it became resident */
	uint64_t batch;           /* last batch that faulted on it */
	uint64_t hit_launch;      /* launch + 1 of its last hit passed to the policy */
	uint32_t pid;             /* owner: the pid of its first fault */
	uint32_t resident_pages;
	uint32_t prev, next;      /* eviction list; MEM_NIL at the ends */
	uint32_t touch;           /* its entry in the batch's scratch when batch is current */
	uint8_t on_gpu;           /* holds a GPU block (is on the list) */
};

/*
 * Every block ever faulted on, by id (dense, never freed while the table
 * lives), found by address through an open-addressing hash; the eviction
 * list threads the resident ones, head first.
 */
struct mem_table {
	struct mem_block *blocks;
	uint32_t cnt, cap;
	uint32_t *slots; /* block id + 1, 0 = empty */
	uint32_t slot_mask;
	uint32_t head, tail, list_len;
};

int mem_table_init(struct mem_table *t, struct err *e);
void mem_table_fini(struct mem_table *t);
/* The block holding addr, or MEM_NIL. */
uint32_t mem_table_find(const struct mem_table *t, uint64_t addr);
/* The block holding addr, created (off the GPU, owner pid) when new. */
int mem_table_get(struct mem_table *t, uint64_t addr, uint32_t pid, uint32_t *id,
		  struct err *e);

/* The list: ids must be valid; push/remove change on_gpu. */
void mem_list_push_tail(struct mem_table *t, uint32_t id);
void mem_list_remove(struct mem_table *t, uint32_t id);
void mem_list_move_head(struct mem_table *t, uint32_t id);
void mem_list_move_tail(struct mem_table *t, uint32_t id);

/* The ops of struct gpu_mem_ops, in member order. */
enum mem_op {
	MEM_OP_PREFETCH,
	MEM_OP_ACTIVATE,
	MEM_OP_ACCESS,
	MEM_OP_EVICT,
	MEM_OP_CNT,
};
const char *mem_op_name(enum mem_op op);

/*
 * A policy: one or more objects, each with a SEC(".struct_ops") variable of
 * struct gpu_mem_ops; together they set each op at most once.  Every
 * program is verified (struct_ops profile: mem_policy_helper_proto, the op's
 * ctx size) and JIT-compiled; a program the JIT refuses runs in the
 * interpreter.
 */
struct mem_policy;
/* paths: object files separated by ','; name: for reports (NULL: paths). */
int mem_policy_open(const char *paths, struct mem_policy **out, struct err *e);
void mem_policy_free(struct mem_policy *pol);
const char *mem_policy_name(const struct mem_policy *pol);
/* Run every op in the interpreter from now on (to compare with the JIT). */
void mem_policy_use_interp(struct mem_policy *pol);
/* Which backend runs op (-1 when the op is not set). */
int mem_policy_backend(const struct mem_policy *pol, enum mem_op op);
/* Prototypes the verifier uses for struct_ops programs: the policy helpers
 * (600..699) and the standard map, time, random and printk helpers. */
const struct helper_proto *mem_policy_helper_proto(uint32_t id);
/* Bytes of the ctx of the op called name ("gpu_evict_prepare"), 0 if none
 * is: what `gpuext verify` uses for a struct_ops/OP section. */
uint32_t mem_policy_ctx_size(const char *op);

/* What the runtime asks its user to do: move pages, at block granularity. */
struct mem_rt_backend {
	/* Pages of the block at va set in pages move host -> GPU; `driver`:
	 * those the driver's own fault service moves (the faulting pages'
	 * big pages and its density tree), the rest are the policy's. */
	void (*migrate_in)(void *arg, uint64_t va, const struct mem_bits *pages,
			   const struct mem_bits *driver);
	/* The block at va leaves the GPU; pages were resident. */
	void (*evict)(void *arg, uint64_t va, const struct mem_bits *pages);
	/* The 2 MiB block at va holds memory the runtime may name (managed
	 * memory; the trace's blocks): where a policy's block prefetch may go.
	 * NULL: every block. */
	int (*covers)(void *arg, uint64_t va);
	/* An oracle (the simulator's reference row): when block id (at va) is
	 * used next, larger is later.  Set: evictions ignore the list and take
	 * the block used furthest in the future (Belady's MIN). */
	uint64_t (*next_use)(void *arg, uint32_t id, uint64_t va);
	void *arg;
};

struct mem_rt_stats {
	uint64_t batches;
	uint64_t faults;            /* faulting pages serviced */
	uint64_t pages_in;          /* faulted + prefetched */
	uint64_t pages_prefetched;
	uint64_t pages_out;
	uint64_t evictions;         /* blocks */
	uint64_t activations;
	uint64_t policy_calls;
	uint64_t hit_calls;         /* hits given to gpu_block_access (rt->hits) */
	uint64_t policy_errors;     /* a program failed to run: default used */
	uint64_t clamped;           /* requests refused or cut to what is allowed */
	uint64_t block_prefetches;  /* whole blocks prefetched (bpf_gpu_prefetch_block) */
};

struct mem_fault {
	uint64_t addr;
	uint32_t pid;
};

struct mem_rt {
	struct mem_table table;
	uint32_t capacity;        /* blocks the budget holds (>= 1) */
	struct mem_policy *pol;   /* NULL: the driver's defaults; not owned */
	struct mem_rt_backend be;
	struct mem_rt_stats st;
	/* Pages the driver's fault service moves around a faulting page, an
	 * aligned power of two: MEM_GROUP_PAGES (its 64 KiB big page, what the
	 * H200 with driver 580 moves: bench/results/2026-11-22-h200-mem-policies.md)
	 * unless set otherwise after mem_rt_init; 1 moves only the page. */
	uint32_t fault_pages;
	/* The budget holds at kernel boundaries (mem_rt_trim), not within a
	 * service: what a trace of kernels' touches (the device signal) says
	 * happened, all of it resident while the kernel ran.  Off: room is
	 * made for each block as it faults (the driver's own behaviour). */
	int defer_evict;
	uint64_t batch;           /* sequence number of the batch in service */
	uint64_t now;             /* faults so far (the ctx's clock) */
	/* Hits reach the policy: the signal is complete (the device's), so a
	 * resident block a launch touched without faulting is an access too.
	 * Off: what the driver sees (faults only). */
	int hits;
	/* Blocks resident per pid (pid-quota): a small linear table. */
	struct { uint32_t pid, blocks; } *pids;
	uint32_t pid_cnt;
	/* Scratch of the batch in service; batch_listed: how many of its
	 * blocks are on the list (the rest of the list are the candidates). */
	struct mem_rt_touch *touch;
	uint32_t batch_listed;
	uint32_t touch_cnt, touch_cap;
	/* Whole-block prefetches the policy asked for (bpf_gpu_prefetch_block),
	 * done at the end of the next mem_rt_service, after its faults. */
	uint64_t ahead[MEM_RT_AHEAD_MAX];
	uint32_t ahead_pid[MEM_RT_AHEAD_MAX];
	uint32_t ahead_cnt;
};

int mem_rt_init(struct mem_rt *rt, uint32_t capacity_blocks, struct mem_policy *pol,
		const struct mem_rt_backend *be, struct err *e);
void mem_rt_fini(struct mem_rt *rt);
/*
 * Service one fault batch: faulting pages in the order reported
 * (duplicates and pages already resident are dropped).  Per block: the
 * prefetch region (driver tree or policy), a GPU block for it (evicting by
 * the list, after the policy's evict_prepare), activate/access, migration.
 * Then the whole-block prefetches the policy queued (during this service
 * or the hits since the last): each block not already resident in full
 * gets a GPU block (never by evicting one faulting in this batch) and all
 * its pages, pushed to the tail (no activate op: a prefetch does not
 * prefetch further on its own).
 * A policy never breaks the model: bad helper arguments are refused,
 * regions clamped to the block, eviction counts clamped; a program that
 * fails to run leaves the default.  Errors are only out of memory.
 */
int mem_rt_service(struct mem_rt *rt, const struct mem_fault *faults, size_t n,
		   struct err *e);
/*
 * A kernel boundary under defer_evict: evict down to the budget by the
 * list, after the policy's evict_prepare (asked for at most
 * MEM_RT_TRIM_STEP blocks at a time; every resident block is a candidate).
 * 0, or -ENOMEM.
 */
int mem_rt_trim(struct mem_rt *rt, struct err *e);
/* Block prefetches are queued (mem_rt_service with no faults does them). */
static inline int mem_rt_ahead_pending(const struct mem_rt *rt)
{
	return rt->ahead_cnt != 0;
}
/*
 * Launch `launch` accessed the resident page of addr without a fault.  With
 * rt->hits, the first such access of a block in a launch calls the
 * policy's gpu_block_access (default: move to the tail); without a policy
 * op, or without rt->hits, nothing changes (the driver sees no hits).  0,
 * or -ENOMEM.
 */
int mem_rt_hit(struct mem_rt *rt, uint64_t addr, uint32_t launch, struct err *e);
/* The page of addr is on the GPU. */
int mem_rt_resident(const struct mem_rt *rt, uint64_t addr);
/*
 * The memory of block `va` was freed by the application: it leaves the
 * list without an eviction (nothing is migrated, nothing is counted), its
 * counts start again.  The agent calls it when no live allocation covers
 * the block any more.  Not to be called during mem_rt_service.
 */
void mem_rt_forget(struct mem_rt *rt, uint64_t va);

#endif /* GPUEXT_POLICY_MEM_H */
