/* SPDX-License-Identifier: MIT */
/*
 * cupti.h - CUPTI activity as an event source.
 *
 * cupti_start() loads libcupti with dlopen (GPUEXT_CUPTI_PATH, the default
 * search path, then the CUDA install: $CUDA_HOME, /usr/local/cuda and the
 * toolkit folders next to the libcuda the process loaded), enables the
 * activity kinds asked for, and from then on turns every completed record
 * into gpuext's stable record (include/bpf/gpuext_cupti.h) and hands it to
 * the sink.  CUPTI's structs are only read here (cupti_record.c converts).
 *
 * Buffers come from a fixed pool (CUPTI asks for one whenever it needs
 * one); when the pool is empty CUPTI gets none and drops records: counted,
 * like the drops CUPTI reports itself.  A thread flushes every flush_ms
 * (CUPTI otherwise hands over a buffer only when it is full); cupti_flush()
 * forces one (exit, context teardown).
 *
 * Records of the driver and runtime API calls (kind_mask CUPTI_WANT_*_API)
 * are not passed on: they fill api_start/api_end/api_tid of the kernel and
 * memcpy records with the same correlation id (a table of the last 65536
 * calls).  A GPU record whose call's record is not seen by the end of the
 * flush that returned it is passed on unjoined and counted.
 *
 * The sink is called on the flush timer's thread (or the thread that calls
 * cupti_flush/cupti_stop), one record at a time, never concurrently with
 * itself.
 * One collection per process (CUPTI has one set of callbacks).
 */
#ifndef GPUEXT_CUDA_CUPTI_H
#define GPUEXT_CUDA_CUPTI_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/err.h"
#include "bpf/gpuext_cupti.h"

enum cupti_want {
	CUPTI_WANT_KERNEL = 1u << 0, /* concurrent kernel records */
	CUPTI_WANT_MEMCPY = 1u << 1, /* memcpy and memset */
	CUPTI_WANT_UVM = 1u << 2,    /* unified memory: faults, migrations */
	CUPTI_WANT_DRIVER_API = 1u << 3,  /* driver calls, for the join */
	CUPTI_WANT_RUNTIME_API = 1u << 4, /* runtime calls, for the join */
	CUPTI_WANT_API = CUPTI_WANT_DRIVER_API | CUPTI_WANT_RUNTIME_API,
};

struct cupti_sink {
	void (*kernel)(void *arg, const struct gpuext_cupti_kernel *rec);
	void (*memcpy)(void *arg, const struct gpuext_cupti_memcpy *rec);
	void (*uvm)(void *arg, const struct gpuext_cupti_uvm *rec);
	void *arg;
	/* dropped from the end of kernel names where they have it (the agent's
	 * twins of instrumented kernels are the kernels); NULL: none */
	const char *kernel_name_suffix;
};

struct cupti_opts {
	unsigned kind_mask;      /* enum cupti_want */
	unsigned flush_ms;       /* 0: 100 ms */
	size_t buffer_size;      /* 0: 4 MiB */
	unsigned buffer_count;   /* pool size; 0: 16 */
	const char *lib_path;    /* NULL: $GPUEXT_CUPTI_PATH, then the search */
};

/*
 * Load libcupti and start collecting.  Fails (negative errno, e naming what
 * was missing or which CUPTI call refused and why) with nothing left
 * enabled: the caller goes on without CUPTI.
 */
int cupti_start(const struct cupti_opts *opts, const struct cupti_sink *sink,
		struct err *e);

/* Hand every pending record to the sink now (forced flush: also records of
 * work that is still running are not waited for). */
void cupti_flush(void);

/* Flush, disable, stop the timer thread (the library stays loaded: CUPTI
 * cannot be unloaded safely). */
void cupti_stop(void);

/* Is a collection running? */
int cupti_running(void);

struct cupti_stats {
	uint64_t kernels, memcpys, memsets, uvm, api; /* records seen, by kind */
	uint64_t other;          /* records of kinds not passed on */
	uint64_t dropped;        /* records CUPTI dropped (its count plus starved buffers' worth unknown) */
	uint64_t starved;        /* buffer requests refused: the pool was empty */
	uint64_t buffers;        /* buffers completed */
	uint64_t unjoined;       /* GPU records whose API call was not found */
};
void cupti_stats_get(struct cupti_stats *out);

/* FNV-1a, 32 bit: gpuext_cupti_kernel.name_hash (of name's first len
 * bytes). */
uint32_t cupti_name_hash(const char *name);
uint32_t cupti_name_hash_len(const char *name, size_t len);

/* The CUPTI library path tried last (for messages), or NULL. */
const char *cupti_lib_path(void);

#endif /* GPUEXT_CUDA_CUPTI_H */
