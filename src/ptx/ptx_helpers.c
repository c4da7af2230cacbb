/* SPDX-License-Identifier: MIT */
#include "ptx_helpers.h"

#include <stddef.h>

#define GPU HELPER_F_GPU
#define A(...) {__VA_ARGS__}

/* Keep sorted by id: looked up by binary search. */
static const struct ptx_helper ptx_helpers[] = {
	{{HELPER_MAP_LOOKUP_ELEM, "map_lookup_elem", NULL, RET_PTR_TO_MAP_VALUE_OR_NULL,
	  A(ARG_CONST_MAP_PTR, ARG_PTR_TO_MAP_KEY), GPU}, "gx_rt_map_lookup", 2, 0},
	{{HELPER_MAP_UPDATE_ELEM, "map_update_elem", NULL, RET_INTEGER,
	  A(ARG_CONST_MAP_PTR, ARG_PTR_TO_MAP_KEY, ARG_PTR_TO_MAP_VALUE, ARG_SCALAR), GPU},
	 "gx_rt_map_update", 4, 0},
	{{HELPER_MAP_DELETE_ELEM, "map_delete_elem", NULL, RET_INTEGER,
	  A(ARG_CONST_MAP_PTR, ARG_PTR_TO_MAP_KEY), GPU}, "gx_rt_map_delete", 2, 0},
	{{HELPER_KTIME_GET_NS, "ktime_get_ns", NULL, RET_INTEGER, A(0), GPU},
	 "gx_rt_globaltimer", 0, 0},
	{{HELPER_TRACE_PRINTK, "trace_printk", NULL, RET_INTEGER,
	  A(ARG_PTR_TO_MEM, ARG_CONST_SIZE, ARG_ANYTHING, ARG_ANYTHING, ARG_ANYTHING),
	  GPU | HELPER_F_PKT_LEAK}, "gx_rt_trace_printk", 5, PTX_HX_TRACE_RING},
	{{HELPER_GET_PRANDOM_U32, "get_prandom_u32", NULL, RET_INTEGER, A(0), GPU},
	 "gx_rt_prandom", 0, 0},
	{{HELPER_GET_SMP_PROCESSOR_ID, "get_smp_processor_id", NULL, RET_INTEGER, A(0), GPU},
	 "gx_rt_sm_id", 0, 0},
	{{HELPER_RINGBUF_OUTPUT, "ringbuf_output", NULL, RET_INTEGER,
	  A(ARG_CONST_MAP_PTR, ARG_PTR_TO_MEM, ARG_CONST_SIZE_OR_ZERO, ARG_SCALAR),
	  GPU | HELPER_F_PKT_LEAK}, "gx_rt_ringbuf_output", 4, 0},
	{{HELPER_RINGBUF_RESERVE, "ringbuf_reserve", NULL, RET_PTR_TO_RINGBUF_REC_OR_NULL,
	  A(ARG_CONST_MAP_PTR, ARG_CONST_ALLOC_SIZE, ARG_SCALAR), GPU},
	 "gx_rt_ringbuf_reserve", 3, 0},
	{{HELPER_RINGBUF_SUBMIT, "ringbuf_submit", NULL, RET_VOID,
	  A(ARG_PTR_TO_RINGBUF_REC, ARG_SCALAR), GPU | HELPER_F_PKT_LEAK},
	 "gx_rt_ringbuf_submit", 2, 0},
	{{HELPER_RINGBUF_DISCARD, "ringbuf_discard", NULL, RET_VOID,
	  A(ARG_PTR_TO_RINGBUF_REC, ARG_SCALAR), GPU}, "gx_rt_ringbuf_discard", 2, 0},
	{{HELPER_RINGBUF_QUERY, "ringbuf_query", NULL, RET_INTEGER,
	  A(ARG_CONST_MAP_PTR, ARG_SCALAR), GPU}, "gx_rt_ringbuf_query", 2, 0},
	{{HELPER_GPU_ACTIVE_MASK, "gpu_active_mask", NULL, RET_INTEGER, A(0), GPU},
	 "gx_rt_active_mask", 0, PTX_HX_WARP},
	{{HELPER_GPU_LANE_COUNT, "gpu_lane_count", NULL, RET_INTEGER, A(0), GPU},
	 "gx_rt_lane_count", 0, PTX_HX_WARP},
	{{HELPER_GPU_LANE_ID, "gpu_lane_id", NULL, RET_INTEGER, A(0), GPU},
	 "gx_rt_lane_id", 0, 0},
	{{HELPER_GPU_WARP_ID, "gpu_warp_id", NULL, RET_INTEGER, A(0), GPU},
	 "gx_rt_warp_id", 0, 0},
	{{HELPER_GPU_SM_ID, "gpu_sm_id", NULL, RET_INTEGER, A(0), GPU}, "gx_rt_sm_id", 0, 0},
	{{HELPER_GPU_BLOCK_IDX, "gpu_block_idx", NULL, RET_INTEGER, A(ARG_SCALAR), GPU},
	 "gx_rt_block_idx", 1, 0},
	{{HELPER_GPU_THREAD_IDX, "gpu_thread_idx", NULL, RET_INTEGER, A(ARG_SCALAR), GPU},
	 "gx_rt_thread_idx", 1, 0},
	{{HELPER_GPU_GRID_DIM, "gpu_grid_dim", NULL, RET_INTEGER, A(ARG_SCALAR), GPU},
	 "gx_rt_grid_dim", 1, 0},
	{{HELPER_GPU_BLOCK_DIM, "gpu_block_dim", NULL, RET_INTEGER, A(ARG_SCALAR), GPU},
	 "gx_rt_block_dim", 1, 0},
	{{HELPER_GPU_GLOBALTIMER, "gpu_globaltimer", NULL, RET_INTEGER, A(0), GPU},
	 "gx_rt_globaltimer", 0, 0},
	{{HELPER_GPU_CLOCK, "gpu_clock", NULL, RET_INTEGER, A(0), GPU}, "gx_rt_clock", 0, 0},
	{{HELPER_GPU_PER_THREAD, "gpu_per_thread", NULL, RET_INTEGER, A(0), GPU},
	 "gx_rt_per_thread", 0, PTX_HX_WARP},
	{{HELPER_GPU_LAUNCH_ID, "gpu_launch_id", NULL, RET_INTEGER, A(0), GPU}, NULL, 0, 0},
	/* red/atom.max written inline (ptx_emit.c) */
	{{HELPER_GPU_ATOMIC_MAX, "gpu_atomic_max", NULL, RET_INTEGER,
	  A(ARG_PTR_TO_ATOMIC_U64, ARG_SCALAR), GPU}, NULL, 2, 0},
	/* the injector's register, or special registers (ptx_intrin.c) */
	{{HELPER_GPU_BLOCK_INDEX, "gpu_block_index", NULL, RET_INTEGER, A(0), GPU}, NULL, 0, 0},
};

const struct ptx_helper *ptx_helper_find(uint32_t id)
{
	size_t lo = 0, hi = sizeof(ptx_helpers) / sizeof(ptx_helpers[0]);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ptx_helpers[mid].proto.id == id)
			return &ptx_helpers[mid];
		if (ptx_helpers[mid].proto.id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct helper_proto *ptx_helper_proto_find(uint32_t id)
{
	const struct ptx_helper *h = ptx_helper_find(id);
	return h ? &h->proto : NULL;
}

/*
 * The verifier's device profile: the device runtime's helpers, and for any
 * other id the host prototype (which lacks HELPER_F_GPU, so the verifier
 * says "helper NAME is not available on the GPU" rather than "unknown").
 */
const struct helper_proto *helper_proto_find_gpu(uint32_t id)
{
	const struct helper_proto *p = ptx_helper_proto_find(id);
	return p ? p : helper_proto_find(id);
}
