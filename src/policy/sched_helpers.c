/* SPDX-License-Identifier: MIT */
/*
 * sched_helpers.c - the scheduling helpers (ids 620..) and the helper
 * profile of scheduling programs.
 *
 * The settings helpers only record a value in the tenant's settings (they
 * take effect through the process's environment, see sched_export_env);
 * each belongs to one op and refuses to run from another, and every value
 * is range-checked, so a policy cannot hand CUDA or the driver something
 * the runtime did not check.
 */
#include <errno.h>

#include "sched_impl.h"

#define CALL(r) ((struct sched_call *)(uintptr_t)(r))
#define EINVAL_RET ((uint64_t)(int64_t)-EINVAL)

static uint64_t sched_helper_sm_share(uint64_t ctx, uint64_t pct, uint64_t r3, uint64_t r4,
				      uint64_t r5)
{
	struct sched_call *c = CALL(ctx);
	if (c->op != SCHED_OP_TASK_INIT || pct < 1 || pct > 100)
		return EINVAL_RET;
	c->set->sm_pct = (uint32_t)pct;
	return 0;
}

static uint64_t sched_helper_timeslice(uint64_t ctx, uint64_t us, uint64_t r3, uint64_t r4,
				       uint64_t r5)
{
	struct sched_call *c = CALL(ctx);
	if (c->op != SCHED_OP_TASK_INIT || us < 1 || us > 10000000)
		return EINVAL_RET;
	c->set->timeslice_us = us;
	return 0;
}

static uint64_t sched_helper_interleave(uint64_t ctx, uint64_t level, uint64_t r3, uint64_t r4,
					uint64_t r5)
{
	struct sched_call *c = CALL(ctx);
	if (c->op != SCHED_OP_TASK_INIT || level > GPU_SCHED_IL_HIGH)
		return EINVAL_RET;
	c->set->interleave = (int32_t)level;
	return 0;
}

static uint64_t sched_helper_stream_prio(uint64_t ctx, uint64_t level, uint64_t r3, uint64_t r4,
					 uint64_t r5)
{
	struct sched_call *c = CALL(ctx);
	if (c->op != SCHED_OP_TASK_INIT || level > 5)
		return EINVAL_RET;
	c->set->stream_prio = (uint32_t)level;
	return 0;
}

static uint64_t sched_helper_delay(uint64_t ctx, uint64_t us, uint64_t r3, uint64_t r4,
				   uint64_t r5)
{
	struct sched_call *c = CALL(ctx);
	if (c->op != SCHED_OP_LAUNCH_ADMIT)
		return EINVAL_RET;
	c->delay_us = us; /* capped by the hold limit where it is used */
	return 0;
}

#define CTX_SCALAR {ARG_PTR_TO_CTX, ARG_SCALAR}
static const struct helper_proto sched_helper_protos[] = {
	{620, "gpu_set_sm_share", sched_helper_sm_share, RET_INTEGER, CTX_SCALAR, HELPER_F_HOST},
	{621, "gpu_set_timeslice", sched_helper_timeslice, RET_INTEGER, CTX_SCALAR, HELPER_F_HOST},
	{622, "gpu_set_interleave", sched_helper_interleave, RET_INTEGER, CTX_SCALAR,
	 HELPER_F_HOST},
	{623, "gpu_set_stream_priority", sched_helper_stream_prio, RET_INTEGER, CTX_SCALAR,
	 HELPER_F_HOST},
	{624, "gpu_sched_delay", sched_helper_delay, RET_INTEGER, CTX_SCALAR, HELPER_F_HOST},
};
enum {
	SCHED_HELPER_FIRST = 620,
	SCHED_HELPER_CNT = sizeof(sched_helper_protos) / sizeof(sched_helper_protos[0]),
};

void sched_helpers_install(struct helper_table *t)
{
	for (size_t i = 0; i < SCHED_HELPER_CNT; i++)
		t->fn[sched_helper_protos[i].id] = sched_helper_protos[i].fn;
}

/* Standard helpers a policy may call: maps, time, random numbers, printk
 * (the same set as the memory policies'). */
static const uint32_t sched_std_helpers[] = {
	HELPER_MAP_LOOKUP_ELEM, HELPER_MAP_UPDATE_ELEM, HELPER_MAP_DELETE_ELEM,
	HELPER_KTIME_GET_NS,    HELPER_GET_PRANDOM_U32, HELPER_TRACE_PRINTK,
};

const struct helper_proto *sched_policy_helper_proto(uint32_t id)
{
	if (id >= SCHED_HELPER_FIRST && id < SCHED_HELPER_FIRST + SCHED_HELPER_CNT)
		return &sched_helper_protos[id - SCHED_HELPER_FIRST];
	for (size_t i = 0; i < sizeof(sched_std_helpers) / sizeof(sched_std_helpers[0]); i++)
		if (sched_std_helpers[i] == id)
			return helper_proto_find(id);
	return NULL;
}
