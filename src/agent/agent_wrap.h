/* SPDX-License-Identifier: MIT */
/*
 * agent_wrap.h - the driver functions the agent wraps with one shape, as
 * one list (AGENT_DRIVER_WRAPPERS); agent_wrap.c generates from it each
 * wrapper, exported under the driver's symbol, the static that holds its
 * real function, and the table that hands the wrapper out through dlsym
 * and cuGetProcAddress.
 *
 * The shape: resolve the real function (AGENT_REAL), run `before`, call
 * the real function with the application's arguments, run `after` when it
 * returned CUDA_SUCCESS, return its result unchanged.  `before` may
 * replace an argument (a graph node's parameters point to an instrumented
 * copy); it and `after` are statements or AGENT_NOTHING.  Wrappers that
 * decide something else (launch redirection with its retry, stream
 * priorities, cuInit starting CUPTI) stay hand-written in their files.
 *
 * Every row: X(group, name, sym, params, args, before, after)
 *   group   who hands the wrapper out (enum agent_wrap_group)
 *   name    agent_w_<name> is the wrapper, real_<name> its real function
 *   sym     the driver symbol it is exported as
 *   params  the driver's parameter list; args the same names as a call
 * AGENT_DRIVER_ALIASES rows, A(group, sym, name): another name the driver
 * hands out for the same prototype (cuCtxDestroy and cuCtxDestroy_v2), not
 * exported, served by wrapper name.
 */
#ifndef GPUEXT_AGENT_WRAP_H
#define GPUEXT_AGENT_WRAP_H

#include <cuda.h>

#include "agent_impl.h"

#define AGENT_NOTHING ((void)0)

#define AGENT_DRIVER_WRAPPERS(X)                                                          \
	/* modules and libraries: the image each handle came from (agent_cuda.c) */       \
	X(PLAIN, load_data, "cuModuleLoadData", (CUmodule * m, const void *image),         \
	  (m, image), AGENT_NOTHING, agent_module_add(*m, image))                       \
	X(PLAIN, load_data_ex, "cuModuleLoadDataEx",                                       \
	  (CUmodule * m, const void *image, unsigned n, CUjit_option *o, void **v),         \
	  (m, image, n, o, v), AGENT_NOTHING, agent_module_add(*m, image))              \
	X(PLAIN, load_fatbin, "cuModuleLoadFatBinary", (CUmodule * m, const void *image),  \
	  (m, image), AGENT_NOTHING, agent_module_add(*m, image))                       \
	/* from a file: a module without an image ("no PTX captured" if targeted) */      \
	X(PLAIN, load, "cuModuleLoad", (CUmodule * m, const char *path), (m, path),        \
	  AGENT_NOTHING, agent_module_add(*m, NULL))                                    \
	X(PLAIN, unload, "cuModuleUnload", (CUmodule m), (m), agent_before_unload(0),      \
	  agent_module_forget(m))                                                        \
	X(PLAIN, lib_load, "cuLibraryLoadData",                                            \
	  (CUlibrary * l, const void *code, CUjit_option *jo, void **jv, unsigned jn,       \
	   CUlibraryOption *lo, void **lv, unsigned ln),                                    \
	  (l, code, jo, jv, jn, lo, lv, ln), AGENT_NOTHING, agent_module_add(*l, code)) \
	X(PLAIN, lib_unload, "cuLibraryUnload", (CUlibrary l), (l), agent_before_unload(0), \
	  agent_module_forget(l))                                                        \
	X(PLAIN, lib_get_module, "cuLibraryGetModule", (CUmodule * m, CUlibrary l), (m, l), \
	  AGENT_NOTHING, agent_library_module(*m, l))                                      \
	/* kernel handles: their module and name (agent_cuda.c) */                        \
	X(PLAIN, get_function, "cuModuleGetFunction",                                      \
	  (CUfunction * f, CUmodule m, const char *name), (f, m, name), AGENT_NOTHING,      \
	  agent_kernel_add(*f, m, name))                                                 \
	X(PLAIN, lib_get_kernel, "cuLibraryGetKernel",                                     \
	  (CUkernel * k, CUlibrary l, const char *name), (k, l, name), AGENT_NOTHING,       \
	  agent_kernel_add(*k, l, name))                                                 \
	X(PLAIN, kernel_get_function, "cuKernelGetFunction", (CUfunction * f, CUkernel k), \
	  (f, k), AGENT_NOTHING, agent_kernel_alias(*f, k))                                \
	/* context teardown: the device maps reach the session first */                   \
	X(PLAIN, primary_release, "cuDevicePrimaryCtxRelease_v2", (CUdevice d), (d),       \
	  agent_before_unload(1), AGENT_NOTHING)                                           \
	X(PLAIN, primary_reset, "cuDevicePrimaryCtxReset_v2", (CUdevice d), (d),           \
	  agent_before_unload(1), AGENT_NOTHING)                                           \
	X(PLAIN, ctx_destroy, "cuCtxDestroy_v2", (CUcontext c), (c), agent_before_unload(1), \
	  AGENT_NOTHING)                                                                   \
	/* the JIT linker's PTX inputs (agent_link.c); cuGetProcAddress hands the */      \
	/* _v2 functions out under the base names: same prototypes */                     \
	X(PLAIN, link_create, "cuLinkCreate",                                              \
	  (unsigned n, CUjit_option *o, void **v, CUlinkState *st), (n, o, v, st),          \
	  AGENT_NOTHING, agent_link_created(*st))                                          \
	X(PLAIN, link_create_v2, "cuLinkCreate_v2",                                        \
	  (unsigned n, CUjit_option *o, void **v, CUlinkState *st), (n, o, v, st),          \
	  AGENT_NOTHING, agent_link_created(*st))                                          \
	X(PLAIN, link_add_data, "cuLinkAddData", AGENT_LINK_ADD_DATA_PARAMS,               \
	  AGENT_LINK_ADD_DATA_ARGS, AGENT_NOTHING, agent_link_data_added(st, type, data, size)) \
	X(PLAIN, link_add_data_v2, "cuLinkAddData_v2", AGENT_LINK_ADD_DATA_PARAMS,         \
	  AGENT_LINK_ADD_DATA_ARGS, AGENT_NOTHING, agent_link_data_added(st, type, data, size)) \
	X(PLAIN, link_add_file, "cuLinkAddFile", AGENT_LINK_ADD_FILE_PARAMS,               \
	  AGENT_LINK_ADD_FILE_ARGS, AGENT_NOTHING, agent_link_file_added(st, type, path))  \
	X(PLAIN, link_add_file_v2, "cuLinkAddFile_v2", AGENT_LINK_ADD_FILE_PARAMS,         \
	  AGENT_LINK_ADD_FILE_ARGS, AGENT_NOTHING, agent_link_file_added(st, type, path))  \
	X(PLAIN, link_complete, "cuLinkComplete", (CUlinkState st, void **cubin, size_t *size), \
	  (st, cubin, size), AGENT_NOTHING, agent_link_completed(st, cubin))               \
	X(PLAIN, link_destroy, "cuLinkDestroy", (CUlinkState st), (st),                    \
	  agent_link_destroyed(st), AGENT_NOTHING)                                         \
	/* graph kernel nodes get the instrumented function (agent_graph.c); the */       \
	/* base names' and the _v2 names' parameter structs differ */                     \
	X(GRAPH, graph_add, "cuGraphAddKernelNode",                                        \
	  (CUgraphNode * n, CUgraph g, const CUgraphNode *d, size_t nd,                     \
	   const CUDA_KERNEL_NODE_PARAMS_v1 *p),                                            \
	  (n, g, d, nd, p), AGENT_NODE_V1(p), AGENT_NOTHING)                               \
	X(GRAPH, graph_add_v2, "cuGraphAddKernelNode_v2",                                  \
	  (CUgraphNode * n, CUgraph g, const CUgraphNode *d, size_t nd,                     \
	   const CUDA_KERNEL_NODE_PARAMS_v2 *p),                                            \
	  (n, g, d, nd, p), AGENT_NODE_V2(p), AGENT_NOTHING)                               \
	X(GRAPH, graph_set, "cuGraphKernelNodeSetParams",                                  \
	  (CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v1 *p), (n, p), AGENT_NODE_V1(p),   \
	  AGENT_NOTHING)                                                                   \
	X(GRAPH, graph_set_v2, "cuGraphKernelNodeSetParams_v2",                            \
	  (CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v2 *p), (n, p), AGENT_NODE_V2(p),   \
	  AGENT_NOTHING)                                                                   \
	X(GRAPH, exec_set, "cuGraphExecKernelNodeSetParams",                               \
	  (CUgraphExec e, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v1 *p), (e, n, p),   \
	  AGENT_NODE_V1(p), AGENT_NOTHING)                                                 \
	X(GRAPH, exec_set_v2, "cuGraphExecKernelNodeSetParams_v2",                         \
	  (CUgraphExec e, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v2 *p), (e, n, p),   \
	  AGENT_NODE_V2(p), AGENT_NOTHING)                                                 \
	/* managed memory under a memory policy (agent_mem_hook.c); the range */          \
	/* is forgotten before it is freed: it is gone after */                           \
	X(MEM, alloc_managed, "cuMemAllocManaged",                                         \
	  (CUdeviceptr * dptr, size_t bytesize, unsigned int flags), (dptr, bytesize, flags), \
	  AGENT_NOTHING, agent_mem_hook_alloc(*dptr, bytesize))                            \
	X(MEM, free, "cuMemFree_v2", (CUdeviceptr dptr), (dptr), agent_mem_hook_free(dptr), \
	  AGENT_NOTHING)

#define AGENT_DRIVER_ALIASES(A)                                   \
	A(PLAIN, "cuDevicePrimaryCtxRelease", primary_release)    \
	A(PLAIN, "cuDevicePrimaryCtxReset", primary_reset)        \
	A(PLAIN, "cuCtxDestroy", ctx_destroy)                     \
	A(MEM, "cuMemFree", free)

#define AGENT_LINK_ADD_DATA_PARAMS                                                       \
	(CUlinkState st, CUjitInputType type, void *data, size_t size, const char *name, \
	 unsigned n, CUjit_option *o, void **v)
#define AGENT_LINK_ADD_DATA_ARGS (st, type, data, size, name, n, o, v)
#define AGENT_LINK_ADD_FILE_PARAMS \
	(CUlinkState st, CUjitInputType type, const char *path, unsigned n, CUjit_option *o, void **v)
#define AGENT_LINK_ADD_FILE_ARGS (st, type, path, n, o, v)
/* The node's parameters as the driver gets them: p, or a copy of *p in the
 * wrapper's frame with the instrumented function and the node's launch id
 * (its storage in node_args, freed when the wrapper returns). */
#define AGENT_NODE_V1(p)                  \
	CUDA_KERNEL_NODE_PARAMS_v1 node_copy; \
	AGENT_LAUNCH_ARGS(node_args);         \
	p = agent_graph_node_v1(p, &node_copy, &node_args)
#define AGENT_NODE_V2(p)                  \
	CUDA_KERNEL_NODE_PARAMS_v2 node_copy; \
	AGENT_LAUNCH_ARGS(node_args);         \
	p = agent_graph_node_v2(p, &node_copy, &node_args)

/*
 * Who hands a wrapper out: PLAIN rows always (agent_wrap.c's resolver),
 * GRAPH rows agent_graph.c's resolver (a base name gets the _v2 wrapper
 * when the driver handed out its _v2 function), MEM rows agent_mem_hook.c's
 * resolver, registered only under a memory policy.
 */
enum agent_wrap_group { AGENT_WRAP_PLAIN, AGENT_WRAP_GRAPH, AGENT_WRAP_MEM };

/* The row (or alias) of group g for the driver name, or NULL. */
const struct agent_hooked *agent_wrap_find(enum agent_wrap_group g, const char *name);
/* agent_wrap_find's wrapper for real (agent_hooked_take), or NULL. */
void *agent_wrap_resolve(enum agent_wrap_group g, const char *name, void *real);

/* ---- what the generated wrappers call (the real work, in its files) ---- */

/* agent_cuda.c: a module or library handle and the image it came from;
 * one unloaded (its kernels are forgotten); a library's module. */
void agent_module_add(void *handle, const void *image);
void agent_module_forget(const void *handle);
void agent_library_module(CUmodule m, CUlibrary l);
/* agent_cuda.c: a kernel handle of a module or library, by name; a
 * function handle of a known kernel (the same module and name). */
void agent_kernel_add(const void *handle, const void *module, const char *name);
void agent_kernel_alias(const void *alias, const void *of);

/* agent_link.c: the JIT linker's states and their PTX inputs. */
void agent_link_created(CUlinkState st);
void agent_link_data_added(CUlinkState st, CUjitInputType type, const void *data, size_t size);
void agent_link_file_added(CUlinkState st, CUjitInputType type, const char *path);
void agent_link_completed(CUlinkState st, void **cubin);
void agent_link_destroyed(CUlinkState st);

/* agent_graph.c: p, or copy (*p with the instrumented function and the
 * parameters of args, which hold the node's launch id). */
const CUDA_KERNEL_NODE_PARAMS_v1 *agent_graph_node_v1(const CUDA_KERNEL_NODE_PARAMS_v1 *p,
						      CUDA_KERNEL_NODE_PARAMS_v1 *copy,
						      struct agent_launch_args *args);
const CUDA_KERNEL_NODE_PARAMS_v2 *agent_graph_node_v2(const CUDA_KERNEL_NODE_PARAMS_v2 *p,
						      CUDA_KERNEL_NODE_PARAMS_v2 *copy,
						      struct agent_launch_args *args);

/* agent_mem_hook.c: managed memory allocated and about to be freed. */
void agent_mem_hook_alloc(CUdeviceptr va, size_t len);
void agent_mem_hook_free(CUdeviceptr va);

#endif /* GPUEXT_AGENT_WRAP_H */
