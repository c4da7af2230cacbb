/* SPDX-License-Identifier: MIT */
/* cupti_impl.h - what cupti.c and cupti_record.c share (not an interface). */
#ifndef GPUEXT_CUDA_CUPTI_IMPL_H
#define GPUEXT_CUDA_CUPTI_IMPL_H

#include <cupti.h>
#include <stdatomic.h>

#include "cupti.h"

/* The counters behind cupti_stats (relaxed atomics). */
struct cupti_counters {
	_Atomic uint64_t kernels, memcpys, memsets, uvm, api, other;
	_Atomic uint64_t dropped, starved, buffers, unjoined;
};
extern struct cupti_counters cupti_counters;

/* Convert one CUPTI record and hand it to the sink (or, for an API call,
 * remember it for the join).  Called under cupti.c's delivery lock. */
void cupti_record_deliver(const CUpti_Activity *rec, const struct cupti_sink *sink);

/* Forget the remembered API calls and zero the counters (cupti_start). */
void cupti_record_reset(void);

#endif
