/* SPDX-License-Identifier: MIT */
/*
 * agent_impl.h - what the agent's files share (not an interface for others:
 * that is agent.h).
 */
#ifndef GPUEXT_AGENT_IMPL_H
#define GPUEXT_AGENT_IMPL_H

#include <cuda.h>
#include <time.h>

#include "bpf/prog.h"
#include "bpf/session.h"
#include "bpf/gpuext_launch.h"
#include "ptx/ptx_inject.h"

/* The session (NULL: none, or it failed to open; the agent then passes
 * everything through) and its verified GPU programs. */
extern struct session *agent_session;
extern struct prog *agent_gpu_progs[64];
extern size_t agent_gpu_prog_cnt;

/* The real driver function name (RTLD_NEXT, else libcuda.so.1's). */
void *agent_real_driver(const char *name);

/* Symbols the agent interposes (every other symbol of the library is hidden). */
#define AGENT_EXPORT __attribute__((visibility("default")))

/* A wrapper's real function: set when a lookup hands the wrapper out, else
 * resolved from the driver at first call. */
#define AGENT_REAL(var, sym)                                                    \
	do {                                                                    \
		if (!(var))                                                     \
			*(void **)&(var) = agent_real_driver(sym);              \
		if (!(var))                                                     \
			return CUDA_ERROR_NOT_FOUND;                            \
	} while (0)

/* Declare wrapper ret_name, exported under the driver's symbol sym. */
#define AGENT_WRAP(ret_name, sym, params) AGENT_EXPORT CUresult ret_name params __asm__(sym);

/* One driver function the agent wraps: its name, the wrapper, and where the
 * wrapper finds the real function. */
struct agent_hooked {
	const char *name;
	void *wrapper;
	void **real;
};

/* The entry of name in table[0..n), or NULL. */
const struct agent_hooked *agent_hooked_find(const struct agent_hooked *table, size_t n,
					     const char *name);
/* Hand out h's wrapper for real (remembered as the real function, unless a
 * lookup handed the wrapper itself back). */
void *agent_hooked_take(const struct agent_hooked *h, void *real);

/* Does a GPU program of the session target kernel `mangled`? */
int agent_kernel_targeted(const char *mangled);
/* Does p's glob match the mangled name or its demangled base name? */
int agent_kernel_targeted_by(const struct prog *p, const char *mangled, const char *base);

/* Best-effort demangled base name of an Itanium C++ function name
 * ("_Z6vecaddPfS_S_i" -> "vecadd", "_ZN2ns3fooEv" -> "ns::foo"). */
void agent_demangle_base(const char *mangled, char *out, size_t len);

/* What a module (or library) was loaded from. */
enum agent_image_kind {
	AGENT_IMAGE_NONE,    /* cuModuleLoad(file): not captured */
	AGENT_IMAGE_WRAPPER, /* cudart's fatbin wrapper (0x466243b1), in the binary */
	AGENT_IMAGE_FATBIN,  /* fatbin bytes (0xba55ed50), copied */
	AGENT_IMAGE_CUBIN,   /* ELF: SASS only */
	AGENT_IMAGE_PTX,     /* PTX text, copied */
	AGENT_IMAGE_LINKED,  /* a JIT linker's cubin: its PTX inputs, copied */
};

struct agent_module {
	struct agent_module *next;
	void *handle;             /* CUmodule or CUlibrary */
	enum agent_image_kind kind;
	const void *image;        /* wrapper or fatbin (owned or in the binary) or PTX */
	size_t image_len;
	void *owned;              /* copy of the image, or NULL */
	char *ptx;                /* the PTX chosen for the device, once extracted */
	char **inputs;            /* AGENT_IMAGE_LINKED: the link's PTX inputs */
	size_t input_cnt;
	int ptx_failed;           /* extraction failed (noticed once) */
	struct timespec loaded;   /* CLOCK_MONOTONIC at the load call */
};

/* A kernel handle (CUfunction, or CUkernel that may be launched as one). */
struct agent_kernel {
	struct agent_kernel *next;
	const void *handle;
	struct agent_module *module;
	char *name;               /* mangled */
	int decided;              /* instrumented, or decided to run unchanged */
	CUfunction inst;          /* the instrumented function, or NULL */
	CUfunction inst_flat;     /* its twin for flat launches (ptx_inject.h), or NULL */
	struct ptx_launch_param lid; /* inst's launch id parameter (agent_launch_id.c) */
	struct timespec made;     /* CLOCK_MONOTONIC when the handle was made */
	struct agent_tier *tier;  /* inst is the called form until this is ready (agent_tier.h) */
};

struct agent_kernel *agent_kernel_find(const void *handle);

/* The PTX inputs of the link whose cuLinkComplete produced cubin (copies,
 * for the module loaded from it): 1 if there is such a link. */
int agent_link_take(const void *cubin, char ***ptx, size_t *cnt);

/* The next kernel ptx defines from *at on (".entry NAME(" or ".entry NAME"
 * and a space), into name; advances *at past it.  0 when there is none. */
int agent_next_entry(const char **at, char *name, size_t len);

/* Launch path (agent_instr.c): the function to launch for f on stream s
 * with grid and block dims (x, y, z, x, y, z: the instrumented kernel's
 * flat twin where both are 1-D and it has one; f itself when untargeted or
 * on any failure); *k = f's kernel when it is redirected (its lid says
 * what the launch must pass), else NULL. */
CUfunction agent_launch_target(CUfunction f, CUstream s, const unsigned dims[6],
			       struct agent_kernel **k);

/*
 * Launch ids (agent_launch_id.c).  An instrumented kernel has one more
 * parameter, the launch's id (ptx_inject_opts.launch_param): every launch
 * of it passes the application's parameters and the id, which
 * agent_launch_args_make builds (kernelParams: one more pointer; `extra`:
 * the buffer copied with the id at its offset and the size fixed).  The
 * storage lives in *a, on the launching wrapper's stack, until
 * agent_launch_args_free (a cleanup attribute: AGENT_LAUNCH_ARGS).
 */
enum { AGENT_LAUNCH_SMALL = 32 };
struct agent_launch_args {
	void **params, **extra;  /* what to pass */
	uint64_t id;             /* the launch's id (the last parameter points here) */
	size_t size;             /* `extra`: the buffer's new size */
	void *small[AGENT_LAUNCH_SMALL];
	void *heap;              /* kernelParams beyond small, or the `extra` buffer */
	void *extra_copy[5];
};
#define AGENT_LAUNCH_ARGS(name) \
	struct agent_launch_args name __attribute__((cleanup(agent_launch_args_free))) = {0}
/* 0 with a->params/extra to pass (the application's when k has no id
 * parameter); -1 when this launch cannot carry the id (an `extra` form it
 * does not understand, no memory): launch the original function (noticed once). */
int agent_launch_args_make(struct agent_launch_args *a, const struct agent_kernel *k,
			   void **params, void **extra);
void agent_launch_args_free(struct agent_launch_args *a);
/* A launch of k with a's id was queued (or a graph node made): its row of
 * the launch table (the session's ring buffer GPUEXT_LAUNCHES_MAP, when the
 * object has one).  dims: grid x, y, z, block x, y, z. */
void agent_launch_note(const struct agent_launch_args *a, const struct agent_kernel *k,
		       const unsigned dims[6], unsigned shmem, CUstream s,
		       enum gpuext_launch_kind kind);
/* Instrument the targeted kernels of m (a private copy of a module loaded in
 * ctx), at most budget of them, now, ahead of their first launch, when ctx is
 * GPU 0's primary context: the results wait in the instrumented-module cache
 * for those launches.  The number of compiles done. */
int agent_instrument_ahead(struct agent_module *m, CUcontext ctx, int budget);
/* Compile the targeted kernels of m (from process start, before any
 * context) into context-independent libraries, where their first launches
 * find them (agent_ahead_lib_*); when the device side exists already, in
 * its context (agent_instrument_ahead).  The number of compiles done. */
int agent_compile_ahead_noctx(struct agent_module *m, int budget);
/* agent_ahead.c: does this process compile from process start with no
 * context (cuLibraryLoadData)?  Then every instrumented module has the
 * runtime functions compiled in (nothing can be linked without a context),
 * at start and at the launches alike, so that they make the same text. */
int agent_ahead_no_context(void);
/* A library compiled from PTX text with no context (*ms: how long), kept
 * for the launch that wants that text; 0 or -errno (e set). */
int agent_ahead_lib_compile(const char *text, double *ms, struct err *e);
/* The module in the current context of the library made from text: 1, or
 * 0 when there is none. */
int agent_ahead_lib_module(const char *text, CUmodule *mod);
/* agent_ahead.c: run fn(arg) on the background thread, after the work
 * queued before (started when there is none); 0, or -1 when it cannot be
 * (the process exits): fn is not called then. */
int agent_ahead_call(void (*fn)(void *), void *arg);
/* agent_ahead.c: is the process exiting (the thread stops after its job)? */
int agent_ahead_stopping(void);
/* agent_ahead.c: module m was loaded in ctx: instrument its targeted
 * kernels ahead of their first launch, in the background. */
void agent_ahead_module(const struct agent_module *m, CUcontext ctx);
/* The driver refused the redirected launch of f: fall back for good. */
void agent_launch_refused(CUfunction f, CUresult r);
/* A redirected launch was queued on s: the next mirror copies the maps. */
void agent_launch_done(CUstream s);
/* The application unloads code (teardown 0) or releases, resets or destroys
 * a context (teardown 1): copy the device maps into the session now. */
void agent_before_unload(int teardown);
/* Scheduling session (agent_sched.c): non-NULL when launches go through
 * the policy's admission; ask before a launch, count a queued one in flight. */
extern struct sched_member *agent_sched_member;
void agent_sched_admit(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		       unsigned bz);
void agent_sched_queued(CUstream s, int ptsz);
/* Hand CUPTI's pending records to the CUPTI programs now (context
 * teardown: CUPTI's buffers of that context go with it). */
void agent_cupti_flush(void);

#endif /* GPUEXT_AGENT_IMPL_H */
