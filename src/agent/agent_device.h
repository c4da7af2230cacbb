/* SPDX-License-Identifier: MIT */
/*
 * agent_device.h - the device side of the session (agent_device.c): GPU 0's
 * primary context, the device maps made in it, their table in every
 * instrumented module, and their mirroring into the session's host maps.
 * Shared by the agent's instrumentation files only.
 */
#ifndef GPUEXT_AGENT_DEVICE_H
#define GPUEXT_AGENT_DEVICE_H

#include <cuda.h>
#include <pthread.h>
#include <sys/types.h>

#include "bpf/err.h"
#include "bpf/session.h"
#include "ptx/ptx_rt.h"

enum { AGENT_MAX_MAPS = SESSION_MAX_MAPS };

typedef CUresult (*agent_ctx_get_current_fn)(CUcontext *);
typedef CUresult (*agent_capture_mode_fn)(CUstreamCaptureMode *);

/* Held while the device side is made, a kernel is instrumented (its
 * compile and load), and the maps are copied whole: a launch waits for
 * one of these at most. */
extern pthread_mutex_t agent_gpu_lock;

struct agent_gpu {
	int tried;                      /* made, or failed (agent_gpu.rt NULL) */
	int claimed;                    /* being made: by a launch or ahead (agent_device_ahead) */
	struct ptx_rt *rt;              /* NULL: GPU side unavailable */
	struct ptx_rt_map *maps[AGENT_MAX_MAPS];
	struct ptx_map_ref refs[AGENT_MAX_MAPS];
	int mirrored[AGENT_MAX_MAPS];   /* referenced by a GPU program */
	agent_ctx_get_current_fn ctx_get_current;
	agent_capture_mode_fn capture_mode;
	pthread_t mirror_thread;
	int mirror_running;
	pid_t mirror_pid;               /* a forked child has no mirror thread */
	int dirty;                      /* a redirected launch since the last mirror */
	int stop;
};
extern struct agent_gpu agent_gpu;

/* Make the device side once (agent_gpu_lock held): GPU 0's primary
 * context, the device maps, the mirror thread.  0 when it is ready; a
 * failure is noticed once and every later call fails the same way. */
int agent_gpu_init(struct err *e);

/* The device side made ahead of the first launch (agent_ahead.c's poller
 * asks every millisecond while the compiles ahead run): once the
 * application's GPU 0 primary context is active (the agent never makes it
 * active itself), made there without agent_gpu_lock, so that a compile in
 * progress does not hold it up, and published under it (agent_gpu_init
 * waits for that).  1 when there is nothing more to wait for (made,
 * failed, or made by a launch already), 0 while that context is not
 * active. */
int agent_device_ahead(void);

/* Is ctx GPU 0's primary context (the one the device maps live in)?  An
 * inactive primary context is not made active to find out. */
int agent_is_primary(CUcontext ctx);

/* Before the device side exists, compiles ahead with no context
 * (agent_ahead.c) see GPU 0 described without one and the device maps'
 * references as they will be: agent_noctx_open makes that description once
 * (agent_gpu_lock held), 0 when ready. */
int agent_noctx_open(struct err *e);

/* GPU 0 as the choice of PTX and the module cache's tag see it: the device
 * side's, or, before it exists, the description the compiles ahead use. */
const struct ptx_rt *agent_gpu0(void);

/* The maps' references the probes are translated with: with their
 * arena (agent_map_va), where the maps are (or will be); else only their
 * layout (the code reads the addresses from the module's map table). */
const struct ptx_map_ref *agent_refs(void);

/*
 * Where instrumented code finds the device maps.  With their arena in use
 * (ptx_arena.h, made before any context: docs/device-maps.md), their
 * addresses are immediates in the code, the same in every run, so the
 * module cache and the libraries compiled ahead keep them; else the code
 * reads them from the module's table (ptx_emit_opts.map_table), filled at
 * each load.  Invariant: a module runs only with its maps where its text
 * says.  The text has immediates only while the arena is in use; the device
 * side refuses the arena (agent_map_va 0 from then on) when a map does not
 * land at its planned place; and every module passes agent_map_table_fill
 * before it runs, which refuses one made for the arena (its text has the
 * mark) once the arena is not in use.
 */
int agent_map_va(void);

/* The instrumented module's table of the device maps' addresses, declared
 * where the arena is not in use or mem probes read it; the mark (a PTX
 * comment) in a module made while the arena was in use. */
#define AGENT_MAP_TABLE "gx_map_table"
#define AGENT_MAP_VA_MARK "// gpuext: the device maps' addresses of their arena"

/* The table's number of maps (at least 1: PTX has no empty arrays). */
size_t agent_map_cnt(void);

/* Fill the map table of mod, loaded from text (a module made for the
 * arena: refused unless the arena is in use, see above; its table, where
 * it has one, filled too): the code must not run before. */
int agent_map_table_fill(CUmodule mod, const char *text, struct err *e);

#endif /* GPUEXT_AGENT_DEVICE_H */
