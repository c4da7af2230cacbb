/* SPDX-License-Identifier: MIT */
/*
 * gpu_mem_ops.h - memory policies for CUDA managed memory (struct_ops).
 *
 * A policy is a .bpf.c with programs in SEC("struct_ops/OP") sections and
 * one variable of type struct gpu_mem_ops in SEC(".struct_ops") whose
 * members point to them (libbpf's convention):
 *
 *     SEC("struct_ops/gpu_evict_prepare")
 *     int mru_evict(struct gpu_mem_evict_ctx *ctx) { ... }
 *
 *     SEC(".struct_ops")
 *     struct gpu_mem_ops mru = { .gpu_evict_prepare = (void *)mru_evict };
 *
 * The shapes follow gpu_ext's gpu_mem_ops (prefetch decision per fault,
 * block activate, block access, evict prepare; helpers that move a block to
 * the head or tail of the eviction order and set the prefetch region).
 * Unlike libbpf's BPF_PROG argument array, r1 is the op's ctx struct itself:
 * read-only, 8-byte fields (narrower aligned reads inside one field work).
 * Ops left NULL keep the driver's behaviour.  The same objects run in the
 * simulator (`gpuext sim`) and, later, in the agent over real managed memory
 * (docs/policies.md).
 *
 * Model: managed memory is split into 2 MiB blocks of 512 pages of 4 KiB;
 * 16 pages make a 64 KiB group (32 per block).  GPU memory is given out a
 * block at a time; the eviction list orders the resident blocks, its head
 * is evicted first.  The driver's default (no policy): a block moves to the
 * tail whenever pages migrate into it (LRU by migration order), prefetch is
 * the density tree with a 51% threshold inside the faulting block.
 */
#ifndef GPUEXT_BPF_GPU_MEM_OPS_H
#define GPUEXT_BPF_GPU_MEM_OPS_H

#include <linux/types.h>

#define GPU_MEM_BLOCK_SIZE (2u << 20)
#define GPU_MEM_PAGE_SIZE 4096u
#define GPU_MEM_PAGES_PER_BLOCK 512u
#define GPU_MEM_PAGES_PER_GROUP 16u
#define GPU_MEM_NO_BLOCK (~0ull)

/* What an op returns. */
enum gpu_mem_action {
	GPU_MEM_DEFAULT = 0, /* let the driver do what it does without a policy */
	GPU_MEM_BYPASS = 1,  /* the policy decided: prefetch exactly the region it set,
			      * leave the eviction order as the policy left it */
};

/* gpu_block_activate (the block became resident: it takes GPU memory and
 * joins the eviction list) and gpu_block_access (pages were faulted into an
 * already resident block).  Default for both: move the block to the tail. */
struct gpu_mem_block_ctx {
	__u64 block;          /* block id (what the move helpers take) */
	__u64 va_start;       /* [va_start, va_end): the block's addresses */
	__u64 va_end;
	__u32 pid;            /* owning process */
	__u32 resident_pages; /* 4 KiB pages resident after this fault batch */
	__u64 faults;         /* faults on this block so far, this one included */
	__u64 activations;    /* times the block became resident, this one included */
	__u64 now;            /* fault sequence number: a clock that only faults advance */
	__u32 resident_blocks;     /* blocks resident on the GPU */
	__u32 capacity_blocks;     /* blocks the budget holds */
	__u32 pid_resident_blocks; /* blocks of pid resident */
	__u32 resident_groups;     /* bit g: 64 KiB group g has a resident page */
};

/* gpu_evict_prepare: the budget is full and `needed` blocks must go.  The
 * policy may reorder the candidates (resident blocks not being faulted in
 * this batch) with the move helpers; the runtime then evicts from the head.
 * The return value may ask for more than `needed` (batch eviction): it is
 * clamped to needed .. needed + capacity/4, never the blocks of the batch. */
struct gpu_mem_evict_ctx {
	__u64 now;
	__u32 needed;          /* blocks that must be evicted */
	__u32 nr_candidates;   /* bpf_gpu_evict_candidate(ctx, 0 .. nr-1) */
	__u32 resident_blocks;
	__u32 capacity_blocks;
};

/* gpu_page_prefetch: called for each faulting page of a batch.  region is
 * what the driver would prefetch (its density tree); a policy that returns
 * GPU_MEM_BYPASS prefetches exactly the region it set with
 * bpf_gpu_set_prefetch_region (none if it set none).  Regions are page
 * indices [first, end) inside the block, clamped to [max_first, max_end). */
struct gpu_mem_prefetch_ctx {
	__u64 block;
	__u64 va_start;
	__u64 fault_addr;
	__u32 pid;
	__u32 page_index;      /* faulting page, 0..511 */
	__u32 region_first;    /* the driver's region */
	__u32 region_end;
	__u32 max_first;       /* the block's bounds (the allocation's part of it) */
	__u32 max_end;
	__u64 now;
	__u32 resident_pages;  /* resident in the block before this batch */
	__u32 batch_faults;    /* faulting pages of this block in this batch */
	__u64 faults;          /* faults on this block so far */
};

struct gpu_mem_ops {
	int (*gpu_page_prefetch)(struct gpu_mem_prefetch_ctx *ctx);
	int (*gpu_block_activate)(struct gpu_mem_block_ctx *ctx);
	int (*gpu_block_access)(struct gpu_mem_block_ctx *ctx);
	int (*gpu_evict_prepare)(struct gpu_mem_evict_ctx *ctx);
};

/*
 * Helpers, ids 600..699 (policy helpers; GPU helpers are 500..599, see
 * gpuext_helpers.h and docs/policies.md).  ctx is the op's r1.  Each returns
 * 0 or a negative errno; a bad argument (unknown block, a block that is not
 * resident, a region outside the block) changes nothing.
 */
#ifdef __bpf__
/* Move block to the head (evicted first) or the tail (evicted last). */
static long (*bpf_gpu_block_move_head)(void *ctx, __u64 block) = (void *)600;
static long (*bpf_gpu_block_move_tail)(void *ctx, __u64 block) = (void *)601;
/* gpu_page_prefetch only: prefetch pages [first, end) of the faulting block. */
static long (*bpf_gpu_set_prefetch_region)(void *ctx, __u32 first, __u32 end) = (void *)602;
/* gpu_page_prefetch only: pages in [first, end) of the faulting block that
 * are resident or faulting in this batch (what the driver's tree counts). */
static long (*bpf_gpu_region_count)(void *ctx, __u32 first, __u32 end) = (void *)603;
/* gpu_evict_prepare only: the block id of candidate i (0 = head), or
 * GPU_MEM_NO_BLOCK. */
static __u64 (*bpf_gpu_evict_candidate)(void *ctx, __u32 i) = (void *)604;
/* The pid that owns block (0 when unknown). */
static __u64 (*bpf_gpu_block_pid)(void *ctx, __u64 block) = (void *)605;
/* gpu_block_activate, gpu_block_access, gpu_page_prefetch: bring the whole
 * 2 MiB block holding addr to the GPU ahead of its faults (on the runtime's
 * own stream, after the current batch).  0 when queued or already resident;
 * -ENOENT outside managed memory; -EBUSY when too many are queued. */
static long (*bpf_gpu_prefetch_block)(void *ctx, __u64 addr) = (void *)606;
#endif /* __bpf__: the host includes this header for the structs only */

#endif /* GPUEXT_BPF_GPU_MEM_OPS_H */
