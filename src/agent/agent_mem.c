/* SPDX-License-Identifier: MIT */
/*
 * agent_mem.c - memory policies over the application's real managed
 * memory: the runtime of src/policy (mem.h) fed by CUPTI's unified-memory
 * records, acting through cuMemPrefetchAsync.
 *
 * In: cuMemAllocManaged / cuMemFree are wrapped, so the runtime knows the
 * managed ranges (the only addresses it ever names to the driver); GPU
 * page-fault records (address of the faulting page) and host-to-device
 * migrations (every page they moved) are queued as faults and serviced in
 * batches of at most MEM_BATCH records that lie within MEM_BATCH_GAP_NS of
 * GPU time of each other (and at a free and at exit: agent_mem_flush).
 * Out: the runtime's decisions become placement hints on a stream of the
 * agent's own, so they overlap the application's kernels: pages it
 * prefetches (the policy's region minus what the driver's fault service
 * moves by itself: the faulting big pages and its density tree) go to the
 * GPU, evicted blocks go to the CPU.
 * Each range is cut to the managed allocations that cover it.
 *
 * Data is never touched: a prefetch only moves pages, the driver keeps them
 * coherent, so a policy can cost time but never correctness.  The budget is
 * the runtime's model of GPU-resident bytes (mem_rt keeps it under
 * capacity whatever the policy does); the driver's own migrations that no
 * record reports are invisible to it.  Fail-open: a driver call that fails
 * stops the hints (one notice) and the application runs on.
 *
 * Threads: records arrive on CUPTI's thread, allocations on the
 * application's; one mutex covers the runtime.  Driver calls are made by
 * whichever thread services a batch, with the application's context made
 * current on it (CUPTI's thread has none).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent_mem.h"
#include "policy/mem.h"
#include "policy/uvm_sim.h"

enum { MEM_BATCH = 256 }; /* the driver's fault batch */
/* A migration's cause (a record's flags; CUPTI's
 * CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_* and the UVM driver's
 * UvmEventMigrationCause share the numbers): a device-to-host migration
 * that is neither a user's migration (the runtime's eviction hints,
 * cuMemPrefetchAsync) nor the driver's eviction is the CPU's own access
 * (coherence, and the driver's read-ahead around a CPU fault: prefetch). */
enum { AGENT_MEM_CAUSE_USER = 1, AGENT_MEM_CAUSE_EVICTION = 4 };
#define MEM_BATCH_GAP_NS 1000000ull

struct agent_mem_range {
	uint64_t va, len;
};

static struct {
	pthread_mutex_t lock;
	int inited;                /* rt and pol are set up */
	int active;                /* decisions are made (read without the lock) */
	int failed;                /* driver calls stopped (fail-open; atomic: the hint thread sets it) */
	int async_hints;           /* hints go through the hint thread (agent_mem_async_hints) */
	struct mem_rt rt;
	struct mem_policy *pol;
	struct agent_mem_driver drv;
	struct agent_mem_stats st;
	struct agent_mem_range *ranges;
	size_t range_cnt, range_cap;
	struct mem_fault queue[MEM_BATCH];
	size_t queued;
	uint64_t queue_ts;          /* GPU time of the first queued record */
	CUcontext ctx;              /* the context of the first managed allocation */
	CUstream stream;
	CUdevice dev;
	int have_stream;
	int device_signal;          /* the device reported touches: CUPTI only counted */
	uint64_t win_base;          /* first block of the device signal's window (0: unset) */
	int tracing;                /* record what the device signal saw (trace) */
	struct uvm_trace trace;
} am = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* A placement hint on its way to the driver. */
struct agent_mem_hint {
	uint64_t va, len;
	int to_gpu;
};

/*
 * The hint thread (agent_mem_async_hints): the runtime's decisions are
 * queued, in order, and one thread of the agent's makes the driver calls,
 * so that a cuMemPrefetchAsync that blocks its caller (the driver may
 * unmap and start the copies in the calling thread) does not hold up the
 * application's launching thread.  Lock order: am.lock, then hq.lock; the
 * thread never takes am.lock.  Its counts (also the synchronous path's)
 * are hq.st, merged into the statistics when they are read.
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t work, idle;
	struct agent_mem_hint *q; /* a ring of cap, cnt from head */
	size_t head, cnt, cap;
	int busy;                 /* the thread is making a call */
	int running, stop;
	pid_t pid;                /* the process the thread runs in (fork) */
	pthread_t thread;
	struct {
		uint64_t calls_gpu, calls_cpu, bytes_gpu, bytes_cpu, ns, errors;
	} st;
} hq = {.lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER,
	.idle = PTHREAD_COND_INITIALIZER};

uint64_t agent_mem_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int agent_mem_active(void)
{
	return __atomic_load_n(&am.active, __ATOMIC_ACQUIRE);
}

static void agent_mem_set_active(int on)
{
	__atomic_store_n(&am.active, on, __ATOMIC_RELEASE);
}

/* A driver call failed: stop issuing hints, say so once. */
static void agent_mem_fail(const char *what, CUresult r)
{
	pthread_mutex_lock(&hq.lock);
	hq.st.errors++;
	pthread_mutex_unlock(&hq.lock);
	if (__atomic_exchange_n(&am.failed, 1, __ATOMIC_RELAXED))
		return;
	if (r != CUDA_ERROR_DEINITIALIZED) /* at exit, after the runtime's teardown */
		am.drv.notice("memory policy: %s failed (CUresult %d): placement hints stopped, "
			     "the application runs on", what, (int)r);
}

/* The agent's stream, created at the first hint in the servicing thread. */
static int agent_mem_stream(void)
{
	CUcontext cur = NULL;
	CUresult r;

	if (__atomic_load_n(&am.failed, __ATOMIC_RELAXED) || !am.ctx)
		return -1;
	if (am.drv.ctx_get_current(&cur) == CUDA_SUCCESS && cur != am.ctx &&
	    (r = am.drv.ctx_set_current(am.ctx)) != CUDA_SUCCESS) {
		agent_mem_fail("cuCtxSetCurrent", r);
		return -1;
	}
	if (am.have_stream)
		return 0;
	if ((r = am.drv.ctx_get_device(&am.dev)) != CUDA_SUCCESS) {
		agent_mem_fail("cuCtxGetDevice", r);
		return -1;
	}
	if ((r = am.drv.stream_create(&am.stream, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS) {
		agent_mem_fail("cuStreamCreate", r);
		return -1;
	}
	am.have_stream = 1;
	return 0;
}

/* The driver call of one hint (the hint thread, or the caller of
 * agent_mem_hint when hints are synchronous). */
static void agent_mem_issue(const struct agent_mem_hint *h)
{
	if (agent_mem_stream())
		return;
	CUmemLocation loc = {.type = h->to_gpu ? CU_MEM_LOCATION_TYPE_DEVICE
					       : CU_MEM_LOCATION_TYPE_HOST,
			     .id = h->to_gpu ? (int)am.dev : 0};
	uint64_t t0 = agent_mem_now_ns();
	CUresult r = am.drv.prefetch((CUdeviceptr)h->va, h->len, loc, 0, am.stream);
	uint64_t dt = agent_mem_now_ns() - t0;
	pthread_mutex_lock(&hq.lock);
	hq.st.ns += dt;
	if (r == CUDA_SUCCESS) {
		*(h->to_gpu ? &hq.st.calls_gpu : &hq.st.calls_cpu) += 1;
		*(h->to_gpu ? &hq.st.bytes_gpu : &hq.st.bytes_cpu) += h->len;
	}
	pthread_mutex_unlock(&hq.lock);
	if (r != CUDA_SUCCESS)
		agent_mem_fail("cuMemPrefetchAsync", r);
}

static void *agent_mem_hint_main(void *arg)
{
	pthread_mutex_lock(&hq.lock);
	while (!hq.stop) {
		if (!hq.cnt) {
			pthread_cond_wait(&hq.work, &hq.lock);
			continue;
		}
		struct agent_mem_hint h = hq.q[hq.head];
		hq.head = (hq.head + 1) % hq.cap;
		hq.cnt--;
		hq.busy = 1;
		pthread_mutex_unlock(&hq.lock);
		agent_mem_issue(&h);
		pthread_mutex_lock(&hq.lock);
		hq.busy = 0;
		if (!hq.cnt)
			pthread_cond_broadcast(&hq.idle);
	}
	hq.cnt = 0; /* stopped: what is left is not needed any more */
	pthread_cond_broadcast(&hq.idle);
	pthread_mutex_unlock(&hq.lock);
	return NULL;
}

/* Queue h for the hint thread (started at the first); 0, or -1 when it
 * cannot be queued (the caller makes the call itself).  hq.lock held. */
static int agent_mem_hint_queue(const struct agent_mem_hint *h)
{
	if (hq.running && hq.pid != getpid())
		hq.running = 0, hq.cnt = 0, hq.busy = 0; /* a forked child: no thread */
	if (!hq.running) {
		hq.stop = 0;
		if (pthread_create(&hq.thread, NULL, agent_mem_hint_main, NULL))
			return -1;
		hq.running = 1;
		hq.pid = getpid();
	}
	if (hq.cnt == hq.cap) {
		size_t cap = hq.cap ? hq.cap * 2 : 256;
		struct agent_mem_hint *n = malloc(cap * sizeof(*n));
		if (!n)
			return -1;
		for (size_t i = 0; i < hq.cnt; i++)
			n[i] = hq.q[(hq.head + i) % hq.cap];
		free(hq.q);
		hq.q = n;
		hq.head = 0;
		hq.cap = cap;
	}
	hq.q[(hq.head + hq.cnt++) % hq.cap] = *h;
	pthread_cond_signal(&hq.work);
	return 0;
}

/* Prefetch [va, va + len) to the GPU or the CPU, cut to managed ranges
 * (am.lock held). */
static void agent_mem_hint(uint64_t va, uint64_t len, int to_gpu)
{
	for (size_t i = 0; i < am.range_cnt; i++) {
		const struct agent_mem_range *m = &am.ranges[i];
		uint64_t lo = va > m->va ? va : m->va;
		uint64_t hi = va + len < m->va + m->len ? va + len : m->va + m->len;
		if (lo >= hi || __atomic_load_n(&am.failed, __ATOMIC_RELAXED))
			continue;
		struct agent_mem_hint h = {lo, hi - lo, to_gpu};
		int queued = 0;
		if (am.async_hints) {
			pthread_mutex_lock(&hq.lock);
			queued = !agent_mem_hint_queue(&h);
			pthread_mutex_unlock(&hq.lock);
		}
		if (!queued)
			agent_mem_issue(&h);
	}
}

void agent_mem_hints_drain(void)
{
	pthread_mutex_lock(&hq.lock);
	while (hq.running && hq.pid == getpid() && (hq.cnt || hq.busy))
		pthread_cond_wait(&hq.idle, &hq.lock);
	pthread_mutex_unlock(&hq.lock);
}

/* Stop the hint thread; hints still queued are dropped. */
static void agent_mem_hints_stop(void)
{
	pthread_mutex_lock(&hq.lock);
	int join = hq.running && hq.pid == getpid();
	hq.stop = 1;
	hq.running = 0;
	pthread_cond_broadcast(&hq.work);
	pthread_mutex_unlock(&hq.lock);
	if (join)
		pthread_join(hq.thread, NULL);
}

void agent_mem_async_hints(int on)
{
	if (!on)
		agent_mem_hints_stop();
	pthread_mutex_lock(&am.lock);
	am.async_hints = on;
	pthread_mutex_unlock(&am.lock);
}

/* One hint per run of set pages of the block at va. */
static void agent_mem_hint_runs(uint64_t va, const struct mem_bits *pages, int to_gpu)
{
	for (uint32_t p = 0; p < MEM_PAGES;) {
		if (!mem_bits_test(pages, p)) {
			p++;
			continue;
		}
		uint32_t end = p;
		while (end < MEM_PAGES && mem_bits_test(pages, end))
			end++;
		agent_mem_hint(va + ((uint64_t)p << MEM_PAGE_SHIFT),
			       (uint64_t)(end - p) << MEM_PAGE_SHIFT, to_gpu);
		p = end;
	}
}

/* Only what the driver's own fault service does not move (its big pages
 * and density tree) needs a hint: the rest is moving already. */
static void agent_mem_migrate_in(void *arg, uint64_t va, const struct mem_bits *pages,
				 const struct mem_bits *driver)
{
	struct mem_bits prefetched;

	for (uint32_t w = 0; w < MEM_WORDS; w++)
		prefetched.w[w] = pages->w[w] & ~driver->w[w];
	agent_mem_hint_runs(va, &prefetched, 1);
}

static void agent_mem_evict(void *arg, uint64_t va, const struct mem_bits *pages)
{
	agent_mem_hint_runs(va, pages, 0);
}

/* A block prefetch may name a block that holds managed memory (lock held). */
static int agent_mem_covers(void *arg, uint64_t va)
{
	for (size_t i = 0; i < am.range_cnt; i++)
		if (am.ranges[i].va < va + (1ull << MEM_BLOCK_SHIFT) &&
		    am.ranges[i].va + am.ranges[i].len > va)
			return 1;
	return 0;
}

int agent_mem_setup(uint64_t budget, const char *policies, const struct agent_mem_driver *drv,
		    struct err *e)
{
	struct mem_rt_backend be = {.migrate_in = agent_mem_migrate_in, .evict = agent_mem_evict,
				    .covers = agent_mem_covers};
	uint64_t cap = budget >> MEM_BLOCK_SHIFT;
	int err;

	if (!cap || cap > UINT32_MAX)
		return err_set(e, EINVAL, "memory budget %llu bytes: must be 2 MiB .. 8 PiB",
			       (unsigned long long)budget);
	agent_mem_teardown();
	pthread_mutex_lock(&am.lock);
	am.pol = NULL;
	if (policies && *policies && (err = mem_policy_open(policies, &am.pol, e)))
		goto out;
	if ((err = mem_rt_init(&am.rt, (uint32_t)cap, am.pol, &be, e))) {
		mem_policy_free(am.pol);
		goto out;
	}
	am.drv = *drv;
	memset(&am.st, 0, sizeof(am.st));
	pthread_mutex_lock(&hq.lock);
	memset(&hq.st, 0, sizeof(hq.st));
	pthread_mutex_unlock(&hq.lock);
	am.st.budget = budget;
	am.st.capacity_blocks = cap;
	am.inited = 1;
	agent_mem_set_active(1);
	am.failed = am.have_stream = am.device_signal = am.tracing = 0;
	am.win_base = 0;
	am.queued = 0;
	am.range_cnt = 0;
	am.ctx = NULL;
out:
	pthread_mutex_unlock(&am.lock);
	return err;
}

void agent_mem_teardown(void)
{
	agent_mem_hints_stop();
	pthread_mutex_lock(&am.lock);
	if (am.inited) {
		mem_rt_fini(&am.rt);
		mem_policy_free(am.pol);
		free(am.ranges);
		am.ranges = NULL;
		uvm_trace_free(&am.trace);
		am.range_cnt = am.range_cap = 0;
		am.inited = 0;
		agent_mem_set_active(0);
	}
	pthread_mutex_unlock(&am.lock);
}

/* The runtime's counts into the statistics (lock held).  The peak is
 * taken where the budget holds: after each service, or with the device
 * signal after each kernel boundary's trim. */
static void agent_mem_sync_stats(void)
{
	am.st.block_prefetches = am.rt.st.block_prefetches;
	am.st.batches = am.rt.st.batches;
	am.st.evictions = am.rt.st.evictions;
	am.st.activations = am.rt.st.activations;
	am.st.clamped = am.rt.st.clamped;
	am.st.policy_errors = am.rt.st.policy_errors;
	if ((!am.rt.defer_evict || am.rt.table.list_len <= am.rt.capacity) &&
	    am.rt.table.list_len > am.st.peak_resident_blocks)
		am.st.peak_resident_blocks = am.rt.table.list_len;
}

/* Service the queue (lock held). */
static void agent_mem_service(void)
{
	struct err e = {{0}};

	if (!am.queued && !mem_rt_ahead_pending(&am.rt))
		return;
	uint64_t t0 = agent_mem_now_ns();
	if (mem_rt_service(&am.rt, am.queue, am.queued, &e)) {
		am.drv.notice("memory policy stopped: %s", e.msg);
		agent_mem_set_active(0); /* the model is incomplete: no more decisions */
	}
	am.st.service_ns += agent_mem_now_ns() - t0;
	am.queued = 0;
	agent_mem_sync_stats();
}

/* A kernel boundary under the device signal: evict down to the budget
 * (lock held). */
static void agent_mem_trim(void)
{
	struct err e = {{0}};

	uint64_t t0 = agent_mem_now_ns();
	if (mem_rt_trim(&am.rt, &e)) {
		am.drv.notice("memory policy stopped: %s", e.msg);
		agent_mem_set_active(0);
	}
	am.st.service_ns += agent_mem_now_ns() - t0;
	agent_mem_sync_stats();
}

void agent_mem_flush(void)
{
	pthread_mutex_lock(&am.lock);
	if (agent_mem_active())
		agent_mem_service();
	pthread_mutex_unlock(&am.lock);
}

static const struct agent_mem_range *agent_mem_range_of(uint64_t addr)
{
	for (size_t i = 0; i < am.range_cnt; i++)
		if (addr - am.ranges[i].va < am.ranges[i].len)
			return &am.ranges[i];
	return NULL;
}

/* Tracing: the blocks of a managed range, so that the simulator knows what
 * a whole-block prefetch may name (lock held). */
static void agent_mem_trace_managed(uint64_t va, uint64_t len)
{
	struct err e = {{0}};
	uint64_t last = (va + len - 1) >> MEM_BLOCK_SHIFT;

	for (uint64_t b = va >> MEM_BLOCK_SHIFT; am.tracing && b <= last; b++) {
		struct uvm_rec r = {.addr = b << MEM_BLOCK_SHIFT, .ts_ns = agent_mem_now_ns(),
				    .pid = (uint32_t)getpid(), .access = UVM_ACCESS_MANAGED};
		if (uvm_trace_append(&am.trace, &r, &e)) {
			am.drv.notice("memory policy: trace: %s (recording stopped)", e.msg);
			am.tracing = 0;
		}
	}
}

void agent_mem_alloc(uint64_t va, uint64_t len)
{
	CUcontext cur = NULL;

	pthread_mutex_lock(&am.lock);
	if (!agent_mem_active() || !len)
		goto out;
	if (am.range_cnt == am.range_cap) {
		size_t cap = am.range_cap ? am.range_cap * 2 : 16;
		struct agent_mem_range *n = realloc(am.ranges, cap * sizeof(*n));
		if (!n)
			goto out; /* untracked: the runtime never names it to the driver */
		am.ranges = n;
		am.range_cap = cap;
	}
	am.ranges[am.range_cnt++] = (struct agent_mem_range){va, len};
	agent_mem_trace_managed(va, len);
	am.st.allocs++;
	am.st.alloc_bytes += len;
	if (!am.ctx && am.drv.ctx_get_current(&cur) == CUDA_SUCCESS)
		am.ctx = cur;
out:
	pthread_mutex_unlock(&am.lock);
}

void agent_mem_free(uint64_t va)
{
	pthread_mutex_lock(&am.lock);
	for (size_t i = 0; agent_mem_active() && i < am.range_cnt; i++) {
		if (am.ranges[i].va != va)
			continue;
		struct agent_mem_range gone = am.ranges[i];
		am.ranges[i] = am.ranges[--am.range_cnt];
		agent_mem_service(); /* queued faults may name the freed range */
		/* Blocks no other live allocation shares leave the model. */
		uint64_t first = gone.va >> MEM_BLOCK_SHIFT;
		uint64_t last = (gone.va + gone.len - 1) >> MEM_BLOCK_SHIFT;
		for (uint64_t b = first; b <= last; b++) {
			uint64_t lo = b << MEM_BLOCK_SHIFT, hi = lo + (1ull << MEM_BLOCK_SHIFT);
			int shared = 0;
			for (size_t k = 0; k < am.range_cnt && !shared; k++)
				shared = am.ranges[k].va < hi && am.ranges[k].va + am.ranges[k].len > lo;
			if (!shared)
				mem_rt_forget(&am.rt, lo);
		}
		/* no queued hint may reach the driver after the free */
		agent_mem_hints_drain();
		break;
	}
	pthread_mutex_unlock(&am.lock);
}

/* Queue the page of addr as a fault (lock held). */
static void agent_mem_queue(uint64_t addr, uint32_t pid)
{
	if (!agent_mem_range_of(addr)) {
		am.st.untracked++;
		return;
	}
	am.queue[am.queued++] = (struct mem_fault){addr, pid};
	if (am.queued == MEM_BATCH)
		agent_mem_service();
}

void agent_mem_uvm(const struct gpuext_cupti_uvm *r)
{
	pthread_mutex_lock(&am.lock);
	if (!agent_mem_active())
		goto out;
	/* Records further apart than MEM_BATCH_GAP_NS are another batch of
	 * the driver's: service what is queued before taking this one. */
	if (!am.device_signal && am.queued && r->start - am.queue_ts > MEM_BATCH_GAP_NS)
		agent_mem_service();
	if (!am.queued)
		am.queue_ts = r->start;
	switch (r->kind) {
	case GPUEXT_CUPTI_UVM_GPU_FAULT:
		am.st.fault_records++;
		am.st.faults += r->count;
		if (!am.device_signal)
			agent_mem_queue(r->address, r->pid);
		break;
	case GPUEXT_CUPTI_UVM_HTOD: {
		/* Every page it moved is on the GPU now: the runtime learns the
		 * driver's own prefetches (pages it already has are dropped). */
		am.st.htod_records++;
		am.st.htod_bytes += r->bytes;
		uint64_t pages = (r->bytes + GPU_MEM_PAGE_SIZE - 1) / GPU_MEM_PAGE_SIZE;
		for (uint64_t p = 0; p < pages && agent_mem_active() && !am.device_signal; p++)
			agent_mem_queue(r->address + p * GPU_MEM_PAGE_SIZE, r->pid);
		break;
	}
	case GPUEXT_CUPTI_UVM_DTOH:
		am.st.dtoh_records++;
		am.st.dtoh_bytes += r->bytes;
		/* the host touched GPU-resident pages (the application's own
		 * reads), not an eviction: what no GPU-side trace holds */
		if (r->flags != AGENT_MEM_CAUSE_USER && r->flags != AGENT_MEM_CAUSE_EVICTION)
			am.st.dtoh_cpu_bytes += r->bytes;
		break;
	default:
		break;
	}
out:
	pthread_mutex_unlock(&am.lock);
}

void agent_mem_stats_get(struct agent_mem_stats *st)
{
	pthread_mutex_lock(&am.lock);
	*st = am.st;
	pthread_mutex_lock(&hq.lock);
	st->prefetch_calls_gpu = hq.st.calls_gpu;
	st->prefetch_calls_cpu = hq.st.calls_cpu;
	st->bytes_to_gpu = hq.st.bytes_gpu;
	st->bytes_to_cpu = hq.st.bytes_cpu;
	st->hint_ns = hq.st.ns;
	st->driver_errors = hq.st.errors;
	pthread_mutex_unlock(&hq.lock);
	pthread_mutex_unlock(&am.lock);
}

/* ---- the device access signal (agent_mem_signal.c) ------------------- */

void agent_mem_trace(int on)
{
	pthread_mutex_lock(&am.lock);
	am.tracing = on;
	pthread_mutex_unlock(&am.lock);
}

int agent_mem_window(uint32_t max_blocks, uint64_t *base, uint32_t *blocks)
{
	uint64_t lo = UINT64_MAX, hi = 0, untracked = 0;

	pthread_mutex_lock(&am.lock);
	for (size_t i = 0; i < am.range_cnt; i++) {
		uint64_t first = am.ranges[i].va >> MEM_BLOCK_SHIFT;
		uint64_t last = (am.ranges[i].va + am.ranges[i].len - 1) >> MEM_BLOCK_SHIFT;
		lo = first < lo ? first : lo;
		hi = last > hi ? last : hi;
	}
	/* The base never moves once set: the device's page epochs are kept
	 * by position.  Blocks below it or past max_blocks are not tracked. */
	if (!am.win_base && am.range_cnt)
		am.win_base = lo;
	*base = am.win_base;
	*blocks = 0;
	if (am.range_cnt && hi >= am.win_base)
		*blocks = hi - am.win_base + 1 > max_blocks ? max_blocks
							    : (uint32_t)(hi - am.win_base + 1);
	for (size_t i = 0; i < am.range_cnt; i++) {
		uint64_t first = am.ranges[i].va >> MEM_BLOCK_SHIFT;
		uint64_t last = (am.ranges[i].va + am.ranges[i].len - 1) >> MEM_BLOCK_SHIFT;
		for (uint64_t b = first; b <= last; b++)
			untracked += b < am.win_base || b - am.win_base >= *blocks;
	}
	am.st.untracked_blocks = untracked;
	pthread_mutex_unlock(&am.lock);
	return am.range_cnt ? 0 : -1;
}

void agent_mem_touched(const uint64_t *addrs, size_t n, uint32_t snapshot, uint64_t ts_ns)
{
	struct err e = {{0}};
	uint32_t pid = (uint32_t)getpid();

	pthread_mutex_lock(&am.lock);
	if (!agent_mem_active())
		goto out;
	/* the device reports touches: from now on it, not CUPTI, drives the
	 * model (an application whose kernels cannot be instrumented, as
	 * PyTorch's SASS-only ones, never gets here and keeps CUPTI) */
	am.device_signal = 1;
	am.rt.hits = 1; /* the signal is complete: hits are accesses too */
	/* what it reports ran with all of it resident: the budget holds at
	 * the snapshot (a kernel boundary), not within it */
	am.rt.defer_evict = 1;
	am.st.signal_snapshots++;
	am.st.signal_pages += n;
	for (size_t i = 0; i < n && agent_mem_active(); i++) {
		/* the window may hold other memory between managed ranges */
		if (!agent_mem_range_of(addrs[i])) {
			am.st.untracked++;
			continue;
		}
		/* every touch is recorded: the simulator decides its own faults */
		if (am.tracing) {
			struct uvm_rec r = {.addr = addrs[i], .ts_ns = ts_ns, .launch = snapshot,
					    .pid = pid, .access = UVM_ACCESS_READ};
			if (uvm_trace_append(&am.trace, &r, &e)) {
				am.drv.notice("memory policy: trace: %s (recording stopped)", e.msg);
				am.tracing = 0;
			}
		}
		if (mem_rt_resident(&am.rt, addrs[i])) {
			if (mem_rt_hit(&am.rt, addrs[i], snapshot, &e)) {
				am.drv.notice("memory policy stopped: %s", e.msg);
				agent_mem_set_active(0);
			}
			continue;
		}
		am.st.signal_faults++;
		agent_mem_queue(addrs[i], pid);
	}
	/* a snapshot is a kernel boundary: a batch never spans two, and the
	 * budget holds again after it */
	agent_mem_service();
	agent_mem_trim();
out:
	pthread_mutex_unlock(&am.lock);
}

void agent_mem_snapshot_time(uint64_t ns)
{
	pthread_mutex_lock(&am.lock);
	am.st.snapshot_ns += ns;
	pthread_mutex_unlock(&am.lock);
}

int agent_mem_trace_write(const char *path, struct err *e)
{
	pthread_mutex_lock(&am.lock);
	int err = uvm_trace_write(path, &am.trace, 0, e);
	pthread_mutex_unlock(&am.lock);
	return err;
}
