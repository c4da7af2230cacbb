/* SPDX-License-Identifier: MIT */
/*
 * mem_helpers.c - the policy helpers (ids 600..) and the helper profile of
 * struct_ops programs.
 *
 * A policy advises, the runtime decides: every helper checks its arguments
 * against the model (the block exists and is on the list, the call is the
 * op the helper belongs to, the region lies in the block) and refuses
 * anything else with -EINVAL, counted in mem_rt_stats.clamped.  Nothing a
 * program passes can make the list or the bitmaps inconsistent.
 */
#include <errno.h>

#include "mem_impl.h"

#define CALL(r) ((struct mem_call *)(uintptr_t)(r))
#define RET_ERR(call, errnum) ((call)->rt->st.clamped++, (uint64_t)(int64_t)-(errnum))

/* A block id the move helpers may take: known and on the eviction list. */
static int mem_helper_listed(const struct mem_call *call, uint64_t block)
{
	const struct mem_table *t = &call->rt->table;
	return block < t->cnt && t->blocks[block].on_gpu;
}

static uint64_t mem_helper_move_head(uint64_t ctx, uint64_t block, uint64_t r3, uint64_t r4,
				     uint64_t r5)
{
	struct mem_call *call = CALL(ctx);

	if (!mem_helper_listed(call, block))
		return RET_ERR(call, EINVAL);
	mem_list_move_head(&call->rt->table, (uint32_t)block);
	return 0;
}

static uint64_t mem_helper_move_tail(uint64_t ctx, uint64_t block, uint64_t r3, uint64_t r4,
				     uint64_t r5)
{
	struct mem_call *call = CALL(ctx);

	if (!mem_helper_listed(call, block))
		return RET_ERR(call, EINVAL);
	mem_list_move_tail(&call->rt->table, (uint32_t)block);
	return 0;
}

/* The region is clamped to the block's bounds; an empty one prefetches nothing. */
static uint64_t mem_helper_set_prefetch_region(uint64_t ctx, uint64_t first, uint64_t end,
					       uint64_t r4, uint64_t r5)
{
	struct mem_call *call = CALL(ctx);
	const struct gpu_mem_prefetch_ctx *c = &call->ctx.prefetch;

	if (call->op != MEM_OP_PREFETCH)
		return RET_ERR(call, EINVAL);
	uint32_t f = (uint32_t)first, n = (uint32_t)end;
	if (f < c->max_first || n > c->max_end || f > n || first > UINT32_MAX ||
	    end > UINT32_MAX) {
		call->rt->st.clamped++;
		f = f < c->max_first ? c->max_first : f;
		n = end > c->max_end ? c->max_end : n;
		if (f > n)
			f = n;
	}
	call->region_set = 1;
	call->region_first = f;
	call->region_end = n;
	return 0;
}

static uint64_t mem_helper_region_count(uint64_t ctx, uint64_t first, uint64_t end,
					uint64_t r4, uint64_t r5)
{
	struct mem_call *call = CALL(ctx);

	if (call->op != MEM_OP_PREFETCH || first > end || end > MEM_PAGES)
		return RET_ERR(call, EINVAL);
	return mem_bits_count(call->counted, (uint32_t)first, (uint32_t)end);
}

/* Candidates: the listed blocks not faulting in this batch, from the head. */
static uint64_t mem_helper_evict_candidate(uint64_t ctx, uint64_t i, uint64_t r3, uint64_t r4,
					   uint64_t r5)
{
	struct mem_call *call = CALL(ctx);
	const struct mem_table *t = &call->rt->table;

	if (call->op != MEM_OP_EVICT || i >= call->ctx.evict.nr_candidates) {
		call->rt->st.clamped++;
		return GPU_MEM_NO_BLOCK;
	}
	/* From the nearer end: MRU-like policies ask for the last ones. */
	uint64_t n = call->ctx.evict.nr_candidates;
	if (i < n / 2) {
		for (uint32_t id = t->head; id != MEM_NIL; id = t->blocks[id].next)
			if (t->blocks[id].batch != call->rt->batch && i-- == 0)
				return id;
	} else {
		i = n - 1 - i;
		for (uint32_t id = t->tail; id != MEM_NIL; id = t->blocks[id].prev)
			if (t->blocks[id].batch != call->rt->batch && i-- == 0)
				return id;
	}
	return GPU_MEM_NO_BLOCK;
}

static uint64_t mem_helper_block_pid(uint64_t ctx, uint64_t block, uint64_t r3, uint64_t r4,
				     uint64_t r5)
{
	struct mem_call *call = CALL(ctx);

	if (block >= call->rt->table.cnt) {
		call->rt->st.clamped++;
		return 0;
	}
	return call->rt->table.blocks[block].pid;
}

/* Queue a whole-block prefetch (mem_rt_service does it).  Asking for a
 * block outside the memory the runtime may name, or one already resident
 * or queued, is no misuse (a scan's policy does not know where the memory
 * ends): not counted as clamped. */
static uint64_t mem_helper_prefetch_block(uint64_t ctx, uint64_t addr, uint64_t r3, uint64_t r4,
					  uint64_t r5)
{
	struct mem_call *call = CALL(ctx);
	struct mem_rt *rt = call->rt;
	uint64_t va = addr & ~((1ull << MEM_BLOCK_SHIFT) - 1);

	if (call->op == MEM_OP_EVICT)
		return RET_ERR(call, EINVAL);
	if (rt->be.covers && !rt->be.covers(rt->be.arg, va))
		return (uint64_t)(int64_t)-ENOENT;
	uint32_t id = mem_table_find(&rt->table, va);
	if (id != MEM_NIL && rt->table.blocks[id].resident_pages == MEM_PAGES)
		return 0;
	for (uint32_t i = 0; i < rt->ahead_cnt; i++)
		if (rt->ahead[i] == va)
			return 0;
	if (rt->ahead_cnt == MEM_RT_AHEAD_MAX)
		return (uint64_t)(int64_t)-EBUSY;
	rt->ahead_pid[rt->ahead_cnt] = call->op == MEM_OP_PREFETCH ? call->ctx.prefetch.pid
								   : call->ctx.block.pid;
	rt->ahead[rt->ahead_cnt++] = va;
	return 0;
}

#define CTX_SCALAR {ARG_PTR_TO_CTX, ARG_SCALAR}
#define CTX_SCALAR2 {ARG_PTR_TO_CTX, ARG_SCALAR, ARG_SCALAR}
static const struct helper_proto mem_helper_protos[] = {
	{600, "gpu_block_move_head", mem_helper_move_head, RET_INTEGER, CTX_SCALAR, HELPER_F_HOST},
	{601, "gpu_block_move_tail", mem_helper_move_tail, RET_INTEGER, CTX_SCALAR, HELPER_F_HOST},
	{602, "gpu_set_prefetch_region", mem_helper_set_prefetch_region, RET_INTEGER, CTX_SCALAR2,
	 HELPER_F_HOST},
	{603, "gpu_region_count", mem_helper_region_count, RET_INTEGER, CTX_SCALAR2, HELPER_F_HOST},
	{604, "gpu_evict_candidate", mem_helper_evict_candidate, RET_INTEGER, CTX_SCALAR,
	 HELPER_F_HOST},
	{605, "gpu_block_pid", mem_helper_block_pid, RET_INTEGER, CTX_SCALAR, HELPER_F_HOST},
	{606, "gpu_prefetch_block", mem_helper_prefetch_block, RET_INTEGER, CTX_SCALAR,
	 HELPER_F_HOST},
};
enum { MEM_HELPER_CNT = sizeof(mem_helper_protos) / sizeof(mem_helper_protos[0]) };

void mem_helpers_install(struct helper_table *t)
{
	for (size_t i = 0; i < MEM_HELPER_CNT; i++)
		t->fn[mem_helper_protos[i].id] = mem_helper_protos[i].fn;
}

/* Standard helpers a policy may call: maps, time, random numbers, printk.
 * Nothing that reads process memory or identity: a policy runs on behalf
 * of the runtime, not of the process that faulted. */
static const uint32_t mem_std_helpers[] = {
	HELPER_MAP_LOOKUP_ELEM, HELPER_MAP_UPDATE_ELEM, HELPER_MAP_DELETE_ELEM,
	HELPER_KTIME_GET_NS,    HELPER_GET_PRANDOM_U32, HELPER_TRACE_PRINTK,
};

const struct helper_proto *mem_policy_helper_proto(uint32_t id)
{
	if (id >= HELPER_POLICY_FIRST && id < HELPER_POLICY_FIRST + MEM_HELPER_CNT)
		return &mem_helper_protos[id - HELPER_POLICY_FIRST];
	for (size_t i = 0; i < sizeof(mem_std_helpers) / sizeof(mem_std_helpers[0]); i++)
		if (mem_std_helpers[i] == id)
			return helper_proto_find(id);
	return NULL;
}
