/* SPDX-License-Identifier: MIT */
/*
 * helpers.c - the helper prototypes and the host implementations of the map,
 * ring buffer, time, identity and random helpers (probe reads are in
 * helpers_probe.c, formatted output in helpers_trace.c).
 *
 * The prototype table is generated from HELPER_IDS: each id NAME needs a
 * HELPER_SIG_NAME below (implementation, return type, argument types,
 * flags), so an id added to the list without a prototype does not compile.
 * Argument types follow Linux's bpf_func_proto of the same helper.
 */
#include "helpers.h"
#include "helpers_impl.h"
#include "map.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAP(r) ((struct map *)(uintptr_t)(r))
#define PTR(r) ((void *)(uintptr_t)(r))
#define RET_INT(x) ((uint64_t)(int64_t)(x))

static uint64_t helper_map_lookup_elem(uint64_t map, uint64_t key, uint64_t r3, uint64_t r4,
				       uint64_t r5)
{
	return (uintptr_t)map_lookup(MAP(map), PTR(key));
}

static uint64_t helper_map_update_elem(uint64_t map, uint64_t key, uint64_t value,
				       uint64_t flags, uint64_t r5)
{
	return RET_INT(map_update(MAP(map), PTR(key), PTR(value), flags));
}

static uint64_t helper_map_delete_elem(uint64_t map, uint64_t key, uint64_t r3, uint64_t r4,
				       uint64_t r5)
{
	return RET_INT(map_delete(MAP(map), PTR(key)));
}

static uint64_t helper_clock_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t helper_ktime_get_ns(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5)
{
	return helper_clock_ns(CLOCK_MONOTONIC);
}

static uint64_t helper_ktime_get_boot_ns(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					 uint64_t r5)
{
	return helper_clock_ns(CLOCK_BOOTTIME);
}

/*
 * xorshift64* per thread: no shared state to contend on.  Seeded on first
 * use from the clock, the thread id and the state's address, mixed by
 * splitmix64 so that threads started together diverge.
 */
static uint64_t helper_get_prandom_u32(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				       uint64_t r5)
{
	static _Thread_local uint64_t state;

	if (!state) {
		uint64_t z = helper_clock_ns(CLOCK_MONOTONIC) ^ ((uint64_t)syscall(SYS_gettid) << 32) ^
			     (uintptr_t)&state;
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		state = (z ^ (z >> 31)) | 1;
	}
	state ^= state >> 12;
	state ^= state << 25;
	state ^= state >> 27;
	return (uint32_t)((state * 0x2545f4914f6cdd1dull) >> 32);
}

/* *dst = max(*dst, val), unsigned, atomically; returns the old *dst (the
 * verifier proved dst an 8-aligned u64 of a map value). */
static uint64_t helper_gpu_atomic_max(uint64_t dst, uint64_t val, uint64_t r3, uint64_t r4,
				      uint64_t r5)
{
	uint64_t *p = PTR(dst), old = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (old < val &&
	       !__atomic_compare_exchange_n(p, &old, val, 1, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		;
	return old;
}

static uint64_t helper_get_smp_processor_id(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					    uint64_t r5)
{
	int cpu = sched_getcpu();
	return cpu < 0 ? 0 : (uint64_t)cpu;
}

static uint64_t helper_get_current_pid_tgid(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					    uint64_t r5)
{
	return (uint64_t)getpid() << 32 | (uint32_t)syscall(SYS_gettid);
}

static uint64_t helper_get_current_uid_gid(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					   uint64_t r5)
{
	return (uint64_t)getgid() << 32 | (uint32_t)getuid();
}

/* The calling thread's name, truncated and zero-padded to size (strscpy_pad). */
static uint64_t helper_get_current_comm(uint64_t buf, uint64_t size, uint64_t r3, uint64_t r4,
					uint64_t r5)
{
	char comm[16] = {0};
	uint32_t n = (uint32_t)size;

	if (!n)
		return RET_INT(-EINVAL);
	prctl(PR_GET_NAME, comm);
	size_t len = strnlen(comm, sizeof(comm) - 1);
	if (len > n - 1)
		len = n - 1;
	memset(PTR(buf), 0, n);
	memcpy(PTR(buf), comm, len);
	return 0;
}

static uint64_t helper_ringbuf_output(uint64_t map, uint64_t data, uint64_t size, uint64_t flags,
				      uint64_t r5)
{
	return RET_INT(map_ringbuf_output(MAP(map), PTR(data), size, flags));
}

static uint64_t helper_ringbuf_reserve(uint64_t map, uint64_t size, uint64_t flags, uint64_t r4,
				       uint64_t r5)
{
	return (uintptr_t)map_ringbuf_reserve(MAP(map), size, flags);
}

static uint64_t helper_ringbuf_submit(uint64_t rec, uint64_t flags, uint64_t r3, uint64_t r4,
				      uint64_t r5)
{
	map_ringbuf_submit(PTR(rec), flags);
	return 0;
}

static uint64_t helper_ringbuf_discard(uint64_t rec, uint64_t flags, uint64_t r3, uint64_t r4,
				       uint64_t r5)
{
	map_ringbuf_discard(PTR(rec), flags);
	return 0;
}

static uint64_t helper_ringbuf_query(uint64_t map, uint64_t flags, uint64_t r3, uint64_t r4,
				     uint64_t r5)
{
	return map_ringbuf_query(MAP(map), flags);
}

static _Atomic(helper_kernel_name_fn) helper_kernel_name;

void helper_set_kernel_name_fn(helper_kernel_name_fn fn)
{
	helper_kernel_name = fn;
}

static uint64_t helper_cuda_kernel_name(uint64_t buf, uint64_t size, uint64_t handle,
					uint64_t r4, uint64_t r5)
{
	helper_kernel_name_fn fn = helper_kernel_name;
	char *out = (char *)(uintptr_t)buf;

	if (fn)
		return (uint64_t)fn(handle, out, size);
	out[0] = 0; /* size > 0: ARG_CONST_SIZE */
	return (uint64_t)-ENOENT;
}

/*
 * Implementation, return, arguments, flags of each helper in HELPER_IDS.
 * GPU marks helpers that GPU programs may call: each one is implemented by
 * the device runtime too (its own table, src/ptx/ptx_helpers.c; test_helpers
 * checks this).  The device runtime also has ringbuf_reserve/submit/
 * discard/query, left unmarked here: the verifier's GPU profile refuses
 * reserve on the device (tests/verifier/reject/gpu_ringbuf_reserve.txt).
 */
#define HOST HELPER_F_HOST
#define GPU HELPER_F_GPU
#define LEAK HELPER_F_PKT_LEAK
#define HELPER_SIG_MAP_LOOKUP_ELEM helper_map_lookup_elem, RET_PTR_TO_MAP_VALUE_OR_NULL, \
	{ARG_CONST_MAP_PTR, ARG_PTR_TO_MAP_KEY}, HOST | GPU
#define HELPER_SIG_MAP_UPDATE_ELEM helper_map_update_elem, RET_INTEGER, \
	{ARG_CONST_MAP_PTR, ARG_PTR_TO_MAP_KEY, ARG_PTR_TO_MAP_VALUE, ARG_SCALAR}, HOST | GPU
#define HELPER_SIG_MAP_DELETE_ELEM helper_map_delete_elem, RET_INTEGER, \
	{ARG_CONST_MAP_PTR, ARG_PTR_TO_MAP_KEY}, HOST | GPU
#define HELPER_SIG_PROBE_READ helper_probe_read, RET_INTEGER, \
	{ARG_PTR_TO_UNINIT_MEM, ARG_CONST_SIZE_OR_ZERO, ARG_ANYTHING}, HOST
#define HELPER_SIG_KTIME_GET_NS helper_ktime_get_ns, RET_INTEGER, {0}, HOST | GPU
#define HELPER_SIG_TRACE_PRINTK helper_trace_printk, RET_INTEGER, \
	{ARG_PTR_TO_MEM, ARG_CONST_SIZE, ARG_ANYTHING, ARG_ANYTHING, ARG_ANYTHING}, \
	HOST | GPU | LEAK
#define HELPER_SIG_GET_PRANDOM_U32 helper_get_prandom_u32, RET_INTEGER, {0}, HOST | GPU
#define HELPER_SIG_GET_SMP_PROCESSOR_ID helper_get_smp_processor_id, RET_INTEGER, {0}, \
	HOST | GPU
#define HELPER_SIG_GET_CURRENT_PID_TGID helper_get_current_pid_tgid, RET_INTEGER, {0}, HOST
#define HELPER_SIG_GET_CURRENT_UID_GID helper_get_current_uid_gid, RET_INTEGER, {0}, HOST
#define HELPER_SIG_GET_CURRENT_COMM helper_get_current_comm, RET_INTEGER, \
	{ARG_PTR_TO_UNINIT_MEM, ARG_CONST_SIZE}, HOST
#define HELPER_SIG_PROBE_READ_STR helper_probe_read_str, RET_INTEGER, \
	{ARG_PTR_TO_UNINIT_MEM, ARG_CONST_SIZE_OR_ZERO, ARG_ANYTHING}, HOST
#define HELPER_SIG_PROBE_READ_USER HELPER_SIG_PROBE_READ
#define HELPER_SIG_PROBE_READ_KERNEL HELPER_SIG_PROBE_READ
#define HELPER_SIG_PROBE_READ_USER_STR HELPER_SIG_PROBE_READ_STR
#define HELPER_SIG_PROBE_READ_KERNEL_STR HELPER_SIG_PROBE_READ_STR
#define HELPER_SIG_KTIME_GET_BOOT_NS helper_ktime_get_boot_ns, RET_INTEGER, {0}, HOST
#define HELPER_SIG_RINGBUF_OUTPUT helper_ringbuf_output, RET_INTEGER, \
	{ARG_CONST_MAP_PTR, ARG_PTR_TO_MEM, ARG_CONST_SIZE_OR_ZERO, ARG_SCALAR}, \
	HOST | GPU | LEAK
#define HELPER_SIG_RINGBUF_RESERVE helper_ringbuf_reserve, RET_PTR_TO_RINGBUF_REC_OR_NULL, \
	{ARG_CONST_MAP_PTR, ARG_CONST_ALLOC_SIZE, ARG_SCALAR}, HOST
#define HELPER_SIG_RINGBUF_SUBMIT helper_ringbuf_submit, RET_VOID, \
	{ARG_PTR_TO_RINGBUF_REC, ARG_SCALAR}, HOST | LEAK
#define HELPER_SIG_RINGBUF_DISCARD helper_ringbuf_discard, RET_VOID, \
	{ARG_PTR_TO_RINGBUF_REC, ARG_SCALAR}, HOST
#define HELPER_SIG_RINGBUF_QUERY helper_ringbuf_query, RET_INTEGER, \
	{ARG_CONST_MAP_PTR, ARG_SCALAR}, HOST
/* snprintf's data array may be NULL with size 0 (ARG_PTR_TO_MEM: the
 * verifier accepts a NULL pointer when the size may be 0). */
#define HELPER_SIG_SNPRINTF helper_snprintf, RET_INTEGER, \
	{ARG_PTR_TO_UNINIT_MEM, ARG_CONST_SIZE_OR_ZERO, ARG_PTR_TO_CONST_STR, ARG_PTR_TO_MEM, \
	 ARG_CONST_SIZE_OR_ZERO}, HOST
#define HELPER_SIG_TRACE_VPRINTK helper_trace_vprintk, RET_INTEGER, \
	{ARG_PTR_TO_MEM, ARG_CONST_SIZE, ARG_PTR_TO_MEM, ARG_CONST_SIZE_OR_ZERO}, HOST | LEAK

/* The device runtime's is inline (src/ptx/ptx_emit.c: red/atom.max). */
#define HELPER_SIG_GPU_ATOMIC_MAX helper_gpu_atomic_max, RET_INTEGER, \
	{ARG_PTR_TO_ATOMIC_U64, ARG_SCALAR}, HOST | GPU

#define HELPER_SIG_CUDA_KERNEL_NAME helper_cuda_kernel_name, RET_INTEGER, \
	{ARG_PTR_TO_UNINIT_MEM, ARG_CONST_SIZE, ARG_ANYTHING}, HOST

#define HELPER_PROTO(name, id_, str) {id_, str, HELPER_SIG_##name},
static const struct helper_proto helper_protos[] = {HELPER_IDS(HELPER_PROTO)};
#undef HELPER_PROTO

const struct helper_proto *helper_proto_find(uint32_t id)
{
	for (size_t i = 0; i < sizeof(helper_protos) / sizeof(helper_protos[0]); i++)
		if (helper_protos[i].id == id)
			return &helper_protos[i];
	return NULL;
}

static struct helper_table helper_defaults;

static void helper_defaults_init(void)
{
	for (size_t i = 0; i < sizeof(helper_protos) / sizeof(helper_protos[0]); i++)
		helper_defaults.fn[helper_protos[i].id] = helper_protos[i].fn;
}

const struct helper_table *helper_table_default(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, helper_defaults_init);
	return &helper_defaults;
}
