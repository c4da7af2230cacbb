/* SPDX-License-Identifier: MIT */
/*
 * cupti.c - loading libcupti, enabling activity kinds, the buffer pool, the
 * flush timer and the completion callback (cupti.h).  Converting CUPTI's
 * records is cupti_record.c's.
 *
 * Completed buffers are not read in CUPTI's callback: they are queued and
 * read after the flush that returned them (the timer's, cupti_flush's),
 * in two passes: the API call records of every queued buffer first, then
 * the GPU records, so a kernel joins its launching call even when CUPTI
 * returns the call's buffer (a global one) after the kernel's (a
 * context's).  A buffer CUPTI completes on its own (full) waits for the
 * next timer tick.
 *
 * Invariants: every CUPTI entry point is called through the table `api`,
 * filled once by cupti_start() before any activity is enabled; the sink
 * runs under deliver_lock only (never concurrently with itself); buffers
 * go back to the pool only after their records were delivered.
 */
#include "cupti.h"

#include <cupti.h>
#include <dlfcn.h>
#include <errno.h>
#include <glob.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cupti_impl.h"

/* The CUPTI functions gpuext uses, typed from CUPTI's own header. */
#define CUPTI_FUNCS(X)                                                         \
	X(cuptiGetVersion)                                                     \
	X(cuptiGetResultString)                                                \
	X(cuptiActivityRegisterTimestampCallback)                              \
	X(cuptiActivityRegisterCallbacks)                                      \
	X(cuptiActivityEnable)                                                 \
	X(cuptiActivityDisable)                                                \
	X(cuptiActivityConfigureUnifiedMemoryCounter)                          \
	X(cuptiActivityFlushAll)                                               \
	X(cuptiActivityGetNextRecord)                                          \
	X(cuptiActivityGetNumDroppedRecords)

#define CUPTI_PTR(f) __typeof__(f) *f;
static struct {
	CUPTI_FUNCS(CUPTI_PTR)
} api;
#undef CUPTI_PTR

static void *lib;
static char lib_path[512];

static struct cupti_sink sink;
static pthread_mutex_t deliver_lock = PTHREAD_MUTEX_INITIALIZER;

/* Completed buffers waiting to be read, oldest first (at most the pool). */
struct done_buf {
	uint8_t *buf;
	size_t valid;
};
static struct done_buf *done;
static unsigned done_cnt;
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;

/* The buffer pool: free buffers on a stack under pool_lock. */
static uint8_t **pool_free;
static unsigned pool_free_cnt, pool_total;
static size_t pool_buf_size;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

static _Atomic int running;
/* The process that started the collection: a forked child inherits the
 * flag but neither CUPTI's state nor the timer thread, and must not touch
 * them (its exit handlers run cupti_stop too). */
static pid_t owner_pid;
static unsigned enabled_mask;
static pthread_t timer_thread;
static int timer_started;
static pthread_mutex_t timer_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t timer_cond = PTHREAD_COND_INITIALIZER;
static int timer_stop;
static unsigned flush_ms;

struct cupti_counters cupti_counters;
int64_t cupti_ts_offset;

uint32_t cupti_name_hash_len(const char *name, size_t len)
{
	uint32_t h = 2166136261u;
	for (const unsigned char *p = (const unsigned char *)name; len--; p++)
		h = (h ^ *p) * 16777619u;
	return h;
}

uint32_t cupti_name_hash(const char *name)
{
	return cupti_name_hash_len(name, strlen(name));
}

const char *cupti_lib_path(void)
{
	return lib_path[0] ? lib_path : NULL;
}

int cupti_running(void)
{
	return atomic_load(&running) && getpid() == owner_pid;
}

static const char *result_str(CUptiResult r)
{
	const char *s = NULL;
	if (api.cuptiGetResultString && api.cuptiGetResultString(r, &s) == CUPTI_SUCCESS && s)
		return s;
	return "unknown CUPTI error";
}

/* The clock of bpf_ktime_get_ns(): CUPTI stamps every record with it. */
static uint64_t CUPTIAPI monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int try_open(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return 0;
	lib = h;
	snprintf(lib_path, sizeof(lib_path), "%s", path);
	return 1;
}

/* The first libcupti.so* under dir (a glob pattern allowed). */
static int try_dir(const char *dir)
{
	char pat[600];
	glob_t g;
	int ok = 0;

	if (!dir || !*dir)
		return 0;
	snprintf(pat, sizeof(pat), "%s/libcupti.so*", dir);
	if (glob(pat, 0, NULL, &g))
		return 0;
	for (size_t i = 0; i < g.gl_pathc && !ok; i++)
		ok = try_open(g.gl_pathv[i]);
	globfree(&g);
	return ok;
}

/* The folder of the libcuda this process loaded, if any (a CUDA install
 * that ships its own driver library keeps CUPTI next to it). */
static int try_next_to_libcuda(void)
{
	void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	Dl_info di;
	char dir[512];

	if (!cu)
		return 0;
	void *sym = dlsym(cu, "cuInit");
	int ok = sym && dladdr(sym, &di) && di.dli_fname;
	if (ok) {
		snprintf(dir, sizeof(dir), "%s", di.dli_fname);
		char *slash = strrchr(dir, '/');
		ok = slash && (*slash = 0, try_dir(dir));
	}
	dlclose(cu);
	return ok;
}

static int load_library(const char *path, struct err *e)
{
	if (path && *path) {
		if (try_open(path))
			return 0;
		return err_set(e, ENOENT, "CUPTI: cannot load %s (GPUEXT_CUPTI_PATH): %s", path,
			       dlerror());
	}
	if (try_open("libcupti.so.13") || try_open("libcupti.so"))
		return 0;
	const char *home = getenv("CUDA_HOME");
	char dir[512];
	static const char *const subdirs[] = {"extras/CUPTI/lib64", "lib64",
					      "targets/x86_64-linux/lib"};
	const char *roots[] = {home, "/usr/local/cuda", "/usr/local/cuda-*"};
	for (size_t r = 0; r < sizeof(roots) / sizeof(roots[0]); r++)
		for (size_t s = 0; roots[r] && s < sizeof(subdirs) / sizeof(subdirs[0]); s++) {
			snprintf(dir, sizeof(dir), "%s/%s", roots[r], subdirs[s]);
			if (try_dir(dir))
				return 0;
		}
	if (try_next_to_libcuda())
		return 0;
	return err_set(e, ENOENT, "CUPTI: libcupti not found (searched the library path, "
			          "$CUDA_HOME, /usr/local/cuda*, next to libcuda): set "
			          "GPUEXT_CUPTI_PATH to libcupti.so");
}

static int resolve(struct err *e)
{
#define CUPTI_SYM(f)                                                                       \
	if (!(*(void **)&api.f = dlsym(lib, #f)))                                          \
		return err_set(e, ENOSYS, "CUPTI: %s has no %s", lib_path, #f);
	CUPTI_FUNCS(CUPTI_SYM)
#undef CUPTI_SYM
	uint32_t v = 0;
	if (api.cuptiGetVersion(&v) != CUPTI_SUCCESS)
		return err_set(e, EIO, "CUPTI: cuptiGetVersion failed (%s)", lib_path);
	/* The record layouts read in cupti_record.c are those of the CUPTI
	 * major version gpuext was built with. */
	if (v / 10000 != CUPTI_API_VERSION / 10000)
		return err_set(e, EPROTO, "CUPTI: %s has API version %u, gpuext was built for %u "
			       "(activity record layouts differ)", lib_path, v, CUPTI_API_VERSION);
	return 0;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	pthread_mutex_lock(&pool_lock);
	*buffer = pool_free_cnt ? pool_free[--pool_free_cnt] : NULL;
	pthread_mutex_unlock(&pool_lock);
	*size = *buffer ? pool_buf_size : 0;
	*max_records = 0;
	if (!*buffer)
		atomic_fetch_add_explicit(&cupti_counters.starved, 1, memory_order_relaxed);
}

static void buffer_release(uint8_t *buffer)
{
	pthread_mutex_lock(&pool_lock);
	if (pool_free_cnt < pool_total)
		pool_free[pool_free_cnt++] = buffer;
	pthread_mutex_unlock(&pool_lock);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
				      size_t size, size_t valid)
{
	size_t dropped = 0;

	if (api.cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS &&
	    dropped)
		atomic_fetch_add_explicit(&cupti_counters.dropped, dropped, memory_order_relaxed);
	atomic_fetch_add_explicit(&cupti_counters.buffers, 1, memory_order_relaxed);
	if (!buffer)
		return;
	pthread_mutex_lock(&done_lock);
	/* never more than the pool: every buffer is the pool's */
	if (done_cnt < pool_total)
		done[done_cnt++] = (struct done_buf){buffer, valid};
	pthread_mutex_unlock(&done_lock);
}

/* Read every queued buffer: API calls first, then the GPU records. */
static void process_done(void)
{
	pthread_mutex_lock(&deliver_lock);
	pthread_mutex_lock(&done_lock);
	unsigned n = done_cnt;
	struct done_buf *list = done;
	pthread_mutex_unlock(&done_lock);
	/* done[0..n) is ours: the callback only appends past n, under the lock */
	for (int pass = 0; pass < 2; pass++)
		for (unsigned i = 0; i < n; i++) {
			CUpti_Activity *rec = NULL;
			while (list[i].valid && api.cuptiActivityGetNextRecord(
							list[i].buf, list[i].valid, &rec) == CUPTI_SUCCESS)
				cupti_record_deliver(rec, &sink, pass);
		}
	pthread_mutex_lock(&done_lock);
	for (unsigned i = 0; i < n; i++)
		buffer_release(list[i].buf);
	memmove(done, done + n, (done_cnt - n) * sizeof(*done));
	done_cnt -= n;
	pthread_mutex_unlock(&done_lock);
	pthread_mutex_unlock(&deliver_lock);
}

static void *timer_main(void *arg)
{
	pthread_mutex_lock(&timer_lock);
	while (!timer_stop) {
		struct timespec t;
		clock_gettime(CLOCK_REALTIME, &t);
		uint64_t ns = (uint64_t)t.tv_nsec + (uint64_t)flush_ms * 1000000ull;
		t.tv_sec += (time_t)(ns / 1000000000ull);
		t.tv_nsec = (long)(ns % 1000000000ull);
		if (pthread_cond_timedwait(&timer_cond, &timer_lock, &t) == ETIMEDOUT &&
		    !timer_stop) {
			pthread_mutex_unlock(&timer_lock);
			api.cuptiActivityFlushAll(0);
			process_done();
			pthread_mutex_lock(&timer_lock);
		}
	}
	pthread_mutex_unlock(&timer_lock);
	return NULL;
}

/* Free the pool's buffers (every buffer is back after cupti_stop's forced
 * flush; one CUPTI still held would only leak). */
static void pool_fini(void)
{
	for (unsigned i = 0; i < pool_free_cnt; i++)
		free(pool_free[i]);
	free(pool_free);
	pool_free = NULL;
	pool_free_cnt = pool_total = 0;
}

static int pool_init(const struct cupti_opts *o, struct err *e)
{
	pool_buf_size = o->buffer_size ? o->buffer_size : 4u << 20;
	pool_total = o->buffer_count ? o->buffer_count : 16;
	pool_buf_size = (pool_buf_size + 7) & ~(size_t)7; /* CUPTI's record alignment */
	pool_free = calloc(pool_total, sizeof(*pool_free));
	if (!pool_free)
		return err_set(e, ENOMEM, "CUPTI: out of memory for the buffer pool");
	free(done);
	done = calloc(pool_total, sizeof(*done));
	done_cnt = 0;
	if (!done)
		return err_set(e, ENOMEM, "CUPTI: out of memory for the buffer pool");
	for (pool_free_cnt = 0; pool_free_cnt < pool_total; pool_free_cnt++) {
		pool_free[pool_free_cnt] = aligned_alloc(8, pool_buf_size);
		if (!pool_free[pool_free_cnt])
			return err_set(e, ENOMEM, "CUPTI: out of memory for %u buffers of %zu bytes",
				       pool_total, pool_buf_size);
	}
	return 0;
}

/* Kinds to enable for each wanted class; UVM needs its counters
 * configured first. */
static const struct {
	unsigned want;
	CUpti_ActivityKind kind;
	const char *name;
} kinds[] = {
	{CUPTI_WANT_DRIVER_API, CUPTI_ACTIVITY_KIND_DRIVER, "driver API"},
	{CUPTI_WANT_RUNTIME_API, CUPTI_ACTIVITY_KIND_RUNTIME, "runtime API"},
	{CUPTI_WANT_KERNEL, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "concurrent kernel"},
	{CUPTI_WANT_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY, "memcpy"},
	{CUPTI_WANT_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET, "memset"},
	{CUPTI_WANT_UVM, CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER, "unified memory"},
};

static int configure_uvm(struct err *e)
{
	static const CUpti_ActivityUnifiedMemoryCounterKind ck[] = {
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT,
	};
	CUpti_ActivityUnifiedMemoryCounterConfig cfg[sizeof(ck) / sizeof(ck[0])];
	for (size_t i = 0; i < sizeof(ck) / sizeof(ck[0]); i++)
		cfg[i] = (CUpti_ActivityUnifiedMemoryCounterConfig){
			.scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE,
			.kind = ck[i], .deviceId = 0, .enable = 1};
	CUptiResult r = api.cuptiActivityConfigureUnifiedMemoryCounter(cfg, sizeof(ck) /
									       sizeof(ck[0]));
	if (r != CUPTI_SUCCESS)
		return err_set(e, EIO, "CUPTI: cuptiActivityConfigureUnifiedMemoryCounter failed: "
			       "%s", result_str(r));
	return 0;
}

static void disable_all(void)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (enabled_mask & (1u << i))
			api.cuptiActivityDisable(kinds[i].kind);
	enabled_mask = 0;
}

/* Configure and enable the kinds of mask; on failure nothing stays enabled. */
static int enable_kinds(unsigned mask, struct err *e)
{
	CUptiResult r;
	int ret;

	if ((mask & CUPTI_WANT_UVM) && (ret = configure_uvm(e)))
		return ret;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (!(mask & kinds[i].want))
			continue;
		if ((r = api.cuptiActivityEnable(kinds[i].kind)) != CUPTI_SUCCESS) {
			disable_all();
			return err_set(e, EIO, "CUPTI: enabling %s activity failed: %s",
				       kinds[i].name, result_str(r));
		}
		enabled_mask |= 1u << i;
	}
	return 0;
}

/* cuInit(0) of the process's libcuda: 1 if it succeeded. */
static int driver_init(void)
{
	void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	int (*init)(unsigned) = cu ? (int (*)(unsigned))dlsym(cu, "cuInit") : NULL;
	return init && init(0) == 0;
}

int cupti_start(const struct cupti_opts *o, const struct cupti_sink *s, struct err *e)
{
	CUptiResult r;
	int ret;

	if (cupti_running())
		return err_set(e, EBUSY, "CUPTI: a collection is already running");
	const char *path = o->lib_path ? o->lib_path : getenv("GPUEXT_CUPTI_PATH");
	/* Loaded once per process; another explicit path (tests) loads that. */
	if ((!lib || (path && *path && strcmp(path, lib_path))) && (ret = load_library(path, e)))
		return ret;
	if ((ret = resolve(e)))
		return ret;
	pthread_mutex_lock(&pool_lock);
	pool_fini();
	ret = pool_init(o, e);
	pthread_mutex_unlock(&pool_lock);
	if (ret)
		return ret;
	sink = *s;
	cupti_record_reset();
	/* CUPTI's own clock is CLOCK_REALTIME on Linux: when it refuses ours,
	 * records are shifted by the offset between the two clocks, read now
	 * (an NTP step during the run shows as a shift of that size). */
	cupti_ts_offset = 0;
	if (api.cuptiActivityRegisterTimestampCallback(monotonic_ns) != CUPTI_SUCCESS) {
		struct timespec m, rt;
		clock_gettime(CLOCK_MONOTONIC, &m);
		clock_gettime(CLOCK_REALTIME, &rt);
		cupti_ts_offset = ((int64_t)m.tv_sec - rt.tv_sec) * 1000000000 +
				  (m.tv_nsec - rt.tv_nsec);
	}
	if ((r = api.cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed)) !=
	    CUPTI_SUCCESS)
		return err_set(e, EIO, "CUPTI: cuptiActivityRegisterCallbacks failed: %s",
			       result_str(r));
	/* Some CUPTI versions want the driver initialised before the unified
	 * memory counters can be configured: on a refusal, initialise it and
	 * try once more. */
	if ((ret = enable_kinds(o->kind_mask, e)) && driver_init())
		ret = enable_kinds(o->kind_mask, e);
	if (ret)
		return ret;
	flush_ms = o->flush_ms ? o->flush_ms : 100;
	owner_pid = getpid();
	timer_stop = 0;
	timer_started = !pthread_create(&timer_thread, NULL, timer_main, NULL);
	atomic_store(&running, 1);
	return 0;
}

void cupti_flush(void)
{
	if (!cupti_running())
		return;
	api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	process_done();
}

void cupti_stop(void)
{
	if (!cupti_running() || !atomic_exchange(&running, 0))
		return;
	if (timer_started) {
		pthread_mutex_lock(&timer_lock);
		timer_stop = 1;
		pthread_cond_signal(&timer_cond);
		pthread_mutex_unlock(&timer_lock);
		pthread_join(timer_thread, NULL);
		timer_started = 0;
	}
	api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	process_done();
	disable_all();
}

void cupti_stats_get(struct cupti_stats *out)
{
#define LOAD(f) out->f = atomic_load_explicit(&cupti_counters.f, memory_order_relaxed);
	LOAD(kernels) LOAD(memcpys) LOAD(memsets) LOAD(uvm) LOAD(api) LOAD(other)
	LOAD(dropped) LOAD(starved) LOAD(buffers) LOAD(unjoined)
#undef LOAD
}
