/* SPDX-License-Identifier: MIT */
/*
 * agent.h - the preloaded agent's hook registry.
 *
 * The agent interposes the CUDA driver API three ways: exported symbols
 * (programs that link libcuda or dlsym it), dlsym itself (cudart's
 * dlsym(libcuda, "cuGetProcAddress_v2") bypasses LD_PRELOAD interposition)
 * and cuGetProcAddress(_v2).  On each of these paths, for every driver
 * function name it asks agent_hook_lookup(name, real): the result is what
 * the application gets (real when nobody hooks the name).  Modules of the
 * agent (launch redirection, the host engineer's API probes) extend it by
 * registering a resolver.
 *
 * A resolver gets the driver's function name (without a _v2/_ptsz suffix
 * removed: "cuLaunchKernel_ptsz" is its own name) and the real pointer, and
 * returns its wrapper or NULL to pass.  It must store `real` itself (e.g.
 * in a static) to call on: the agent calls every resolver for every lookup,
 * so a wrapper may be handed out several times with the same real pointer.
 * Resolvers are asked in registration order; the first non-NULL wins.
 * Registration is not thread-safe: do it from a constructor.
 */
#ifndef GPUEXT_AGENT_H
#define GPUEXT_AGENT_H

typedef void *(*agent_resolver_fn)(const char *name, void *real);

/* Add a resolver (at most AGENT_MAX_RESOLVERS); returns 0 or -ENOSPC. */
enum { AGENT_MAX_RESOLVERS = 16 };
int agent_hook_register(agent_resolver_fn fn);

/*
 * Add an outer resolver (at most AGENT_MAX_RESOLVERS): asked after the
 * others with what they chose (their wrapper, or real), and its non-NULL
 * answer wraps that.  The API probes use it, so that a probed function the
 * agent also wraps (cuLaunchKernel) runs its probes and then the agent's
 * wrapper.  Returns 0 or -ENOSPC.
 */
int agent_hook_register_outer(agent_resolver_fn fn);

/* What the application gets for driver function name whose real address is
 * real (NULL real: NULL, a missing function stays missing). */
void *agent_hook_lookup(const char *name, void *real);

/* The real dlsym (never the agent's own), for the agent's modules. */
void *agent_real_dlsym(void *handle, const char *name);

/* One "gpuext: " line on stderr (and into the session's last message). */
__attribute__((format(printf, 1, 2))) void agent_notice(const char *fmt, ...);

#endif /* GPUEXT_AGENT_H */
