/* SPDX-License-Identifier: MIT */
/*
 * agent_cupti.c - the session's cupti/kernel, cupti/memcpy and cupti/uvm
 * programs (verified by agent_attach), JIT-compiled and run on every
 * record the CUPTI source delivers (src/cuda/cupti.h), with the record as
 * ctx (include/bpf/gpuext_cupti.h).  CUPTI is started only when the
 * session has such programs, only for the kinds they ask for, and only in
 * a process that uses CUDA: at its first cuInit (which every CUDA program
 * calls first; the children an application starts, compilers and shells,
 * never load libcupti).
 *
 * Flushes: CUPTI's own timer (GPUEXT_CUPTI_FLUSH_MS, default 100), at
 * context teardown (agent_cupti_flush from the agent's teardown hooks) and
 * at exit.  exit() runs atexit handlers newest first: the handler is
 * registered at start and again at the first record delivered (by then the
 * application's CUDA runtime has registered its own teardown, which must
 * not run before the last flush).
 *
 * Unified-memory records (cupti/uvm programs, the memory-policy runtime)
 * come from the nvidia-uvm driver's tools queue (src/cuda/uvm_tools.h) by
 * default: CUPTI's own copy of that queue drops events on a fault storm
 * without saying so (measured on an H200: 0 of the GPU faults and 91 of
 * 256 MiB of HtoD migrations of build/examples/managed reported).  The
 * queue is bound once the driver has opened the process's UVM address
 * space: at cuInit, else at the first context creation.
 * GPUEXT_UVM_SOURCE=cupti, or a /dev/nvidia-uvm-tools this user cannot
 * open, selects CUPTI's unified-memory counters instead.  CUPTI itself is
 * started only for what still needs it (kernels, copies).
 *
 * Fail-open: no libcupti, a refused CUPTI call, a program the JIT refuses:
 * one notice; the application and the other programs run on.  Dropped
 * records are reported at exit.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "agent_impl.h"
#include "agent_mem.h"
#include "bpf/jit.h"
#include "cuda/cupti.h"
#include "cuda/uvm_tools.h"
#include "ptx/ptx_inject.h"

enum { AGENT_CUPTI_MAX_PROGS = 16 };

/* The programs of one record kind, in load order. */
struct cupti_progs {
	struct prog *p[AGENT_CUPTI_MAX_PROGS];
	unsigned cnt;
};

static struct cupti_progs kernel_progs, memcpy_progs, uvm_progs;
static _Atomic uint64_t prog_errors;
static atomic_flag exit_registered_again = ATOMIC_FLAG_INIT;

static void agent_cupti_atexit(void);
static void agent_cupti_start(void);

/* 0: not started, 1: starting (a cuInit made by CUPTI itself passes), 2: done. */
static _Atomic int start_state;

static CUresult (*real_init)(unsigned int);

/* Unified-memory records from the driver's queue: 1 wanted and not yet
 * bound (no UVM address space at cuInit), 2 bound, 0 not wanted. */
static _Atomic int uvm_driver_state;

static void uvm_driver_attach(void);

AGENT_WRAP(agent_w_init, "cuInit", (unsigned int flags))
CUresult agent_w_init(unsigned int flags)
{
	AGENT_REAL(real_init, "cuInit");
	CUresult r = real_init(flags);
	int idle = 0;
	/* exported, so also called with no cupti programs: nothing to start */
	if (r == CUDA_SUCCESS && (kernel_progs.cnt + memcpy_progs.cnt + uvm_progs.cnt ||
				  agent_mem_active()) &&
	    atomic_compare_exchange_strong(&start_state, &idle, 1)) {
		agent_cupti_start();
		atomic_store(&start_state, 2);
	}
	return r;
}

/* Context creation: the UVM address space exists after it. */
static CUresult (*real_primary_retain)(CUcontext *, CUdevice);
static CUresult (*real_ctx_create_v2)(CUcontext *, unsigned int, CUdevice);
static CUresult (*real_ctx_create_v4)(CUcontext *, CUctxCreateParams *, unsigned int, CUdevice);

AGENT_WRAP(agent_w_primary_retain, "cuDevicePrimaryCtxRetain", (CUcontext *c, CUdevice d))
CUresult agent_w_primary_retain(CUcontext *c, CUdevice d)
{
	AGENT_REAL(real_primary_retain, "cuDevicePrimaryCtxRetain");
	CUresult r = real_primary_retain(c, d);
	if (r == CUDA_SUCCESS && atomic_load(&uvm_driver_state) == 1)
		uvm_driver_attach();
	return r;
}

AGENT_WRAP(agent_w_ctx_create_v2, "cuCtxCreate_v2", (CUcontext *c, unsigned int f, CUdevice d))
CUresult agent_w_ctx_create_v2(CUcontext *c, unsigned int f, CUdevice d)
{
	AGENT_REAL(real_ctx_create_v2, "cuCtxCreate_v2");
	CUresult r = real_ctx_create_v2(c, f, d);
	if (r == CUDA_SUCCESS && atomic_load(&uvm_driver_state) == 1)
		uvm_driver_attach();
	return r;
}

AGENT_WRAP(agent_w_ctx_create_v4, "cuCtxCreate_v4",
	   (CUcontext *c, CUctxCreateParams *p, unsigned int f, CUdevice d))
CUresult agent_w_ctx_create_v4(CUcontext *c, CUctxCreateParams *p, unsigned int f, CUdevice d)
{
	AGENT_REAL(real_ctx_create_v4, "cuCtxCreate_v4");
	CUresult r = real_ctx_create_v4(c, p, f, d);
	if (r == CUDA_SUCCESS && atomic_load(&uvm_driver_state) == 1)
		uvm_driver_attach();
	return r;
}

static const struct agent_hooked cupti_hooked[] = {
	{"cuInit", (void *)agent_w_init, (void **)&real_init},
	{"cuDevicePrimaryCtxRetain", (void *)agent_w_primary_retain, (void **)&real_primary_retain},
	{"cuCtxCreate_v2", (void *)agent_w_ctx_create_v2, (void **)&real_ctx_create_v2},
	{"cuCtxCreate_v4", (void *)agent_w_ctx_create_v4, (void **)&real_ctx_create_v4},
};

static void *agent_cupti_resolve(const char *name, void *real)
{
	const struct agent_hooked *h =
		agent_hooked_find(cupti_hooked, sizeof(cupti_hooked) / sizeof(cupti_hooked[0]), name);
	return h ? agent_hooked_take(h, real) : NULL;
}

static void run_all(const struct cupti_progs *ps, const void *rec)
{
	struct prog_run_opts opts = {.args = {(uintptr_t)rec}};
	uint64_t r0;

	if (!atomic_flag_test_and_set(&exit_registered_again))
		atexit(agent_cupti_atexit);
	for (unsigned i = 0; i < ps->cnt; i++)
		if (jit_run(ps->p[i], &opts, &r0, NULL))
			atomic_fetch_add_explicit(&prog_errors, 1, memory_order_relaxed);
}

static void on_kernel(void *arg, const struct gpuext_cupti_kernel *r)
{
	run_all(&kernel_progs, r);
}

static void on_memcpy(void *arg, const struct gpuext_cupti_memcpy *r)
{
	run_all(&memcpy_progs, r);
}

static void on_uvm(void *arg, const struct gpuext_cupti_uvm *r)
{
	if (agent_mem_active())
		agent_mem_uvm(r);
	run_all(&uvm_progs, r);
}

void agent_cupti_flush(void)
{
	cupti_flush();
	uvmt_flush();
}

/* The driver's drops and counters at exit: the events delivered are
 * checked against the counters (GPUEXT_AGENT_VERBOSE). */
static void uvm_driver_report(void)
{
	struct uvmt_stats st;

	uvmt_stop();
	uvmt_stats_get(&st);
	if (st.dropped_total)
		agent_notice("the UVM driver dropped %llu unified-memory events (a queue of %u "
			     "entries was full): raise GPUEXT_UVM_QUEUE",
			     (unsigned long long)st.dropped_total, st.queue_entries);
	if (getenv("GPUEXT_AGENT_VERBOSE"))
		agent_notice("UVM driver: %llu records (%llu migrations, %llu GPU fault entries, %llu "
			     "CPU faults), %llu dropped; driver counters: htod_bytes %llu dtoh_bytes %llu "
			     "gpu_faults %llu cpu_faults %llu%s",
			     (unsigned long long)st.records,
			     (unsigned long long)st.by_type[UVMT_EV_MIGRATION],
			     (unsigned long long)st.by_type[UVMT_EV_GPU_FAULT],
			     (unsigned long long)st.by_type[UVMT_EV_CPU_FAULT],
			     (unsigned long long)st.dropped_total,
			     (unsigned long long)st.counters[UVMT_CNT_HTOD_BYTES],
			     (unsigned long long)st.counters[UVMT_CNT_DTOH_BYTES],
			     (unsigned long long)st.counters[UVMT_CNT_GPU_FAULTS],
			     (unsigned long long)st.counters[UVMT_CNT_CPU_FAULTS],
			     st.counters_ok ? "" : " (counters unavailable)");
}

static void agent_cupti_atexit(void)
{
	struct cupti_stats st;

	if (uvmt_running())
		uvm_driver_report();
	if (!cupti_running())
		return;
	cupti_stop();
	cupti_stats_get(&st);
	if (st.dropped || st.starved)
		agent_notice("CUPTI dropped %llu activity records (%llu buffer requests found the "
			     "pool empty): raise GPUEXT_CUPTI_BUFFERS",
			     (unsigned long long)st.dropped, (unsigned long long)st.starved);
	if (prog_errors)
		agent_notice("%llu cupti/* program runs failed",
			     (unsigned long long)atomic_load(&prog_errors));
	if (getenv("GPUEXT_AGENT_VERBOSE"))
		agent_notice("CUPTI (%s): %llu kernels, %llu memcpys, %llu memsets, %llu unified-memory "
			     "events, %llu API calls (%llu GPU records not joined), %llu buffers",
			     cupti_lib_path(), (unsigned long long)st.kernels, (unsigned long long)st.memcpys,
			     (unsigned long long)st.memsets, (unsigned long long)st.uvm,
			     (unsigned long long)st.api, (unsigned long long)st.unjoined,
			     (unsigned long long)st.buffers);
}

/* The list for p's type, or NULL when p is not a CUPTI program. */
static struct cupti_progs *progs_of(const struct prog *p)
{
	switch (p->type) {
	case PROG_TYPE_CUPTI_KERNEL: return &kernel_progs;
	case PROG_TYPE_CUPTI_MEMCPY: return &memcpy_progs;
	case PROG_TYPE_CUPTI_UVM: return &uvm_progs;
	default: return NULL;
	}
}

static unsigned env_uint(const char *name, unsigned dflt)
{
	const char *v = getenv(name);
	return v && *v ? (unsigned)strtoul(v, NULL, 0) : dflt;
}

/* GPUEXT_CUPTI_API: which API calls CUPTI records for the join: "driver",
 * "runtime", "0" (none), anything else both. */
static unsigned api_kinds(const char *v)
{
	if (!v || !*v)
		return CUPTI_WANT_API;
	if (!strcmp(v, "0"))
		return 0;
	if (!strcmp(v, "driver"))
		return CUPTI_WANT_DRIVER_API;
	if (!strcmp(v, "runtime"))
		return CUPTI_WANT_RUNTIME_API;
	return CUPTI_WANT_API;
}

/* After agent_attach (constructor 102) has verified the programs. */
__attribute__((constructor(104))) static void agent_cupti_init(void)
{
	struct session *s = agent_session;
	struct err e = {{0}};

	for (size_t i = 0; s && i < s->obj->prog_cnt; i++) {
		struct prog *p = s->obj->progs[i];
		struct cupti_progs *ps = progs_of(p);
		if (!ps || !p->verified)
			continue; /* not ours, or rejected (already reported) */
		if (ps->cnt == AGENT_CUPTI_MAX_PROGS) {
			agent_notice("program '%s' (%s) not attached: more than %d programs in one "
				     "cupti section", p->name, p->section, AGENT_CUPTI_MAX_PROGS);
			session_count(s, SESSION_ERRORS);
			continue;
		}
		if (!p->jit && jit_compile(p, NULL, &e)) {
			agent_notice("program '%s' (%s) not attached: %s", p->name, p->section,
				     e.msg);
			session_count(s, SESSION_ERRORS);
			continue;
		}
		ps->p[ps->cnt++] = p;
	}
	if ((kernel_progs.cnt + memcpy_progs.cnt + uvm_progs.cnt || agent_mem_active()) &&
	    agent_hook_register(agent_cupti_resolve))
		agent_notice("cupti programs disabled: too many hook resolvers");
}

/* Bind the driver's queue (state 1 -> 2); a process without a UVM address
 * space yet stays at 1 for the next context creation. */
static void uvm_driver_attach(void)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct err e = {{0}};
	struct uvmt_opts o = {
		.queue_entries = env_uint("GPUEXT_UVM_QUEUE", 0),
		.poll_ms = env_uint("GPUEXT_UVM_POLL_MS", 0),
		.uvm_fd = -1,
	};

	pthread_mutex_lock(&lock);
	if (atomic_load(&uvm_driver_state) == 1) {
		int ret = uvmt_start(&o, on_uvm, NULL, &e);
		if (!ret) {
			atomic_store(&uvm_driver_state, 2);
			atexit(agent_cupti_atexit);
		} else if (ret != -ENODEV) {
			atomic_store(&uvm_driver_state, 0);
			session_count(agent_session, SESSION_ERRORS);
			agent_notice("unified-memory events disabled: %s", e.msg);
		}
	}
	pthread_mutex_unlock(&lock);
}

/* Where unified-memory records come from (the header comment): 1 for the
 * driver's queue, 0 for CUPTI's counters. */
static int uvm_from_driver(void)
{
	const char *v = getenv("GPUEXT_UVM_SOURCE");
	if (v && !strcmp(v, "cupti"))
		return 0;
	return !access("/dev/nvidia-uvm-tools", R_OK | W_OK);
}

/* Start CUPTI and the driver's queue: once per process, from the first cuInit. */
static void agent_cupti_start(void)
{
	struct session *s = agent_session;
	struct err e = {{0}};
	int want_uvm = uvm_progs.cnt || agent_mem_active();

	if (want_uvm && uvm_from_driver()) {
		atomic_store(&uvm_driver_state, 1);
		uvm_driver_attach();
		want_uvm = 0;
	}
	struct cupti_opts o = {
		.kind_mask = (kernel_progs.cnt ? CUPTI_WANT_KERNEL : 0) |
			     (memcpy_progs.cnt ? CUPTI_WANT_MEMCPY : 0) |
			     (want_uvm ? CUPTI_WANT_UVM : 0),
		.flush_ms = env_uint("GPUEXT_CUPTI_FLUSH_MS", 100),
		.buffer_count = env_uint("GPUEXT_CUPTI_BUFFERS", 16),
		.buffer_size = (size_t)env_uint("GPUEXT_CUPTI_BUFFER_KB", 4096) << 10,
	};
	if (kernel_progs.cnt || memcpy_progs.cnt)
		o.kind_mask |= api_kinds(getenv("GPUEXT_CUPTI_API"));
	if (!o.kind_mask)
		return; /* everything wanted comes from the driver's queue */
	struct cupti_sink sink = {on_kernel, on_memcpy, on_uvm, NULL, PTX_FLAT_SUFFIX};
	if (cupti_start(&o, &sink, &e)) {
		session_count(s, SESSION_ERRORS);
		agent_notice("cupti programs disabled, the application runs unobserved: %s",
			     e.msg);
		return;
	}
	atexit(agent_cupti_atexit);
}
