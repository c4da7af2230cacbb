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

/* Added to CUPTI's timestamps to give CLOCK_MONOTONIC: 0 when CUPTI took
 * gpuext's timestamp function, else CLOCK_MONOTONIC - CLOCK_REALTIME. */
extern int64_t cupti_ts_offset;

/* Pass 0: remember rec if it is an API call (for the join); pass 1:
 * convert rec if it is a GPU record and hand it to the sink.  Called under
 * cupti.c's delivery lock. */
void cupti_record_deliver(const CUpti_Activity *rec, const struct cupti_sink *sink, int pass);

/* Forget the remembered API calls and zero the counters (cupti_start). */
void cupti_record_reset(void);

#endif
