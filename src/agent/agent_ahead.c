/* SPDX-License-Identifier: MIT */
/*
 * agent_ahead.c - instrumentation ahead of a kernel's first launch.
 *
 * The driver's JIT compile is most of what instrumenting a kernel costs
 * (bench/first_launch.sh): 7-90 ms on the H200 when no cache has the
 * result yet.  It need not be on the application's path: one background
 * thread instruments the kernels that a program targets (agent_instrument_
 * ahead) and the results wait in the instrumented-module cache for their
 * first launches; a launch that comes before its kernel is done waits for
 * the compile in progress (one at a time, under the agent's GPU lock) and
 * then does its own.  Two sources of work:
 *
 * - From process start (the default): an nvcc-built program (and every
 *   library loaded with it) keeps the fatbins its cudart registers in
 *   .nvFatBinSegment (fatbin_elf.h); cudart hands them to the driver only
 *   at the first launch from them (lazy loading, measured 0.1-0.2 ms
 *   before), but they are in memory from the start.  So a constructor finds
 *   them, and the thread, for a fatbin whose PTX defines a targeted kernel,
 *   compiles each such kernel's instrumented module before any context
 *   exists, into a context-independent library (cuLibraryLoadData compiles
 *   with no context; cuLinkCreate refuses), while the application
 *   initializes, makes its context (120 ms on an H200, after a 100-180 ms
 *   cuInit) and copies its input; the first launch takes the library's
 *   module in its context.  Nothing is made early in the application's
 *   process but cuInit and those libraries (no context: a program that
 *   never uses GPU 0 finds none there).  The fatbins are the application's
 *   own (in its loaded image), cudart later hands the driver the same
 *   wrappers, so the launch makes the same text and finds the library.
 * - At module load (GPUEXT_AGENT_AHEAD=1): when a module is loaded in GPU
 *   0's primary context, its targeted kernels, from a copy of its image
 *   (the application may unload the module meanwhile).  For programs that
 *   load their modules themselves, early (driver API, JIT linkers).
 *
 * At most AGENT_AHEAD_MAX compiles per process are done ahead (a module of
 * many targeted kernels that are never launched costs no more); the thread
 * is stopped, after the compile in progress, at exit.  The same thread
 * runs other work in the background in order (agent_ahead_call: tiers'
 * compiles, agent_tier.c), and a second one, started with the first
 * compile ahead, makes the device side as soon as the application's
 * context exists (agent_ahead_device_main).
 */
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "agent_device.h"
#include "agent_impl.h"
#include "cuda/fatbin.h"
#include "cuda/fatbin_elf.h"

enum {
	AGENT_AHEAD_MAX = 16,             /* compiles ahead per process */
	AGENT_AHEAD_MAX_IMAGE = 64 << 20, /* fatbins copied for it, bytes */
	AGENT_AHEAD_MAX_WRAPPERS = 256    /* fatbins looked at from process start */
};

struct agent_ahead_job {
	struct agent_ahead_job *next;
	struct agent_module m; /* a private copy of the module's image */
	CUcontext ctx;         /* the one it was loaded in; NULL: from process start */
	void (*call)(void *);  /* or a call (agent_ahead_call) */
	void *arg;
};

typedef CUresult (*capture_mode_fn)(CUstreamCaptureMode *);

static pthread_mutex_t agent_ahead_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t agent_ahead_cond = PTHREAD_COND_INITIALIZER;
static struct {
	struct agent_ahead_job *head, **tail;
	pthread_t thread;
	pid_t pid;  /* the process the thread runs in (a forked child has none) */
	int stop;
	int left;   /* compiles ahead still allowed */
	int joined; /* at exit */
	pthread_t device_thread; /* makes the device side (agent_ahead_device_main) */
	int device_started;
} agent_ahead = {.left = AGENT_AHEAD_MAX};

static void agent_ahead_free(struct agent_ahead_job *j)
{
	for (size_t i = 0; i < j->m.input_cnt; i++)
		free(j->m.inputs[i]);
	free(j->m.inputs);
	free(j->m.owned);
	free(j->m.ptx);
	free(j);
}

/* A copy of m's image for the thread, or NULL (nothing to do ahead). */
static struct agent_ahead_job *agent_ahead_copy(const struct agent_module *m)
{
	struct agent_ahead_job *j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->m.kind = m->kind;
	j->m.image = m->image;
	j->m.image_len = m->image_len;
	int ok = 0;
	switch (m->kind) {
	case AGENT_IMAGE_WRAPPER: /* in the application's binary: stays */
		ok = 1;
		break;
	case AGENT_IMAGE_FATBIN:
	case AGENT_IMAGE_PTX:
		if (m->image && m->image_len <= AGENT_AHEAD_MAX_IMAGE &&
		    (j->m.owned = malloc(m->image_len + 1))) {
			memcpy(j->m.owned, m->image, m->image_len);
			((char *)j->m.owned)[m->image_len] = '\0';
			j->m.image = j->m.owned;
			ok = 1;
		}
		break;
	case AGENT_IMAGE_LINKED:
		j->m.inputs = calloc(m->input_cnt, sizeof(char *));
		for (size_t i = 0; j->m.inputs && i < m->input_cnt; i++)
			if ((j->m.inputs[i] = strdup(m->inputs[i])))
				j->m.input_cnt++;
		ok = j->m.inputs && j->m.input_cnt == m->input_cnt;
		break;
	default: /* SASS only, or not captured: no PTX */
		break;
	}
	if (!ok) {
		agent_ahead_free(j);
		return NULL;
	}
	return j;
}

/* Does the PTX of fatbin wrapper image define a kernel that a program
 * targets?  (The first PTX entry: every arch's has the same kernels.) */
static int agent_image_targeted(const void *image)
{
	struct fatbin_iter it;
	struct fatbin_entry ent;
	struct err e = {{0}};
	uint8_t *text = NULL;
	size_t len;
	char name[512];
	int hit = 0;
	if (fatbin_iter_init(&it, image, FATBIN_LEN_UNKNOWN, &e))
		return 0;
	while (!text && fatbin_iter_next(&it, &ent, &e) == 1)
		if (ent.kind == FATBIN_KIND_PTX && fatbin_entry_contents(&ent, &text, &len, &e))
			text = NULL;
	for (const char *at = (const char *)text;
	     text && !hit && agent_next_entry(&at, name, sizeof(name));)
		hit = agent_kernel_targeted(name);
	free(text);
	return hit;
}

/*
 * The device side made ahead too (agent_device_ahead), off the first
 * launch's path: its device maps and ring buffers (5-8 ms of pinned memory
 * for a ring-buffer tool on the H200), once the application has made its
 * context, while it allocates and copies its input and while the compiles
 * ahead still run.  The driver tells no one when a primary context becomes
 * active, so a thread of its own, started with the first compile ahead,
 * asks every AGENT_AHEAD_POLL_MS, then, after AGENT_AHEAD_POLLS of those,
 * every AGENT_AHEAD_POLL_SLOW_MS, until it is made (or failed, or a launch
 * made it).
 */
enum { AGENT_AHEAD_POLL_MS = 1, AGENT_AHEAD_POLLS = 10000, AGENT_AHEAD_POLL_SLOW_MS = 50 };

static void *agent_ahead_device_main(void *arg)
{
	pthread_mutex_lock(&agent_ahead_lock);
	for (unsigned polls = 0; !agent_ahead.stop; polls++) {
		pthread_mutex_unlock(&agent_ahead_lock);
		int done = agent_device_ahead();
		pthread_mutex_lock(&agent_ahead_lock);
		if (done)
			break;
		long ms = polls < AGENT_AHEAD_POLLS ? AGENT_AHEAD_POLL_MS : AGENT_AHEAD_POLL_SLOW_MS;
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += ms * 1000000L;
		until.tv_sec += until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&agent_ahead_cond, &agent_ahead_lock, &until);
	}
	pthread_mutex_unlock(&agent_ahead_lock);
	return NULL;
}

static void agent_ahead_exit_again(void);

static void *agent_ahead_main(void *arg)
{
	/* relaxed capture mode: the modules this thread loads must not break
	 * another thread's stream capture (nor be refused by it) */
	capture_mode_fn capture = (capture_mode_fn)agent_real_driver(
		"cuThreadExchangeStreamCaptureMode");
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	if (capture)
		capture(&mode);
	pthread_mutex_lock(&agent_ahead_lock);
	for (;;) {
		while (!agent_ahead.head && !agent_ahead.stop)
			pthread_cond_wait(&agent_ahead_cond, &agent_ahead_lock);
		if (agent_ahead.stop)
			break;
		struct agent_ahead_job *j = agent_ahead.head;
		if (!(agent_ahead.head = j->next))
			agent_ahead.tail = &agent_ahead.head;
		int budget = agent_ahead.left, done = 0;
		pthread_mutex_unlock(&agent_ahead_lock);
		agent_ahead_exit_again();
		/* from process start: only a fatbin with a targeted kernel
		 * starts the driver (a program that targets nothing of this
		 * binary's gets no context from the agent) */
		if (j->call) {
			j->call(j->arg);
		} else if (budget > 0 && (j->ctx || agent_image_targeted(j->m.image))) {
			pthread_mutex_lock(&agent_ahead_lock);
			if (!agent_ahead.device_started)
				agent_ahead.device_started = !pthread_create(
					&agent_ahead.device_thread, NULL, agent_ahead_device_main, NULL);
			pthread_mutex_unlock(&agent_ahead_lock);
			done = j->ctx ? agent_instrument_ahead(&j->m, j->ctx, budget)
				      : agent_compile_ahead_noctx(&j->m, budget);
		}
		agent_ahead_free(j);
		pthread_mutex_lock(&agent_ahead_lock);
		agent_ahead.left -= done;
	}
	pthread_mutex_unlock(&agent_ahead_lock);
	return NULL;
}

/* At exit, before the driver shuts down (atexit handlers run before the
 * libraries' destructors): the compile in progress finishes, the queue is
 * dropped.  Registered with the first job: from process start before
 * cudart's handler, so it runs after cudart's teardown (the compile in
 * progress then is a library's, which needs no context); from a module
 * load after it, so it runs before. */
static void agent_ahead_atexit(void)
{
	pthread_mutex_lock(&agent_ahead_lock);
	int mine = agent_ahead.pid == getpid() && !agent_ahead.joined;
	agent_ahead.joined |= mine; /* registered more than once (agent_ahead_exit_again) */
	agent_ahead.stop = 1;
	pthread_cond_broadcast(&agent_ahead_cond);
	int device = mine && agent_ahead.device_started;
	pthread_mutex_unlock(&agent_ahead_lock);
	if (mine)
		pthread_join(agent_ahead.thread, NULL);
	if (device)
		pthread_join(agent_ahead.device_thread, NULL);
}

/*
 * Exit while the thread compiles: exit() runs the atexit handlers (and the
 * libraries' C++ destructors, __cxa_atexit) newest first, and the driver's
 * JIT compiler registers its own when the process's first JIT compile
 * loads it.  Loaded after agent_ahead_atexit was registered, it is torn
 * down before the join, under the compile in progress: measured on the
 * H200 ("free(): invalid pointer", the application aborted) when an
 * application exited while a tier's pasted form compiled in the
 * background.  So the handler is registered again before each compile and
 * job of the thread: a compiler loaded by then (by an earlier compile, or
 * the application's, as before a tier's compile) is torn down after the
 * join.  Only a process whose very first JIT compile is this thread's, and
 * that exits during it (before its first launch), is not covered by that;
 * measured on the H200 (bench/results/2026-11-22-h200-throughput-s7.md):
 * 30 of 30 such exits (vecadd on a bad option, under memtrace and
 * threadhist: it exits while the thread compiles its kernel) were clean,
 * the exit waiting ~20 ms for the compile.  The handler joins once.
 */
static void agent_ahead_exit_again(void)
{
	atexit(agent_ahead_atexit);
}


/* GPUEXT_AGENT_AHEAD: 0 nothing ahead; unset, from process start only; 1
 * also at module load.  Module loads are not a source by default: cudart
 * (CUDA_MODULE_LOADING=LAZY, its default) loads a module only at the first
 * launch from it, 0.1-0.2 ms before (bench/results/2026-11-22-h200-first-
 * launch.md), which leaves nothing to do ahead. */
enum agent_ahead_mode { AGENT_AHEAD_OFF, AGENT_AHEAD_START, AGENT_AHEAD_ALL };

static enum agent_ahead_mode agent_ahead_mode(void)
{
	const char *v = getenv("GPUEXT_AGENT_AHEAD");
	return !v || !*v ? AGENT_AHEAD_START : !strcmp(v, "1") ? AGENT_AHEAD_ALL : AGENT_AHEAD_OFF;
}

/* Set by the constructor when it found fatbins to compile from (before any
 * thread or launch reads it). */
static int agent_ahead_started;

int agent_ahead_no_context(void)
{
	return agent_ahead_started;
}

/* ---- libraries compiled with no context ------------------------------ */

/* cuLibraryLoadData compiles PTX with no context at all (measured on the
 * H200: 37-74 ms for reduce's kernel, while cuLinkCreate refuses without
 * one: CUDA_ERROR_INVALID_CONTEXT), into the same whole-program code as
 * cuModuleLoadDataEx (gemm 0.2792 vs 0.2797 ms a launch); a launch then
 * takes the library's module in its context (cuLibraryGetModule, 0.1 ms).
 * The driver's own entry points: the application's (the agent's wrappers)
 * would take these libraries for the application's. */
struct agent_lib {
	struct agent_lib *next;
	char *text; /* the PTX it was made from */
	CUlibrary lib;
};

typedef CUresult (*lib_load_fn)(CUlibrary *, const void *, CUjit_option *, void **, unsigned,
				CUlibraryOption *, void **, unsigned);
typedef CUresult (*lib_module_fn)(CUmodule *, CUlibrary);

static pthread_mutex_t agent_lib_lock = PTHREAD_MUTEX_INITIALIZER;
static struct agent_lib *agent_libs;


int agent_ahead_lib_compile(const char *text, double *ms, struct err *e)
{
	lib_load_fn load = (lib_load_fn)agent_real_driver("cuLibraryLoadData");
	struct agent_lib *l = calloc(1, sizeof(*l));
	struct timespec t0, t1;
	if (!load || !l || !(l->text = strdup(text))) {
		free(l);
		return err_set(e, ENOTSUP, "no cuLibraryLoadData in the driver (or out of memory)");
	}
	agent_ahead_exit_again();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CUresult r = load(&l->lib, text, NULL, NULL, 0, NULL, NULL, 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	if (r != CUDA_SUCCESS) {
		free(l->text);
		free(l);
		return err_set(e, EINVAL, "cuLibraryLoadData with no context: CUresult %d", (int)r);
	}
	pthread_mutex_lock(&agent_lib_lock);
	l->next = agent_libs;
	agent_libs = l;
	pthread_mutex_unlock(&agent_lib_lock);
	return 0;
}

int agent_ahead_lib_module(const char *text, CUmodule *mod)
{
	static lib_module_fn get;
	const struct agent_lib *l;
	pthread_mutex_lock(&agent_lib_lock);
	for (l = agent_libs; l && strcmp(l->text, text); l = l->next)
		;
	pthread_mutex_unlock(&agent_lib_lock);
	if (l && !get)
		get = (lib_module_fn)agent_real_driver("cuLibraryGetModule");
	return l && get && get(mod, l->lib) == CUDA_SUCCESS;
}

/* Queue job j for the thread (started on the first job of this process);
 * frees it when there is no thread: -1 then. */
static int agent_ahead_queue(struct agent_ahead_job *j)
{
	pthread_mutex_lock(&agent_ahead_lock);
	if (agent_ahead.pid != getpid() && !agent_ahead.stop) {
		/* no thread in this process yet (or only the parent's, before a
		 * fork): its queue, if any, is the parent's work */
		static int registered;
		agent_ahead.head = NULL;
		agent_ahead.tail = &agent_ahead.head;
		if (!pthread_create(&agent_ahead.thread, NULL, agent_ahead_main, NULL)) {
			agent_ahead.pid = getpid();
			if (!registered++)
				atexit(agent_ahead_atexit);
		}
	}
	if (agent_ahead.pid == getpid() && !agent_ahead.stop) {
		j->next = NULL;
		*agent_ahead.tail = j;
		agent_ahead.tail = &j->next;
		j = NULL;
		pthread_cond_signal(&agent_ahead_cond);
	}
	pthread_mutex_unlock(&agent_ahead_lock);
	if (!j)
		return 0;
	agent_ahead_free(j);
	return -1;
}

int agent_ahead_stopping(void)
{
	pthread_mutex_lock(&agent_ahead_lock);
	int stop = agent_ahead.stop;
	pthread_mutex_unlock(&agent_ahead_lock);
	return stop;
}

int agent_ahead_call(void (*fn)(void *), void *arg)
{
	struct agent_ahead_job *j = calloc(1, sizeof(*j));
	if (!j)
		return -1;
	j->call = fn;
	j->arg = arg;
	return agent_ahead_queue(j);
}

void agent_ahead_module(const struct agent_module *m, CUcontext ctx)
{
	if (agent_ahead_mode() != AGENT_AHEAD_ALL || !ctx)
		return;
	pthread_mutex_lock(&agent_ahead_lock);
	int room = agent_ahead.left > 0 && !agent_ahead.stop;
	pthread_mutex_unlock(&agent_ahead_lock);
	struct agent_ahead_job *j = room ? agent_ahead_copy(m) : NULL;
	if (!j)
		return;
	j->ctx = ctx;
	agent_ahead_queue(j);
}

/* ---- from process start ---------------------------------------------- */

struct agent_start_scan {
	const void *wrappers[AGENT_AHEAD_MAX_WRAPPERS];
	size_t cnt;
	int main_seen; /* the program itself: the first object without a name */
};

/* The bytes from p to the end of the loaded segment of obj that holds
 * [p, p + len), or 0 when none does (not ours to read). */
static size_t agent_loaded_left(const struct dl_phdr_info *obj, uintptr_t p, size_t len)
{
	for (int i = 0; i < obj->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &obj->dlpi_phdr[i];
		uintptr_t lo = obj->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (ph->p_type == PT_LOAD && p >= lo && p <= hi && len <= hi - p)
			return hi - p;
	}
	return 0;
}

/* The wrapper at w, if it is one whose fatbin header lies in obj's image. */
static int agent_wrapper_ok(const struct dl_phdr_info *obj, uintptr_t w)
{
	uint32_t magic, fb_magic;
	uint16_t hsize;
	uint64_t fat;
	uintptr_t fb;
	memcpy(&magic, (const void *)w, 4);
	memcpy(&fb, (const void *)(w + 8), sizeof(fb));
	if (magic != FATBIN_WRAPPER_MAGIC)
		return 0;
	size_t left = agent_loaded_left(obj, fb, 16);
	if (!left)
		return 0;
	memcpy(&fb_magic, (const void *)fb, 4);
	memcpy(&hsize, (const void *)(fb + 6), 2);
	memcpy(&fat, (const void *)(fb + 8), 8);
	return fb_magic == FATBIN_MAGIC && hsize >= 16 && hsize <= left && fat <= left - hsize;
}

static int agent_scan_object(struct dl_phdr_info *obj, size_t size, void *arg)
{
	struct agent_start_scan *s = arg;
	const char *path = obj->dlpi_name;
	uint64_t addr, bytes;
	struct err e = {{0}};
	if (!path || !*path) {
		if (s->main_seen++)
			return 0;
		path = "/proc/self/exe";
	}
	/* objects that are not files (the vDSO) or not ELF: nothing of cudart's */
	if (fatbin_elf_segment(path, &addr, &bytes, &e) || !bytes)
		return 0;
	uintptr_t at = obj->dlpi_addr + (uintptr_t)addr;
	if (!agent_loaded_left(obj, at, bytes))
		return 0;
	for (uint64_t i = 0; i + FATBIN_ELF_WRAPPER_SIZE <= bytes && s->cnt < AGENT_AHEAD_MAX_WRAPPERS;
	     i += FATBIN_ELF_WRAPPER_SIZE)
		if (agent_wrapper_ok(obj, at + i))
			s->wrappers[s->cnt++] = (const void *)(at + i);
	return 0;
}

/* After agent_attach (constructor 102) has the programs: the fatbins of the
 * objects loaded with the program, each a job for the thread, which looks
 * for targeted kernels in them (nothing here reads more than the files'
 * section headers: every process `gpuext run` starts comes here, shells
 * included, and only those with fatbins get a thread). */
__attribute__((constructor(104))) static void agent_ahead_at_start(void)
{
	if (!agent_gpu_prog_cnt || agent_ahead_mode() == AGENT_AHEAD_OFF)
		return;
	struct agent_start_scan *s = calloc(1, sizeof(*s));
	if (!s)
		return;
	dl_iterate_phdr(agent_scan_object, s);
	agent_ahead_started = s->cnt > 0;
	for (size_t i = 0; i < s->cnt; i++) {
		struct agent_ahead_job *j = calloc(1, sizeof(*j));
		if (!j)
			break;
		j->m.kind = AGENT_IMAGE_WRAPPER; /* in the loaded image: stays */
		j->m.image = s->wrappers[i];
		agent_ahead_queue(j);
	}
	free(s);
}
