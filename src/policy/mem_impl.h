/* SPDX-License-Identifier: MIT */
/*
 * mem_impl.h - what the runtime's files share (mem_policy.c, mem_helpers.c,
 * mem_runtime.c); not part of mem.h's interface.
 */
#ifndef GPUEXT_POLICY_MEM_IMPL_H
#define GPUEXT_POLICY_MEM_IMPL_H

#include "mem.h"

/* The largest ctx; the verifier's struct_ops ctx (12 u64) bounds them all. */
enum { MEM_CTX_MAX = 96 };

/*
 * One call of an op.  The ctx comes first, so a helper given the ctx (the
 * verifier proves it is r1 unchanged) finds the call, hence the runtime,
 * without any global state.
 */
struct mem_call {
	union {
		struct gpu_mem_block_ctx block;
		struct gpu_mem_evict_ctx evict;
		struct gpu_mem_prefetch_ctx prefetch;
		uint8_t raw[MEM_CTX_MAX];
	} ctx;
	struct mem_rt *rt;
	enum mem_op op;
	uint32_t block;                 /* the block the call is about, or MEM_NIL */
	const struct mem_bits *counted; /* prefetch: resident | faulting pages */
	int region_set;                 /* prefetch: bpf_gpu_set_prefetch_region was called */
	uint32_t region_first, region_end;
};

/* Bytes of each op's ctx. */
uint32_t mem_op_ctx_size(enum mem_op op);

/* Is op set in pol (pol may be NULL)? */
int mem_policy_has(const struct mem_policy *pol, enum mem_op op);
/* Run the op's program on call; 0 with r0, or -1 when it could not run
 * (counted in the stats; the caller keeps the default). */
int mem_policy_call(struct mem_policy *pol, struct mem_call *call, uint64_t *r0);

/* Put the policy helpers (ids 600..) into t. */
void mem_helpers_install(struct helper_table *t);

#endif /* GPUEXT_POLICY_MEM_IMPL_H */
