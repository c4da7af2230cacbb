/* SPDX-License-Identifier: MIT */
/*
 * ptx_helpers.h - the helpers a program can call on the GPU.
 *
 * One table (ptx_helpers.c) says, for every helper id the device runtime
 * implements, its prototype (what the verifier's device profile checks) and
 * the runtime function the translator calls.  Standard helpers keep Linux's
 * ids (map ops, ktime, trace_printk, prandom, ring buffer); GPU-only helpers
 * have ids in HELPER_GPU_FIRST..HELPER_GPU_LAST, declared for programs in
 * include/bpf/gpuext_helpers.h and documented in docs/gpu-helpers.md.
 */
#ifndef GPUEXT_PTX_HELPERS_H
#define GPUEXT_PTX_HELPERS_H

#include <stddef.h> /* helpers.h uses size_t */
#include <stdint.h>

#include "bpf/helpers.h"
#include "ptx_buf.h"

/* X(NAME, id, "name"): the GPU-only helpers.  gpu_atomic_max (513), which
 * the host backends run too, is in src/bpf/helpers.h's HELPER_IDS. */
#define PTX_GPU_HELPER_IDS(X)                                                  \
	X(GPU_ACTIVE_MASK, 500, "gpu_active_mask")                             \
	X(GPU_LANE_COUNT, 501, "gpu_lane_count")                               \
	X(GPU_LANE_ID, 502, "gpu_lane_id")                                     \
	X(GPU_WARP_ID, 503, "gpu_warp_id")                                     \
	X(GPU_SM_ID, 504, "gpu_sm_id")                                         \
	X(GPU_BLOCK_IDX, 505, "gpu_block_idx")                                 \
	X(GPU_THREAD_IDX, 506, "gpu_thread_idx")                               \
	X(GPU_GRID_DIM, 507, "gpu_grid_dim")                                   \
	X(GPU_BLOCK_DIM, 508, "gpu_block_dim")                                 \
	X(GPU_GLOBALTIMER, 509, "gpu_globaltimer")                             \
	X(GPU_CLOCK, 510, "gpu_clock")                                         \
	X(GPU_PER_THREAD, 511, "gpu_per_thread")                               \
	X(GPU_LAUNCH_ID, 512, "gpu_launch_id")                                 \
	X(GPU_BLOCK_INDEX, 514, "gpu_block_index")

#define PTX_HELPER_ENUM(name, id, str) HELPER_##name = id,
enum ptx_gpu_helper_id { PTX_GPU_HELPER_IDS(PTX_HELPER_ENUM) };
#undef PTX_HELPER_ENUM

/* Hidden arguments the translator appends after the eBPF ones. */
enum {
	PTX_HX_WARP = 1u << 0,       /* the warp word of the invocation */
	PTX_HX_TRACE_RING = 1u << 1, /* the trace_printk ring buffer */
};

struct ptx_helper {
	struct helper_proto proto; /* fn is NULL: these run on the device */
	const char *rt_func;       /* device runtime function; NULL: inline only
				    * (the launch id, the atomic maximum) */
	unsigned nargs;            /* eBPF argument registers passed (r1..) */
	unsigned hidden;           /* PTX_HX_* */
};

/* The helper id as the device runtime implements it, or NULL. */
const struct ptx_helper *ptx_helper_find(uint32_t id);

/*
 * Prototype of helper id for a program that runs on the GPU: every helper of
 * the table above (standard ids included, with HELPER_F_GPU set), NULL for
 * ids the device runtime does not implement.  The verifier's device profile
 * uses this in place of helper_proto_find().
 */
const struct helper_proto *ptx_helper_proto_find(uint32_t id);

/*
 * The GPU helper id written inline into b (ptx_intrin.c): r0 from special
 * registers, the warp word (%warp) and r1, with the translator's scratch
 * registers (%t0, %h0..%h2, %p0).  Returns 0, writing nothing, for helpers
 * that stay calls into the device runtime.  launch_id: the operand holding
 * the launch's id where the code runs ("0" where there is no launch), or
 * NULL where the id is out of reach: HELPER_GPU_LAUNCH_ID then gives
 * -ENOTSUP (it has no runtime function: the id exists only in the kernel).
 * block_index: the .b64 register holding the block's linear index where
 * the code runs (the injector's, computed once per thread), or NULL:
 * HELPER_GPU_BLOCK_INDEX then computes it from special registers.
 */
int ptx_intrin_emit(struct ptx_buf *b, uint32_t id, const char *launch_id,
		    const char *block_index);

/*
 * dst (.b64) = the block's linear index, x + nctaid.x * (y + nctaid.y *
 * z), from special registers, in 64 bits (a, b: .b32 scratch, u: .b64):
 * what HELPER_GPU_BLOCK_INDEX computes where no register holds it, and
 * what the block code computes for a block program's record.
 */
void ptx_intrin_block_index(struct ptx_buf *b, const char *dst, const char *a, const char *bb,
			    const char *u);

#endif /* GPUEXT_PTX_HELPERS_H */
