/* SPDX-License-Identifier: MIT */
/*
 * helpers.h - helper functions callable from programs, and their prototypes.
 *
 * Standard helpers keep Linux's ids and semantics (so bpf_helpers.h from
 * libbpf works unchanged).  GPU helpers have ids of their own, in
 * HELPER_GPU_FIRST..HELPER_GPU_LAST, declared for programs in
 * include/bpf/gpuext_helpers.h.  The prototype says what the verifier must
 * prove about each argument and what the return value is; the flags say
 * where a helper may run.
 */
#ifndef GPUEXT_BPF_HELPERS_H
#define GPUEXT_BPF_HELPERS_H

#include <stddef.h>
#include <stdint.h>

typedef uint64_t (*helper_fn)(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
			      uint64_t r5);

#define HELPER_IDS(X)                                                          \
	X(MAP_LOOKUP_ELEM, 1, "map_lookup_elem")                               \
	X(MAP_UPDATE_ELEM, 2, "map_update_elem")                               \
	X(MAP_DELETE_ELEM, 3, "map_delete_elem")                               \
	X(PROBE_READ, 4, "probe_read")                                         \
	X(KTIME_GET_NS, 5, "ktime_get_ns")                                     \
	X(TRACE_PRINTK, 6, "trace_printk")                                     \
	X(GET_PRANDOM_U32, 7, "get_prandom_u32")                               \
	X(GET_SMP_PROCESSOR_ID, 8, "get_smp_processor_id")                     \
	X(GET_CURRENT_PID_TGID, 14, "get_current_pid_tgid")                    \
	X(GET_CURRENT_UID_GID, 15, "get_current_uid_gid")                      \
	X(GET_CURRENT_COMM, 16, "get_current_comm")                            \
	X(PROBE_READ_STR, 45, "probe_read_str")                                \
	X(PROBE_READ_USER, 112, "probe_read_user")                             \
	X(PROBE_READ_KERNEL, 113, "probe_read_kernel")                         \
	X(PROBE_READ_USER_STR, 114, "probe_read_user_str")                     \
	X(PROBE_READ_KERNEL_STR, 115, "probe_read_kernel_str")                 \
	X(KTIME_GET_BOOT_NS, 125, "ktime_get_boot_ns")                         \
	X(RINGBUF_OUTPUT, 130, "ringbuf_output")                               \
	X(RINGBUF_RESERVE, 131, "ringbuf_reserve")                             \
	X(RINGBUF_SUBMIT, 132, "ringbuf_submit")                               \
	X(RINGBUF_DISCARD, 133, "ringbuf_discard")                             \
	X(RINGBUF_QUERY, 134, "ringbuf_query")                                 \
	X(SNPRINTF, 165, "snprintf")                                           \
	X(TRACE_VPRINTK, 177, "trace_vprintk")                                 \
	X(GPU_ATOMIC_MAX, 513, "gpu_atomic_max")                               \
	X(CUDA_KERNEL_NAME, 640, "cuda_kernel_name")

#define HELPER_ENUM(name, id, str) HELPER_##name = id,
enum helper_id { HELPER_IDS(HELPER_ENUM) };
#undef HELPER_ENUM

/* GPU helpers (device runtime); ids reserved here, listed in src/ptx/.
 * gpu_atomic_max (513) is in HELPER_IDS too: eBPF has no atomic maximum,
 * and the host backends run it as well (a compare-and-swap loop). */
enum { HELPER_GPU_FIRST = 500, HELPER_GPU_LAST = 599 };
/* Memory-policy helpers (struct_ops programs); ids reserved here, declared
 * in include/bpf/gpu_mem_ops.h, implemented in src/policy/. */
enum { HELPER_POLICY_FIRST = 600, HELPER_POLICY_LAST = 699 };

/*
 * Host helpers of the CUDA layer (ids 640..): implemented by whoever knows
 * the driver (the agent) and installed here, so that the bpf layer stays
 * below it.  cuda_kernel_name(buf, size, handle) writes the mangled name of
 * a CUfunction or CUkernel; without an installed lookup it writes "" and
 * returns -ENOENT (include/bpf/gpuext_helpers.h documents it).
 */
typedef long (*helper_kernel_name_fn)(uint64_t handle, char *buf, size_t size);
void helper_set_kernel_name_fn(helper_kernel_name_fn fn);

/* What the verifier must prove about an argument register. */
enum helper_arg {
	ARG_NONE = 0,          /* unused */
	ARG_ANYTHING,          /* any initialised scalar or pointer the prog may leak */
	ARG_SCALAR,            /* any initialised scalar */
	ARG_CONST_MAP_PTR,     /* a map (LD_IMM64 pseudo map) */
	ARG_PTR_TO_MAP_KEY,    /* key_size readable bytes */
	ARG_PTR_TO_MAP_VALUE,  /* value_size readable bytes */
	ARG_PTR_TO_MEM,        /* readable memory of size given by the next arg */
	ARG_PTR_TO_UNINIT_MEM, /* writable memory of size given by the next arg */
	ARG_CONST_SIZE,        /* size > 0 of the previous pointer argument */
	ARG_CONST_SIZE_OR_ZERO,
	ARG_PTR_TO_CTX,
	ARG_PTR_TO_RINGBUF_REC, /* a reserved ring buffer record: released */
	ARG_CONST_ALLOC_SIZE,   /* constant size of the record to allocate */
	ARG_PTR_TO_CONST_STR,   /* NUL-terminated string in read-only data */
	ARG_PTR_TO_ATOMIC_U64,  /* 8 writable, 8-aligned bytes of a map value,
				 * updated atomically */
};

enum helper_ret {
	RET_INTEGER = 0,
	RET_VOID,
	RET_PTR_TO_MAP_VALUE_OR_NULL,
	RET_PTR_TO_RINGBUF_REC_OR_NULL, /* size from ARG_CONST_ALLOC_SIZE; acquires a reference */
};

enum {
	HELPER_F_HOST = 1u << 0,      /* available to host programs */
	HELPER_F_GPU = 1u << 1,       /* available in the device runtime */
	HELPER_F_SLEEPABLE = 1u << 2, /* may block: never on the GPU */
	HELPER_F_PKT_LEAK = 1u << 3,  /* writes its arguments somewhere a user sees them */
};

struct helper_proto {
	uint32_t id;
	const char *name;
	helper_fn fn; /* host implementation, NULL for GPU-only helpers */
	enum helper_ret ret;
	enum helper_arg args[5];
	unsigned flags;
};

/* The prototype of helper id, or NULL if there is none. */
const struct helper_proto *helper_proto_find(uint32_t id);
/* The name Linux gives helper id ("loop" for 181), NULL if none: for messages. */
const char *helper_linux_name(uint32_t id);
/*
 * The same for a program that runs on the GPU: the helpers the device
 * runtime implements (standard ids and HELPER_GPU_FIRST..LAST, with
 * HELPER_F_GPU), else the host prototype.  Defined with the device runtime's
 * table in src/ptx/ptx_helpers.c; the verifier's GPU profile uses it.
 */
const struct helper_proto *helper_proto_find_gpu(uint32_t id);

/*
 * A table of implementations a backend calls through.  Normally the
 * defaults; the conformance runner and tests override entries (for
 * conformance, helper 5 returns its first argument).
 */
enum { HELPER_TABLE_SIZE = 1024 };
struct helper_table {
	helper_fn fn[HELPER_TABLE_SIZE];
};

/* The host implementations of every helper. */
const struct helper_table *helper_table_default(void);

/* Where trace_printk output goes for this thread (default: stderr). */
struct helper_trace_sink {
	void (*write)(void *arg, const char *line, size_t len);
	void *arg;
};
void helper_set_trace_sink(const struct helper_trace_sink *sink);

#endif /* GPUEXT_BPF_HELPERS_H */
