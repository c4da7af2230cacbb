/* SPDX-License-Identifier: MIT */
/*
 * ptx_devmap.h - the layout of a map in GPU memory, shared by the host
 * (ptx_rt.c, which creates and reads it) and the device runtime
 * (ptx_rt_dev.cu, compiled to PTX at build time).  Plain C, no pointers:
 * every address is a 64-bit device address.
 *
 * Array maps:  data -> max_entries values, value_stride bytes apart.
 * Per-SM array: data -> nr_sms copies of the array, sm_stride bytes apart (a
 *              multiple of 128: no two SMs share a cache line); a program
 *              on SM s sees copy min(s, nr_sms - 1).
 * Hash:        data -> nr_slots slots (a power of two, at least twice
 *              max_entries), each {u32 state, u32 hash, key, value}:
 *              open addressing with linear probing, see docs/device-maps.md;
 *              a per-SM hash's slot holds nr_sms values, one per SM.
 * Ring buffer: rb_data -> rb_size bytes of pinned host memory (mapped into
 *              the device), rb_ctrl -> struct ptx_rb_ctrl in pinned host
 *              memory; the producer position and the space budget live
 *              here, in device memory, where atomics are fast; data ->
 *              nr_sms drop counters (u64), PTX_RB_DROP_STRIDE bytes apart.
 */
#ifndef GPUEXT_PTX_DEVMAP_H
#define GPUEXT_PTX_DEVMAP_H

#include <stdint.h>

enum {
	PTX_SLOT_EMPTY = 0,
	PTX_SLOT_BUSY = 1,    /* being written by the thread that claimed it */
	PTX_SLOT_LIVE = 2,
	PTX_SLOT_DELETED = 3, /* deleted; the slot stays bound to its key */
};

/* Ring buffer record header: the first 32-bit word; 0 = not yet written. */
#define PTX_RB_BUSY    (1u << 31) /* reserved, being written */
#define PTX_RB_DISCARD (1u << 30) /* discarded record or padding: skip */
#define PTX_RB_DONE    (1u << 29) /* submitted */
#define PTX_RB_LEN_MASK ((1u << 29) - 1)
#define PTX_RB_HDR_SIZE 8u
/* Ring buffer drop counters: one per SM, each on a 128-byte line. */
#define PTX_RB_DROP_STRIDE 128u

/* Magic of a trace_printk record in the trace ring buffer. */
#define PTX_TRACE_MAGIC 0x50544758u /* "XGTP" */

struct ptx_trace_rec {
	uint32_t magic;
	uint32_t fmt_len; /* bytes of fmt that follow, NUL included */
	uint64_t args[3];
	/* char fmt[fmt_len]; */
};

struct ptx_rb_ctrl {
	uint64_t cons; /* consumer position, written by the host only */
};

struct ptx_devmap {
	uint32_t type;         /* enum map_type (Linux numbers) */
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	uint32_t value_stride; /* value_size rounded up to 8 */
	uint32_t key_stride;   /* key_size rounded up to 8 */
	uint32_t nr_sms;       /* per-SM maps: values per key; ring: drop counters */
	uint32_t nr_slots;     /* hash: slots, a power of two */
	uint32_t slot_size;    /* hash: 8 + key_stride + nr_sms x value_stride */
	uint32_t count;        /* hash: live elements (atomic) */
	uint64_t data;         /* values or slots (device memory) */
	uint64_t rb_data;      /* ring buffer data (pinned host memory) */
	uint64_t rb_ctrl;      /* struct ptx_rb_ctrl (pinned host memory) */
	uint64_t rb_size;      /* data bytes, a power of two */
	uint64_t rb_prod;      /* producer position (atomic) */
	uint64_t rb_cons_seen; /* last consumer position read from rb_ctrl */
	uint64_t rb_resv;      /* bytes taken from the budget (atomic), >= rb_prod */
	uint64_t sm_stride;    /* per-SM array: bytes between SMs' copies */
	uint64_t reserved[3];  /* the header is 128 bytes */
};

/*
 * The hash of a key: FNV-1a, never 0.  One definition for the device (which
 * places keys) and the host (which finds them in a snapshot).
 */
#ifdef __CUDACC__
#define PTX_DEVMAP_FN static __device__ __forceinline__
#else
#define PTX_DEVMAP_FN static inline
#endif
PTX_DEVMAP_FN uint32_t ptx_devmap_hash(const void *key, uint32_t n)
{
	const unsigned char *k = (const unsigned char *)key;
	uint32_t h = 2166136261u;
	for (uint32_t i = 0; i < n; i++)
		h = (h ^ k[i]) * 16777619u;
	return h | 1;
}

#endif /* GPUEXT_PTX_DEVMAP_H */
