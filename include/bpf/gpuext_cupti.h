/* SPDX-License-Identifier: MIT */
/*
 * gpuext_cupti.h - the records `cupti/kernel`, `cupti/memcpy` and
 * `cupti/uvm` programs receive as their ctx (read-only, exactly these
 * sizes): gpuext's own stable layout, filled from CUPTI's activity records
 * (whose structs change between CUPTI versions).  Fields are only ever
 * added at the end of a record's reserved space; a field's meaning never
 * changes.  docs/cupti.md says where each field comes from.
 *
 * Time: every timestamp is in ns of CLOCK_MONOTONIC, the clock of
 * bpf_ktime_get_ns() on the host (the agent hands CUPTI its timestamp
 * function), so GPU activity and host API probes share one timeline.
 * CUPTI converts GPU timestamps to that clock by interpolation.
 *
 * Correlation: correlation_id is CUPTI's id of the driver or runtime call
 * that issued the work; the agent joins it with CUPTI's record of that call
 * and fills api_start/api_end/api_tid (0 when the call's record was not
 * seen, for example with GPUEXT_CUPTI_API=0).
 *
 * Usage:
 *   SEC("cupti/kernel")
 *   int on_kernel(const struct gpuext_cupti_kernel *k) { ... k->end - k->start ... }
 */
#ifndef GPUEXT_BPF_GPUEXT_CUPTI_H
#define GPUEXT_BPF_GPUEXT_CUPTI_H

#include <linux/types.h>

/* Bytes of the kernel name buffer (NUL included). */
#define GPUEXT_CUPTI_NAME_LEN 256

/* gpuext_cupti_kernel.flags */
#define GPUEXT_CUPTI_KERNEL_NAME_TRUNCATED (1u << 0) /* name_len >= GPUEXT_CUPTI_NAME_LEN */
#define GPUEXT_CUPTI_KERNEL_GRAPH (1u << 1)          /* launched as a graph node */
#define GPUEXT_CUPTI_KERNEL_DEVICE_LAUNCHED (1u << 2) /* launched from the device */

/* One kernel execution (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL). */
struct gpuext_cupti_kernel {
	__u64 start;          /* kernel start, ns */
	__u64 end;            /* kernel end, ns */
	__u64 api_start;      /* the launching API call, ns (0: not joined) */
	__u64 api_end;
	__u64 graph_node;     /* graph node id, 0 when not a graph launch */
	__u32 correlation_id;
	__u32 api_tid;        /* thread that made the launching call (0: not joined) */
	__u32 device;         /* CUDA device ordinal */
	__u32 context;        /* CUPTI context id */
	__u32 stream;         /* CUPTI stream id */
	__u32 grid_x, grid_y, grid_z;
	__u32 block_x, block_y, block_z;
	__u32 registers;      /* per thread */
	__u32 static_shared;  /* bytes per block */
	__u32 dynamic_shared; /* bytes per block */
	__u32 local_per_thread; /* local memory bytes per thread */
	__u32 name_hash;      /* FNV-1a (32 bit) of the whole mangled name */
	__u32 name_len;       /* strlen of the whole mangled name */
	__u32 flags;          /* GPUEXT_CUPTI_KERNEL_* */
	__u32 reserved[4];    /* 0 */
	char name[GPUEXT_CUPTI_NAME_LEN]; /* mangled name, NUL-terminated, cut to fit */
};

/* gpuext_cupti_memcpy.kind: CUPTI's copy kinds (same values), plus memset. */
enum {
	GPUEXT_CUPTI_COPY_UNKNOWN = 0,
	GPUEXT_CUPTI_COPY_HTOD = 1,
	GPUEXT_CUPTI_COPY_DTOH = 2,
	GPUEXT_CUPTI_COPY_HTOA = 3,
	GPUEXT_CUPTI_COPY_ATOH = 4,
	GPUEXT_CUPTI_COPY_ATOA = 5,
	GPUEXT_CUPTI_COPY_ATOD = 6,
	GPUEXT_CUPTI_COPY_DTOA = 7,
	GPUEXT_CUPTI_COPY_DTOD = 8,
	GPUEXT_CUPTI_COPY_HTOH = 9,
	GPUEXT_CUPTI_COPY_PTOP = 10,
	GPUEXT_CUPTI_MEMSET = 100, /* a memset: dst_kind and value are set */
};

/* gpuext_cupti_memcpy.src_kind/dst_kind: CUPTI's memory kinds (same values). */
enum {
	GPUEXT_CUPTI_MEM_UNKNOWN = 0,
	GPUEXT_CUPTI_MEM_PAGEABLE = 1,
	GPUEXT_CUPTI_MEM_PINNED = 2,
	GPUEXT_CUPTI_MEM_DEVICE = 3,
	GPUEXT_CUPTI_MEM_ARRAY = 4,
	GPUEXT_CUPTI_MEM_MANAGED = 5,
	GPUEXT_CUPTI_MEM_DEVICE_STATIC = 6,
	GPUEXT_CUPTI_MEM_MANAGED_STATIC = 7,
};

/* gpuext_cupti_memcpy.flags */
#define GPUEXT_CUPTI_COPY_ASYNC (1u << 0)

/* One memory copy or memset (CUPTI_ACTIVITY_KIND_MEMCPY, _MEMSET). */
struct gpuext_cupti_memcpy {
	__u64 start;
	__u64 end;
	__u64 bytes;
	__u64 api_start;      /* the issuing API call (0: not joined) */
	__u64 api_end;
	__u64 graph_node;
	__u32 correlation_id;
	__u32 api_tid;
	__u32 device;
	__u32 context;
	__u32 stream;
	__u32 kind;           /* GPUEXT_CUPTI_COPY_* or GPUEXT_CUPTI_MEMSET */
	__u32 src_kind;       /* GPUEXT_CUPTI_MEM_* (memset: 0) */
	__u32 dst_kind;
	__u32 flags;          /* GPUEXT_CUPTI_COPY_ASYNC */
	__u32 value;          /* memset: the value written */
	__u32 reserved[6];    /* 0 */
};

/* gpuext_cupti_uvm.kind: CUPTI's unified-memory counter kinds (same values). */
enum {
	GPUEXT_CUPTI_UVM_HTOD = 1,      /* migration host -> device: bytes, start/end */
	GPUEXT_CUPTI_UVM_DTOH = 2,      /* migration device -> host */
	GPUEXT_CUPTI_UVM_CPU_FAULT = 3, /* CPU page fault: address, start (= end) */
	GPUEXT_CUPTI_UVM_GPU_FAULT = 4, /* GPU fault group: count faults, start/end */
	GPUEXT_CUPTI_UVM_THRASHING = 5,
	GPUEXT_CUPTI_UVM_THROTTLING = 6,
	GPUEXT_CUPTI_UVM_REMOTE_MAP = 7,
	GPUEXT_CUPTI_UVM_DTOD = 8,      /* migration device -> device */
};

/* gpuext_cupti_uvm.src/dst for the host side. */
#define GPUEXT_CUPTI_UVM_CPU 0xffffffffu

/* One unified-memory event (CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER). */
struct gpuext_cupti_uvm {
	__u64 start;
	__u64 end;            /* faults without a duration: = start */
	__u64 address;        /* virtual address of the first page */
	__u64 bytes;          /* migrations, thrashing, remote maps: bytes; faults: 0 */
	__u64 count;          /* GPU faults: faults in the group; CPU faults: 1; else 1 */
	__u32 kind;           /* GPUEXT_CUPTI_UVM_* */
	__u32 src;            /* migrations: source device or GPUEXT_CUPTI_UVM_CPU */
	__u32 dst;            /* migrations: destination; GPU faults: the faulting device */
	__u32 stream;
	__u32 flags;          /* CUPTI's migration cause or fault access type */
	__u32 pid;
	__u32 reserved[6];    /* 0 */
};

#endif /* GPUEXT_BPF_GPUEXT_CUPTI_H */
