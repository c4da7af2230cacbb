/* SPDX-License-Identifier: MIT */
/*
 * fakecupti.c - a fake libcupti.so for testing gpuext's CUPTI source
 * without a GPU.  It speaks CUPTI's activity protocol: the client's
 * buffer-requested callback gives it buffers, it writes records in CUPTI's
 * own structs (cupti_activity.h of the toolkit gpuext is built with) and
 * hands them back through the buffer-completed callback when the client
 * flushes; cuptiActivityGetNextRecord walks them.
 *
 * The records are synthetic and deterministic (tests compare every field):
 * record i of each kind is a function of i, documented at its generator.
 *   FAKECUPTI_KERNELS=N, FAKECUPTI_MEMCPYS=N (even i: memcpy, odd: memset),
 *   FAKECUPTI_UVM=N (i % 4: HtoD, DtoH, CPU fault, GPU fault)
 *                         records of each kind, each with a driver API record
 *                         of the same correlation id first (not for UVM;
 *                         none with FAKECUPTI_NO_API=1)
 *   FAKECUPTI_API_LAST=1  the API records go to buffers of their own, completed
 *                         after the GPU records' (as CUPTI's global buffer may be)
 *   FAKECUPTI_BATCH=N     at most N records of each kind per flush (default all)
 *   FAKECUPTI_FORCED_ONLY=1  hand records over on forced flushes only
 *   FAKECUPTI_DROPPED=N   cuptiActivityGetNumDroppedRecords reports N, once
 *   FAKECUPTI_FAIL=f1,f2  these functions fail (CUPTI_ERROR_NOT_SUPPORTED)
 *   FAKECUPTI_VERSION=V   cuptiGetVersion's answer
 *   FAKECUPTI_LOG=FILE    one line per call of interest (enable KIND, flush F)
 * Not part of gpuext: a test fixture (build/fakecupti/libcupti.so.13).
 */
#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_API __attribute__((visibility("default")))

static CUpti_BuffersCallbackRequestFunc requested;
static CUpti_BuffersCallbackCompleteFunc completed;
static unsigned next_kernel, next_copy, next_uvm;
static int dropped_reported;
static unsigned lost; /* records no buffer was given for: reported as dropped */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;      /* generator state, lost */
static pthread_mutex_t flush_lock = PTHREAD_MUTEX_INITIALIZER; /* one flush at a time */

static unsigned env_uint(const char *name, unsigned dflt)
{
	const char *v = getenv(name);
	return v && *v ? (unsigned)strtoul(v, NULL, 0) : dflt;
}

static void fake_log(const char *what, long arg)
{
	const char *path = getenv("FAKECUPTI_LOG");
	FILE *f = path ? fopen(path, "a") : NULL;
	if (f) {
		fprintf(f, "%s %ld\n", what, arg);
		fclose(f);
	}
}

static int fails(const char *fn)
{
	const char *spec = getenv("FAKECUPTI_FAIL");
	size_t len = strlen(fn);
	for (const char *p = spec; p && (p = strstr(p, fn)); p += len)
		if ((p == spec || p[-1] == ',') && (p[len] == ',' || !p[len]))
			return 1;
	return 0;
}

#define FAIL_IF_ASKED() \
	do { if (fails(__func__)) return CUPTI_ERROR_NOT_SUPPORTED; } while (0)

/* The kernel names: a short C++ one (every other time as the agent's flat
 * twin of it, with the suffix the agent's sink drops), one longer than
 * gpuext's name buffer, a SASS-only library kernel's. */
static char long_name[301];
static const char *kernel_name(unsigned i)
{
	if (!long_name[0])
		memset(long_name, 'k', sizeof(long_name) - 1);
	static const char *const names[] = {"_Z6vecaddPfS_S_i", long_name,
					    "sm90_xmma_gemm_f16f16_f32_nn_n"};
	return i % 6 == 3 ? "_Z6vecaddPfS_S_i__gx_flat" : names[i % 3];
}

/* Writing records into the client's buffers.  Like CUPTI, the fake keeps
 * every buffer it was given until the flush ends, then completes them all:
 * a client whose pool runs dry mid-flush gets records dropped. */
enum { FAKE_MAX_BUFS = 256 };
struct writer {
	uint8_t *buf;
	size_t size, used;
	unsigned lost; /* records with no buffer to go to */
	struct { uint8_t *buf; size_t size, used; } done[FAKE_MAX_BUFS];
	unsigned done_cnt;
};

static void writer_flush(struct writer *w)
{
	if (w->buf && w->done_cnt < FAKE_MAX_BUFS) {
		w->done[w->done_cnt].buf = w->buf;
		w->done[w->done_cnt].size = w->size;
		w->done[w->done_cnt++].used = w->used;
	}
	w->buf = NULL;
}

static void writer_complete(struct writer *w)
{
	writer_flush(w);
	for (unsigned i = 0; i < w->done_cnt; i++)
		completed(NULL, 0, w->done[i].buf, w->done[i].size, w->done[i].used);
	w->done_cnt = 0;
}

static void *writer_take(struct writer *w, size_t len)
{
	if (w->buf && w->used + len > w->size)
		writer_flush(w);
	if (!w->buf) {
		size_t max = 0;
		if (w->done_cnt == FAKE_MAX_BUFS) {
			w->lost++;
			return NULL;
		}
		requested(&w->buf, &w->size, &max);
		w->used = 0;
		if (!w->buf || w->size < len) {
			if (w->buf) /* too small to use: handed back empty */
				completed(NULL, 0, w->buf, w->size, 0);
			w->buf = NULL;
			w->lost++;
			return NULL;
		}
	}
	void *p = w->buf + w->used;
	w->used += (len + 7) & ~(size_t)7;
	memset(p, 0, len);
	return p;
}

static size_t record_size(const CUpti_Activity *r)
{
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER:
		return sizeof(CUpti_ActivityUnifiedMemoryCounter3);
	default: return sizeof(CUpti_ActivityAPI);
	}
}

/* The writer of API records when they go to buffers of their own. */
static struct writer api_writer;

/* The driver call of correlation id corr: [gpu_start - 500, gpu_start - 400], tid 4242. */
static void put_api(struct writer *w, uint32_t corr, uint64_t gpu_start)
{
	if (env_uint("FAKECUPTI_NO_API", 0))
		return;
	if (env_uint("FAKECUPTI_API_LAST", 0))
		w = &api_writer;
	CUpti_ActivityAPI *a = writer_take(w, sizeof(*a));
	if (a)
		*a = (CUpti_ActivityAPI){.kind = CUPTI_ACTIVITY_KIND_DRIVER, .cbid = 307,
					 .start = gpu_start - 500, .end = gpu_start - 400,
					 .processId = 1, .threadId = 4242, .correlationId = corr};
}

/* Kernel i: start 1e6 + 1000 i, end start + 100 + i, correlation 100 + i,
 * device 0, context 1, stream 7 + i % 2, grid (i+1, 2, 1), block (128, 1, 1),
 * 32 registers, 1024 static and 64 i dynamic shared bytes. */
static void put_kernel(struct writer *w, unsigned i)
{
	uint64_t start = 1000000 + 1000ull * i;
	put_api(w, 100 + i, start);
	CUpti_ActivityKernel10 *k = writer_take(w, sizeof(*k));
	if (!k)
		return;
	k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k->start = start;
	k->end = start + 100 + i;
	k->correlationId = 100 + i;
	k->contextId = 1;
	k->streamId = 7 + i % 2;
	k->gridX = (int32_t)i + 1, k->gridY = 2, k->gridZ = 1;
	k->blockX = 128, k->blockY = 1, k->blockZ = 1;
	k->registersPerThread = 32;
	k->staticSharedMemory = 1024;
	k->dynamicSharedMemory = 64 * (int32_t)i;
	k->name = kernel_name(i);
}

/* Copy i (even): HtoD of 4096 (i+1) bytes pageable -> device, correlation
 * 5000 + i, stream 3, async.  Memset i (odd): 1 MiB of 0xab on device memory. */
static void put_copy(struct writer *w, unsigned i)
{
	uint64_t start = 2000000 + 1000ull * i;
	put_api(w, 5000 + i, start);
	if (i % 2 == 0) {
		CUpti_ActivityMemcpy6 *m = writer_take(w, sizeof(*m));
		if (!m)
			return;
		m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
		m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
		m->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
		m->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		m->flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
		m->bytes = 4096ull * (i + 1);
		m->start = start, m->end = start + 50;
		m->correlationId = 5000 + i;
		m->streamId = 3;
		return;
	}
	CUpti_ActivityMemset4 *m = writer_take(w, sizeof(*m));
	if (!m)
		return;
	m->kind = CUPTI_ACTIVITY_KIND_MEMSET;
	m->value = 0xab;
	m->bytes = 1 << 20;
	m->start = start, m->end = start + 20;
	m->correlationId = 5000 + i;
	m->streamId = 3;
	m->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
}

/* UVM event i at start 3e6 + 1000 i, address 0x7f0000000000 + i MiB:
 * i % 4 == 0: HtoD of 64 KiB (i+1); 1: DtoH of 4 KiB; 2: CPU fault;
 * 3: GPU fault group of 3 faults, end = start + 10. */
static void put_uvm(struct writer *w, unsigned i)
{
	CUpti_ActivityUnifiedMemoryCounter3 *u = writer_take(w, sizeof(*u));
	static const CUpti_ActivityUnifiedMemoryCounterKind kinds[] = {
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT,
	};
	if (!u)
		return;
	u->kind = CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER;
	u->counterKind = kinds[i % 4];
	u->start = 3000000 + 1000ull * i;
	u->address = 0x7f0000000000ull + ((uint64_t)i << 20);
	u->processId = 1;
	switch (i % 4) {
	case 0: u->value = 65536ull * (i + 1), u->end = u->start + 30, u->srcId = 0, u->dstId = 0; break;
	case 1: u->value = 4096, u->end = u->start + 20, u->srcId = 0, u->dstId = 0; break;
	case 2: u->value = 1; break;
	default: u->value = 3, u->end = u->start + 10, u->dstId = 0; break;
	}
}

FAKE_API CUptiResult cuptiGetVersion(uint32_t *version)
{
	FAIL_IF_ASKED();
	*version = env_uint("FAKECUPTI_VERSION", CUPTI_API_VERSION);
	return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	*str = result == CUPTI_ERROR_NOT_SUPPORTED ? "CUPTI_ERROR_NOT_SUPPORTED (fake)"
						   : "fake CUPTI result";
	return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
	FAIL_IF_ASKED();
	return f ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

FAKE_API CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
						    CUpti_BuffersCallbackCompleteFunc comp)
{
	FAIL_IF_ASKED();
	pthread_mutex_lock(&lock);
	requested = req;
	completed = comp;
	next_kernel = next_copy = next_uvm = 0;
	dropped_reported = 0;
	lost = 0;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	FAIL_IF_ASKED();
	fake_log("enable", kind);
	return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
	fake_log("disable", kind);
	return CUPTI_SUCCESS;
}

FAKE_API CUptiResult
cuptiActivityConfigureUnifiedMemoryCounter(CUpti_ActivityUnifiedMemoryCounterConfig *cfg,
					   uint32_t count)
{
	FAIL_IF_ASKED();
	fake_log("uvm-config", count);
	return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	FAIL_IF_ASKED();
	int forced = !!(flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (!forced && env_uint("FAKECUPTI_FORCED_ONLY", 0))
		return CUPTI_SUCCESS;
	pthread_mutex_lock(&flush_lock);
	pthread_mutex_lock(&lock);
	if (!completed) {
		pthread_mutex_unlock(&lock);
		pthread_mutex_unlock(&flush_lock);
		return CUPTI_ERROR_INVALID_OPERATION;
	}
	unsigned batch = env_uint("FAKECUPTI_BATCH", ~0u);
	unsigned nk = env_uint("FAKECUPTI_KERNELS", 0), nc = env_uint("FAKECUPTI_MEMCPYS", 0),
		 nu = env_uint("FAKECUPTI_UVM", 0);
	static struct writer w; /* big: not on the stack; under flush_lock */
	w.lost = api_writer.lost = 0;
	for (unsigned b = 0; b < batch && next_kernel < nk; b++)
		put_kernel(&w, next_kernel++);
	for (unsigned b = 0; b < batch && next_copy < nc; b++)
		put_copy(&w, next_copy++);
	for (unsigned b = 0; b < batch && next_uvm < nu; b++)
		put_uvm(&w, next_uvm++);
	writer_flush(&w);
	writer_flush(&api_writer);
	lost += w.lost + api_writer.lost;
	pthread_mutex_unlock(&lock);
	/* the client's completion asks for the dropped count: outside the lock */
	writer_complete(&w);
	writer_complete(&api_writer);
	pthread_mutex_unlock(&flush_lock);
	if (forced)
		fake_log("flush-forced", w.lost);
	return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid,
						CUpti_Activity **record)
{
	uint8_t *p = *record ? (uint8_t *)*record + ((record_size(*record) + 7) & ~(size_t)7)
			     : buffer;
	if (p + sizeof(CUpti_Activity) > buffer + valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*record = (CUpti_Activity *)p;
	return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream,
						       size_t *dropped)
{
	pthread_mutex_lock(&lock);
	*dropped = lost;
	lost = 0;
	if (!dropped_reported) {
		*dropped += env_uint("FAKECUPTI_DROPPED", 0);
		dropped_reported = 1;
	}
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}
