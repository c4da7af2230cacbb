/* SPDX-License-Identifier: MIT */
/*
 * session.h - what `gpuext run` shares with the agent inside the target.
 *
 * A session is one POSIX shared-memory segment (shm_open, mode 0600, named
 * "/gpuext-PID-RANDOM", unlinked by its creator when the run ends) that holds
 *   - a header: magic, version, sizes, and the target's status fields that
 *     the agent writes (attached, kernels instrumented / skipped, errors,
 *     the last message);
 *   - the eBPF object file image, so that the agent opens the same object
 *     with object_open_mem() and verifies every program itself (no load
 *     path skips the verifier);
 *   - the storage of every map of the object (map_open_storage), so that the
 *     CLI and the agent see the same maps.
 * Every link inside the segment is an offset; it maps at any address.
 *
 * THE SESSION CONTRACT (the tools and the CLI formatters rely on it; also in
 * docs/session.md):
 *   1. Every map of the object exists as a host map in the session, map i of
 *      the object being session map i.
 *   2. Host programs (uprobes on driver API calls, CUPTI) update them
 *      directly.
 *   3. For GPU programs the agent keeps device copies (ptx_rt maps) and
 *      mirrors them into the session's host maps on a timer while launches
 *      happen (snapshots that do not synchronize with the application) and
 *      completely at a module unload, a context teardown and the exit: arrays and per-SM
 *      arrays copy values (SM s to CPU slot s), hashes copy all live
 *      elements (keys gone on the device are deleted).  Values are copied,
 *      never added, so nothing is counted twice; host programs and GPU
 *      programs should therefore not write the same array element.
 *   4. Device ring buffer records are forwarded by the agent into the
 *      session ring buffer of the same map, in order; the device's drop
 *      count is added to the host drop count (session_status.rb_drops).
 *   5. The CLI only ever reads the session's host maps (and consumes the
 *      ring buffers: it is their one consumer).
 */
#ifndef GPUEXT_BPF_SESSION_H
#define GPUEXT_BPF_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "map.h"
#include "object.h"

#define SESSION_ENV "GPUEXT_SESSION"
/* Set by `gpuext run --kernel-uprobes`: the kernel runs the session's uprobe
 * programs, so the agent attaches none in process.  Its value "stop" asks
 * the agent to stop the process (SIGSTOP) at its start for gpuext to attach
 * the kernel uprobes; the agent sets it to "1" for the process's children. */
#define SESSION_KERNEL_UPROBES_ENV "GPUEXT_KERNEL_UPROBES"
#define SESSION_KERNEL_UPROBES_STOP "stop"
#define SESSION_MAGIC 0x53587067u /* "gpXS" */
#define SESSION_VERSION 1u

/*
 * Per-CPU maps of a session have SESSION_MAP_CPUS slots (at least; the
 * host's configured CPUs if more): GPU per-SM arrays mirror SM s into slot s,
 * and GPUs have up to ~150 SMs.  Host programs use slot cpu % slots.
 */
enum { SESSION_MSG_LEN = 256, SESSION_MAX_MAPS = 64, SESSION_MAP_CPUS = 256 };

/* Written by the agent (atomically, relaxed), read by the CLI. */
struct session_status {
	uint32_t attached;       /* 1 once the agent has opened the session */
	uint32_t agent_pid;
	uint32_t kernels_instrumented;
	uint32_t kernels_skipped;  /* targeted but run unchanged (fail-open) */
	uint32_t errors;
	uint32_t launches_redirected;
	uint64_t rb_drops[SESSION_MAX_MAPS]; /* device drops added per map */
	char last_msg[SESSION_MSG_LEN];
};

struct session_hdr {
	uint32_t magic, version;
	uint64_t size;           /* whole segment */
	uint64_t obj_off, obj_len;
	uint32_t map_cnt, pad;
	uint64_t map_off[SESSION_MAX_MAPS];
	struct session_status status;
};

struct session {
	char name[64];
	struct session_hdr *hdr;
	size_t size;
	int owner;               /* created it: unlinks it on close */
	struct object *obj;      /* object opened from the image, maps in the segment */
};

/*
 * Create a session for obj (opened by the caller from image/len): the
 * segment, the image copied in, every map's storage formatted (global data
 * initialised) and obj's maps replaced by handles on that storage.  obj
 * must have no maps created yet.
 */
int session_create(struct object *obj, struct session **out, struct err *e);

/*
 * Open the session named name (the agent): open the object from the image
 * in the segment and point its maps at the segment's storage.  The caller
 * verifies the programs.
 */
int session_open(const char *name, struct session **out, struct err *e);

/* Unmap (and unlink if created here); frees the object. */
void session_close(struct session *s);

/* Status updates by the agent: message "fmt" also becomes last_msg. */
__attribute__((format(printf, 2, 3))) void session_note(struct session *s,
							const char *fmt, ...);
enum session_counter { SESSION_INSTRUMENTED, SESSION_SKIPPED, SESSION_ERRORS,
		       SESSION_REDIRECTED };
void session_count(struct session *s, enum session_counter c);

#endif /* GPUEXT_BPF_SESSION_H */
