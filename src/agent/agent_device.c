/* SPDX-License-Identifier: MIT */
/*
 * agent_device.c - the device side of the session.
 *
 * Device maps are created once, on the first GPU use, in the device's
 * primary context (which is what cudart uses; another current context
 * makes instrumentation fail open).  A background thread mirrors them into
 * the session's host maps per the session contract (session.h): every
 * AGENT_MIRROR_MS if a redirected launch was queued since the last time, as
 * a snapshot that does not synchronize with the application's streams
 * (PTX_RT_SNAPSHOT); complete when the application unloads a module, tears
 * its context down or exits.  It drains the device ring buffers every
 * AGENT_RING_MS, so that a kernel that writes records faster than that finds
 * room (a full ring drops).
 *
 * Why snapshots: a copy on the legacy stream (cuMemcpyDtoH) waits for the
 * application's queued kernels and holds back the ones it queues next, so
 * an application that launches back to back had its GPU idle for each copy
 * (memtrace's maps are 17 MB), and the mirror ran after every launch.
 * bench/gpu_tools_throughput.sh measures that cost.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "agent_device.h"
#include "agent_impl.h"
#include "agent_jit.h"
#include "agent_mem_signal.h"
#include "ptx/ptx_arena.h"
#include "ptx/ptx_rt.h"

enum { AGENT_MIRROR_MS = 100, AGENT_RING_MS = 2 };

pthread_mutex_t agent_gpu_lock = PTHREAD_MUTEX_INITIALIZER;
struct agent_gpu agent_gpu;

/* Compiles ahead from process start (agent_ahead.c), before any context
 * exists: GPU 0 described without one, and the device maps' references as
 * they will be. */
static struct {
	int tried;
	struct ptx_rt *rt;
	struct ptx_map_ref refs[AGENT_MAX_MAPS];
} agent_noctx;

/*
 * The device maps' arena (ptx_arena.h): made, if at all, by the first
 * compile ahead with no context (agent_noctx_open), before the maps are
 * planned; the device side (agent_gpu_make) closes the door (a context
 * exists by then: the driver would put it elsewhere).  Kept for the
 * process's life.  `refused`: the maps did not land where planned.
 */
static struct {
	pthread_mutex_t lock;
	int tried, refused;
	struct ptx_arena *a;
} agent_arena = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* GPUEXT_MAP_VA: the arena's address (0: none); unset, PTX_ARENA_VA. */
static uint64_t agent_arena_va(void)
{
	const char *v = getenv("GPUEXT_MAP_VA");
	char *end;
	if (!v || !*v)
		return PTX_ARENA_VA;
	unsigned long long va = strtoull(v, &end, 0);
	if (*end) {
		agent_notice("GPUEXT_MAP_VA=%s is not an address: no arena", v);
		return 0;
	}
	return va;
}

/* The arena, made on rt's GPU if rt and none was tried yet; with rt NULL,
 * no later call makes one. */
static struct ptx_arena *agent_arena_get(const struct ptx_rt *rt)
{
	pthread_mutex_lock(&agent_arena.lock);
	if (!agent_arena.tried && rt) {
		const struct object *obj = agent_session->obj;
		const struct map_def *defs[AGENT_MAX_MAPS];
		size_t n = obj->map_cnt < AGENT_MAX_MAPS ? obj->map_cnt : AGENT_MAX_MAPS;
		uint64_t va = agent_arena_va();
		struct err e = {{0}};
		struct timespec t0;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (size_t i = 0; i < n; i++)
			defs[i] = &obj->maps[i].def;
		if (va && ptx_rt_arena_make(rt, va, defs, n, &agent_arena.a, &e) &&
		    getenv("GPUEXT_AGENT_VERBOSE"))
			agent_notice("device maps' addresses read from a table: %s", e.msg);
		else if (agent_arena.a && getenv("GPUEXT_AGENT_VERBOSE"))
			agent_notice("device maps at 0x%llx (%zu bytes, before any context; %.1f ms): "
				     "their addresses are immediates in the code",
				     (unsigned long long)agent_arena.a->base, agent_arena.a->size,
				     agent_ms_since(&t0));
	}
	agent_arena.tried = 1;
	pthread_mutex_unlock(&agent_arena.lock);
	return agent_arena.a;
}

int agent_map_va(void)
{
	pthread_mutex_lock(&agent_arena.lock);
	int on = agent_arena.a && !agent_arena.refused;
	pthread_mutex_unlock(&agent_arena.lock);
	return on;
}

/* With an arena, did each map land where the code was planned with
 * (ptx_rt_map_ref_planned, as agent_noctx_open planned it)?  If not, the
 * arena is refused: the code built from now on reads the maps' addresses
 * from the table again. */
static void agent_arena_check(const struct ptx_rt *rt)
{
	const struct object *obj = agent_session->obj;
	if (!rt->arena)
		return;
	for (size_t i = 0; i < obj->map_cnt && i < AGENT_MAX_MAPS; i++) {
		struct ptx_map_ref plan = ptx_rt_map_ref_planned(rt, &obj->maps[i].def, i);
		if (agent_gpu.refs[i].map == plan.map && agent_gpu.refs[i].value == plan.value)
			continue;
		pthread_mutex_lock(&agent_arena.lock);
		agent_arena.refused = 1;
		pthread_mutex_unlock(&agent_arena.lock);
		agent_notice("map '%s' is at 0x%llx, not at 0x%llx as planned: the maps' "
			     "addresses are read from a table", obj->maps[i].def.name,
			     (unsigned long long)agent_gpu.refs[i].map,
			     (unsigned long long)plan.map);
		return;
	}
}

const struct ptx_rt *agent_gpu0(void)
{
	return agent_gpu.rt ? agent_gpu.rt : agent_noctx.rt;
}

const struct ptx_map_ref *agent_refs(void)
{
	return agent_gpu.rt ? agent_gpu.refs : agent_noctx.refs;
}

/* ---- mirroring (session contract, points 3 and 4) -------------------- */

static int agent_forward_record(void *arg, const void *data, size_t size)
{
	map_ringbuf_output(arg, data, size, 0); /* host full: counted as a host drop */
	return 0;
}

/* The ring buffers' records only (from pinned host memory: no driver
 * call), or every map with the drop counts (copies from the device), as a
 * snapshot or complete (enum ptx_rt_copy). */
enum agent_mirror_what { AGENT_RINGS, AGENT_SNAPSHOT, AGENT_ALL };

static void agent_mirror_some(enum agent_mirror_what what)
{
	enum ptx_rt_copy how = what == AGENT_SNAPSHOT ? PTX_RT_SNAPSHOT : PTX_RT_COMPLETE;
	struct session *s = agent_session;
	struct err e = {{0}};
	for (size_t i = 0; i < s->obj->map_cnt && i < AGENT_MAX_MAPS; i++) {
		struct ptx_rt_map *dm = agent_gpu.maps[i];
		struct map *host = s->obj->maps[i].map;
		if (!dm || !agent_gpu.mirrored[i])
			continue;
		if (map_get_def(host)->type == MAP_TYPE_RINGBUF) {
			uint64_t drops;
			ptx_rt_ringbuf_poll(dm, agent_forward_record, host);
			if (what != AGENT_RINGS && !ptx_rt_map_drops(dm, &drops, how, &e))
				__atomic_store_n(&s->hdr->status.rb_drops[i], drops, __ATOMIC_RELAXED);
		} else if (what != AGENT_RINGS && ptx_rt_map_sync_to_host(dm, host, how, &e)) {
			static int told;
			if (!told++)
				agent_notice("map '%s' not mirrored: %s", s->obj->maps[i].def.name,
					     e.msg);
		}
	}
}

/* Every map (AGENT_SNAPSHOT or AGENT_ALL); the memory runtime's device
 * signal is read around it. */
static void agent_mirror(enum agent_mirror_what what)
{
	agent_mem_signal_snapshot();
	agent_mirror_some(what);
}

static void *agent_mirror_main(void *arg)
{
	/* relaxed capture mode: our copies must not break another thread's
	 * stream capture (nor be refused by it) */
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	if (agent_gpu.capture_mode)
		agent_gpu.capture_mode(&mode);
	agent_gpu.rt->cu->ctx_set_current(agent_gpu.rt->ctx);
	for (;;) {
		struct timespec ts = {0, AGENT_RING_MS * 1000000L};
		int waited = 0;
		while (!__atomic_load_n(&agent_gpu.stop, __ATOMIC_ACQUIRE) &&
		       waited < AGENT_MIRROR_MS) {
			nanosleep(&ts, NULL);
			waited += AGENT_RING_MS;
			/* a drain never waits for an instrumentation in progress */
			if (!pthread_mutex_trylock(&agent_gpu_lock)) {
				agent_mirror_some(AGENT_RINGS);
				pthread_mutex_unlock(&agent_gpu_lock);
			}
		}
		if (__atomic_load_n(&agent_gpu.stop, __ATOMIC_ACQUIRE))
			break;
		/* nothing launched since the last copy: nothing to copy */
		if (!__atomic_exchange_n(&agent_gpu.dirty, 0, __ATOMIC_ACQ_REL))
			continue;
		pthread_mutex_lock(&agent_gpu_lock);
		agent_mirror(AGENT_SNAPSHOT);
		pthread_mutex_unlock(&agent_gpu_lock);
	}
	return NULL;
}

/* Stop the mirror thread; 0 if there was none (or it belongs to a parent). */
static int agent_mirror_stop(void)
{
	if (!agent_gpu.mirror_running || agent_gpu.mirror_pid != getpid())
		return 0;
	__atomic_store_n(&agent_gpu.stop, 1, __ATOMIC_RELEASE);
	pthread_join(agent_gpu.mirror_thread, NULL);
	agent_gpu.mirror_running = 0;
	return 1;
}

/*
 * The application unloads a module or tears its context down.  cudart does
 * both from its atexit handler, which runs before this library's destructor
 * and before the driver shuts down: by the destructor, the driver answers
 * CUDA_ERROR_DEINITIALIZED and the last kernels' counts would be lost.  So
 * the maps are copied here, and at a teardown for the last time (the device
 * maps live in the primary context, which a reset or the exit destroys).
 */
void agent_before_unload(int teardown)
{
	if (teardown)
		agent_cupti_flush();
	if (!agent_gpu.mirror_running || agent_gpu.mirror_pid != getpid())
		return;
	if (teardown)
		agent_mirror_stop();
	pthread_mutex_lock(&agent_gpu_lock);
	agent_mirror(AGENT_ALL);
	pthread_mutex_unlock(&agent_gpu_lock);
}

static void agent_gpu_atexit(void)
{
	agent_before_unload(1);
}

__attribute__((destructor)) static void agent_gpu_fini(void)
{
	if (!agent_mirror_stop())
		return;
	/* the last kernels' results: the application has normally synchronized
	 * before exiting; the copies wait for the rest */
	CUcontext cur = NULL;
	if (agent_gpu.ctx_get_current)
		agent_gpu.ctx_get_current(&cur);
	if (!cur)
		agent_gpu.rt->cu->ctx_set_current(agent_gpu.rt->ctx);
	agent_mirror(AGENT_ALL);
}

/* ---- the GPU side, once ---------------------------------------------- */

static void agent_mark_mirrored(const struct prog *p)
{
	for (size_t i = 0; i < p->insn_cnt; i++) {
		const struct isa_insn *in = &p->insns[i];
		if (in->code == 0x18 &&
		    (in->src == ISA_PSEUDO_MAP_FD || in->src == ISA_PSEUDO_MAP_VALUE) &&
		    in->imm >= 0 && in->imm < AGENT_MAX_MAPS)
			agent_gpu.mirrored[in->imm] = 1;
	}
}

/*
 * Make the device side: GPU 0's primary context retained, the maps created
 * there (into agent_gpu.maps and .refs, which nothing reads before
 * agent_gpu.rt is published), the memory runtime's signal bound (*signal
 * its map, or -1).  On failure everything is undone and noticed once.
 * Runs without agent_gpu_lock when made ahead (agent_device_ahead): a
 * compile ahead may hold it meanwhile.
 */
static int agent_gpu_make(struct ptx_rt **out, long *signal, struct err *e)
{
	agent_gpu.ctx_get_current = (agent_ctx_get_current_fn)agent_real_driver("cuCtxGetCurrent");
	agent_gpu.capture_mode =
		(agent_capture_mode_fn)agent_real_driver("cuThreadExchangeStreamCaptureMode");
	CUcontext app = NULL;
	if (agent_gpu.ctx_get_current)
		agent_gpu.ctx_get_current(&app);
	struct ptx_rt *rt;
	int err = ptx_rt_open(0, &rt, e);
	if (err) {
		agent_notice("device probes disabled, kernels run unchanged: %s", e->msg);
		return err;
	}
	if (app && app != rt->ctx) {
		rt->cu->ctx_set_current(app);
		ptx_rt_close(rt);
		agent_notice("device probes disabled, kernels run unchanged: the application's "
			     "context is not GPU 0's primary context");
		return err_set(e, ENOTSUP, "not the primary context");
	}
	rt->arena = agent_arena_get(NULL);
	struct session *s = agent_session;
	for (size_t i = 0; i < s->obj->map_cnt && !err; i++) {
		const struct object_map *om = &s->obj->maps[i];
		if (i >= AGENT_MAX_MAPS) {
			err = err_set(e, E2BIG, "too many maps");
			break;
		}
		if ((err = ptx_rt_map_create_at(rt, &om->def, i, &agent_gpu.maps[i], e))) {
			err_prefix(e, "map '%s': ", om->def.name);
			break;
		}
		agent_gpu.refs[i] = ptx_rt_map_ref(agent_gpu.maps[i]);
		if (om->init) /* global data: the session's current value */
			err = ptx_rt_map_array_set(agent_gpu.maps[i], 0, map_array_base(om->map), e);
	}
	if (!err)
		agent_arena_check(rt);
	*signal = -1;
	if (!err) /* while the primary context is current */
		*signal = agent_mem_signal_bind(agent_gpu.maps);
	if (!app)
		rt->cu->ctx_set_current(NULL);
	if (err) {
		for (size_t i = 0; i < AGENT_MAX_MAPS; i++)
			ptx_rt_map_free(agent_gpu.maps[i]), agent_gpu.maps[i] = NULL;
		ptx_rt_close(rt);
		agent_notice("device probes disabled, kernels run unchanged: %s", e->msg);
		return err;
	}
	*out = rt;
	return 0;
}

/* The device side made by agent_gpu_make in use, agent_gpu_lock held: the
 * mirror thread started. */
static void agent_gpu_publish(struct ptx_rt *rt, long signal)
{
	for (size_t i = 0; i < agent_gpu_prog_cnt; i++)
		agent_mark_mirrored(agent_gpu_progs[i]);
	if (signal >= 0) /* the memory runtime reads its part itself */
		agent_gpu.mirrored[signal] = 0;
	__atomic_store_n(&agent_gpu.rt, rt, __ATOMIC_RELEASE); /* read unlocked by agent_tier.c */
	agent_gpu.mirror_pid = getpid();
	agent_gpu.mirror_running = !pthread_create(&agent_gpu.mirror_thread, NULL,
						   agent_mirror_main, NULL);
	/* exit() runs atexit handlers newest first, all before any library
	 * destructor: registered now (after cudart registered its teardown at
	 * the application's first CUDA call), the last copy runs while the
	 * driver and the context are still alive; libcuda's own destructor
	 * would otherwise shut the driver down before agent_gpu_fini. */
	if (agent_gpu.mirror_running)
		atexit(agent_gpu_atexit);
}

/* Signalled when a device side made ahead is published (or failed). */
static pthread_cond_t agent_gpu_made = PTHREAD_COND_INITIALIZER;

/* Who makes the device side: the first to claim it (0 -> 1). */
static int agent_gpu_claim(void)
{
	int unclaimed = 0;
	return __atomic_compare_exchange_n(&agent_gpu.claimed, &unclaimed, 1, 0, __ATOMIC_ACQ_REL,
					   __ATOMIC_ACQUIRE);
}

int agent_gpu_init(struct err *e)
{
	if (!agent_gpu.tried && agent_gpu_claim()) {
		struct ptx_rt *rt;
		long signal;
		int err = agent_gpu_make(&rt, &signal, e);
		__atomic_store_n(&agent_gpu.tried, 1, __ATOMIC_RELEASE);
		if (!err)
			agent_gpu_publish(rt, signal);
		return err;
	}
	while (!agent_gpu.tried) /* being made ahead, by agent_device_ahead */
		pthread_cond_wait(&agent_gpu_made, &agent_gpu_lock);
	return agent_gpu.rt ? 0 : err_set(e, ENODEV, "GPU side unavailable (see above)");
}

/* ---- the map table of instrumented modules ------------------------- */

size_t agent_map_cnt(void)
{
	size_t n = agent_session->obj->map_cnt;
	return n < AGENT_MAX_MAPS ? (n ? n : 1) : AGENT_MAX_MAPS;
}

int agent_map_table_fill(CUmodule mod, const char *text, struct err *e)
{
	int for_arena = strstr(text, AGENT_MAP_VA_MARK) != NULL;
	if (for_arena && !agent_map_va())
		return err_set(e, ESTALE, "the instrumented module has the device maps' addresses "
			       "of their arena, which is not in use");
	const struct cu_driver *cu = agent_gpu.rt->cu;
	uint64_t table[2 * AGENT_MAX_MAPS] = {0};
	CUdeviceptr d;
	size_t bytes = 0, n = agent_map_cnt();
	CUresult r = cu->module_get_global(&d, &bytes, mod, AGENT_MAP_TABLE);
	if (r == CUDA_ERROR_NOT_FOUND && for_arena)
		return 0; /* no mem probe: every address an immediate */
	if (r != CUDA_SUCCESS)
		return cu_err(cu, e, r, "the instrumented module's map table");
	for (size_t i = 0; i < n && i < agent_session->obj->map_cnt; i++) {
		table[2 * i] = agent_gpu.refs[i].map;
		table[2 * i + 1] = agent_gpu.refs[i].value;
	}
	if (bytes < 16 * n)
		return err_set(e, EINVAL, "the instrumented module's map table is %zu bytes", bytes);
	r = cu->memcpy_htod(d, table, 16 * n);
	return r == CUDA_SUCCESS ? 0 : cu_err(cu, e, r, "filling the map table");
}

/* ---- GPU 0 ---------------------------------------------------------- */

/* Is GPU 0's primary context active (someone retains it)?  *cu and *dev
 * set when it is.  Asked without making it active. */
static int agent_primary_active(const struct cu_driver **cu, CUdevice *dev)
{
	typedef CUresult (*state_fn)(CUdevice, unsigned *, int *);
	static state_fn state;
	unsigned flags;
	int active = 0;
	if (!state)
		state = (state_fn)agent_real_driver("cuDevicePrimaryCtxGetState");
	return state && !cu_driver_load(cu, NULL) && (*cu)->device_get(dev, 0) == CUDA_SUCCESS &&
	       state(*dev, &flags, &active) == CUDA_SUCCESS && active;
}

int agent_is_primary(CUcontext ctx)
{
	if (agent_gpu.tried)
		return agent_gpu.rt && ctx == agent_gpu.rt->ctx;
	const struct cu_driver *cu;
	CUdevice dev;
	CUcontext primary = NULL;
	if (!ctx || !agent_primary_active(&cu, &dev) ||
	    cu->primary_ctx_retain(&primary, dev) != CUDA_SUCCESS)
		return 0;
	cu->primary_ctx_release(dev);
	return ctx == primary;
}

int agent_device_ahead(void)
{
	const struct cu_driver *cu;
	CUdevice dev;
	struct err e = {{0}};
	struct timespec t0;
	if (__atomic_load_n(&agent_gpu.claimed, __ATOMIC_ACQUIRE))
		return 1;
	if (!agent_primary_active(&cu, &dev))
		return 0;
	if (!agent_gpu_claim())
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct ptx_rt *rt;
	long signal;
	/* without agent_gpu_lock, which a compile ahead may hold meanwhile:
	 * published under it */
	int err = agent_gpu_make(&rt, &signal, &e);
	double ms = agent_ms_since(&t0);
	pthread_mutex_lock(&agent_gpu_lock);
	__atomic_store_n(&agent_gpu.tried, 1, __ATOMIC_RELEASE);
	if (!err)
		agent_gpu_publish(rt, signal);
	pthread_cond_broadcast(&agent_gpu_made);
	pthread_mutex_unlock(&agent_gpu_lock);
	if (!err && getenv("GPUEXT_AGENT_VERBOSE"))
		agent_notice("device side made ahead of the first launch (%zu maps; %.1f ms, "
			     "in use %.1f ms later)", agent_session->obj->map_cnt, ms,
			     agent_ms_since(&t0) - ms);
	return 1;
}

int agent_noctx_open(struct err *e)
{
	if (agent_noctx.tried)
		return agent_noctx.rt ? 0 : err_set(e, ENODEV, "no GPU (see above)");
	agent_noctx.tried = 1;
	if (ptx_rt_open_noctx(0, &agent_noctx.rt, e))
		return -ENODEV;
	agent_noctx.rt->arena = agent_arena_get(agent_noctx.rt);
	const struct object *obj = agent_session->obj;
	for (size_t i = 0; i < obj->map_cnt && i < AGENT_MAX_MAPS; i++)
		agent_noctx.refs[i] = ptx_rt_map_ref_planned(agent_noctx.rt, &obj->maps[i].def, i);
	return 0;
}

void agent_launch_done(CUstream s)
{
	session_count(agent_session, SESSION_REDIRECTED);
	__atomic_store_n(&agent_gpu.dirty, 1, __ATOMIC_RELEASE);
}
