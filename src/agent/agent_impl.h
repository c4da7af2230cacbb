/* SPDX-License-Identifier: MIT */
/*
 * agent_impl.h - what the agent's files share (not an interface for others:
 * that is agent.h).
 */
#ifndef GPUEXT_AGENT_IMPL_H
#define GPUEXT_AGENT_IMPL_H

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

/* Best-effort demangled base name of an Itanium C++ function name
 * ("_Z6vecaddPfS_S_i" -> "vecadd", "_ZN2ns3fooEv" -> "ns::foo"). */
void agent_demangle_base(const char *mangled, char *out, size_t len);

#endif /* GPUEXT_AGENT_IMPL_H */
