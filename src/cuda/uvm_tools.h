/* SPDX-License-Identifier: MIT */
/*
 * uvm_tools.h - unified-memory events straight from the nvidia-uvm driver's
 * tools interface (/dev/nvidia-uvm-tools), in the process that owns the
 * managed memory.
 *
 * Why not only CUPTI: CUPTI reads the same driver queue, but through a
 * queue of its own size, drained by its own thread; on a fault storm (a
 * kernel touching 256 MiB of host-resident managed memory) the driver
 * drops the events that do not fit (it counts them per event type in the
 * queue's control page) and CUPTI passes on what is left without saying
 * so.  Here the queue is as large as the caller asks, drained by a thread
 * woken by the driver, and the drops are read back and reported.  The
 * driver's aggregate counters (bytes each way, faults; never dropped) are
 * read too, so a consumer can check the events against them.
 *
 * Events are decoded into gpuext's record (struct gpuext_cupti_uvm,
 * include/bpf/gpuext_cupti.h), so cupti/uvm programs and the memory-policy
 * runtime take them unchanged:
 *   driver migration event   -> GPUEXT_CUPTI_UVM_HTOD / _DTOH / _DTOD, bytes,
 *                               flags = migration cause (CUPTI's values)
 *   driver GPU fault events  -> GPUEXT_CUPTI_UVM_GPU_FAULT: one record per
 *                               fault the driver serviced (its fault
 *                               counter counts these), count = the
 *                               fault-buffer entries merged into it (>= 1),
 *                               flags = access type
 *   driver CPU fault event   -> GPUEXT_CUPTI_UVM_CPU_FAULT, flags = access type
 *   remote map               -> GPUEXT_CUPTI_UVM_REMOTE_MAP, bytes
 * Timestamps: the driver stamps CLOCK_MONOTONIC_RAW; records carry
 * CLOCK_MONOTONIC (offset read at start).  A migration's start/end are
 * the CPU times of its copy's submission and completion.
 *
 * ABI facts (ioctl numbers, struct layouts) are those of the nvidia-uvm
 * module's public uvm_ioctl.h/uvm_types.h (V2 event entries, drivers 550+).
 */
#ifndef GPUEXT_CUDA_UVM_TOOLS_H
#define GPUEXT_CUDA_UVM_TOOLS_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/err.h"
#include "bpf/gpuext_cupti.h"

/* The driver's aggregate counters (its UvmCounterName indices). */
enum uvmt_counter {
	UVMT_CNT_HTOD_BYTES = 0,
	UVMT_CNT_DTOH_BYTES = 1,
	UVMT_CNT_CPU_FAULTS = 2,
	UVMT_CNT_PREFETCH_HTOD_BYTES = 7, /* also counted in HTOD_BYTES */
	UVMT_CNT_PREFETCH_DTOH_BYTES = 8, /* also counted in DTOH_BYTES */
	UVMT_CNT_GPU_FAULTS = 9,          /* serviced fault entries (duplicates not) */
	UVMT_CNT_TOTAL = 10,
};

/* The driver's event types that are decoded (its UvmEventType values). */
enum uvmt_event_type {
	UVMT_EV_CPU_FAULT = 1,
	UVMT_EV_MIGRATION = 2,
	UVMT_EV_GPU_FAULT = 3,
	UVMT_EV_GPU_FAULT_REPLAY = 4,
	UVMT_EV_FAULT_BUFFER_OVERFLOW = 5,
	UVMT_EV_THRASHING = 10,
	UVMT_EV_MAP_REMOTE = 13,
	UVMT_EV_EVICTION = 14,
	UVMT_EV_TYPES = 64, /* the driver's UvmEventNumTypesAll */
};

/* Bytes of one V2 queue entry (the driver's UvmEventEntry_V2). */
#define UVMT_ENTRY_SIZE 72

struct uvmt_opts {
	unsigned queue_entries; /* power of 2; 0: 1 << 18 (18 MiB of queue) */
	unsigned poll_ms;       /* drain at least this often; 0: 5 */
	int uvm_fd;             /* the process's /dev/nvidia-uvm fd; -1: find it */
};

typedef void (*uvmt_sink_fn)(void *arg, const struct gpuext_cupti_uvm *rec);

struct uvmt_stats {
	uint64_t records;                 /* handed to the sink */
	uint64_t by_type[UVMT_EV_TYPES];  /* events read, by driver type */
	uint64_t dropped[UVMT_EV_TYPES];  /* events the driver dropped (queue full) */
	uint64_t dropped_total;
	uint64_t counters[UVMT_CNT_TOTAL]; /* the driver's aggregates since start */
	int counters_ok;                   /* counters[] valid */
	unsigned queue_entries;
};

/*
 * Attach to this process's UVM address space (the CUDA driver must have
 * opened /dev/nvidia-uvm: after cuInit) and start the drain thread.
 * Fails (negative errno, e says why: no driver, no permission, no UVM fd
 * yet, an older driver without V2 entries) with nothing left running.
 */
int uvmt_start(const struct uvmt_opts *opts, uvmt_sink_fn sink, void *arg, struct err *e);

/* Make the driver complete its pending events (copies still in flight are
 * waited for) and drain the queue into the sink now. */
void uvmt_flush(void);

/* Flush, stop the thread, close the tracker. */
void uvmt_stop(void);

int uvmt_running(void);

void uvmt_stats_get(struct uvmt_stats *out);

/* --- the pure parts, exposed for the unit tests --- */

/*
 * Decode one queue entry (UVMT_ENTRY_SIZE bytes) into out; raw_ns_offset
 * is added to the driver's timestamps.  Returns 1 for a record, 0 for an
 * event type that has none (counted by the caller).
 */
int uvmt_decode(const void *entry, int64_t raw_ns_offset, struct gpuext_cupti_uvm *out);

/*
 * Gathering GPU faults: the driver writes one event per fault-buffer entry
 * it serviced and one per duplicate it merged into it, all with the same
 * CPU timestamp, GPU and page, one after the other (other kinds of events,
 * written by other threads, may come between them); they become one
 * record whose count is the entries (so records = the driver's fault
 * counter).  uvmt_gather_add passes every other kind through at once;
 * uvmt_gather_flush hands over the gathered fault.  One GPU's faults at a
 * time (a second GPU's fault between the entries of a first's would split
 * it).
 */
struct uvmt_gather {
	struct gpuext_cupti_uvm pend;
	int have;
};
void uvmt_gather_add(struct uvmt_gather *g, const struct gpuext_cupti_uvm *r, uvmt_sink_fn emit,
		     void *arg);
void uvmt_gather_flush(struct uvmt_gather *g, uvmt_sink_fn emit, void *arg);

/* The queue's control page (the driver's UvmToolsEventControlData). */
struct uvmt_control {
	volatile uint32_t get_ahead, get_behind, put_ahead, put_behind;
	uint64_t dropped[UVMT_EV_TYPES];
};

/*
 * Read every entry between the consumer's and the producer's index of a
 * queue of `count` (power of 2) entries, hand each to fn, and give the
 * slots back to the producer.  Returns the number of entries read.
 */
size_t uvmt_ring_drain(const uint8_t *queue, struct uvmt_control *ctl, uint32_t count,
		       void (*fn)(void *arg, const uint8_t *entry), void *arg);

#endif /* GPUEXT_CUDA_UVM_TOOLS_H */
