/* SPDX-License-Identifier: MIT */
/*
 * agent_impl.h - what the agent's files share (not an interface for others:
 * that is agent.h).
 */
#ifndef GPUEXT_AGENT_IMPL_H
#define GPUEXT_AGENT_IMPL_H

#include <cuda.h>

#include "bpf/prog.h"
#include "bpf/session.h"

/* The session (NULL: none, or it failed to open; the agent then passes
 * everything through) and its verified GPU programs. */
extern struct session *agent_session;
extern struct prog *agent_gpu_progs[64];
extern size_t agent_gpu_prog_cnt;

/* The real driver function name (RTLD_NEXT, else libcuda.so.1's). */
void *agent_real_driver(const char *name);

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
};

/* A kernel handle (CUfunction, or CUkernel that may be launched as one). */
struct agent_kernel {
	struct agent_kernel *next;
	const void *handle;
	struct agent_module *module;
	char *name;               /* mangled */
	int decided;              /* instrumented, or decided to run unchanged */
	CUfunction inst;          /* the instrumented function, or NULL */
};

struct agent_kernel *agent_kernel_find(const void *handle);

/* The PTX inputs of the link whose cuLinkComplete produced cubin (copies,
 * for the module loaded from it): 1 if there is such a link. */
int agent_link_take(const void *cubin, char ***ptx, size_t *cnt);

/* Launch path (agent_instr.c): the function to launch for f on stream s
 * (f itself when untargeted or on any failure). */
CUfunction agent_launch_target(CUfunction f, CUstream s);
/* The driver refused the redirected launch of f: fall back for good. */
void agent_launch_refused(CUfunction f, CUresult r);
/* A redirected launch was queued on s: mirror maps when it completes. */
void agent_launch_done(CUstream s);
/* The application unloads code (teardown 0) or releases, resets or destroys
 * a context (teardown 1): copy the device maps into the session now. */
void agent_before_unload(int teardown);

#endif /* GPUEXT_AGENT_IMPL_H */
