/* SPDX-License-Identifier: MIT */
/*
 * agent_graph.c - CUDA graph kernel nodes added or changed explicitly
 * (cuGraphAddKernelNode, cuGraphKernelNodeSetParams,
 * cuGraphExecKernelNodeSetParams, each in its v1 and _v2 form; the
 * wrappers are agent_wrap.h's GRAPH rows): the node gets the instrumented
 * function when a program targets its kernel.  Graphs captured from
 * streams need nothing here: the captured launches went through the launch
 * wrappers.  Kernels of graph launches are mirrored by the agent's timer
 * (session.h), not at each completion.
 */
#include <stdio.h>
#include <string.h>

#include "agent.h"
#include "agent_impl.h"
#include "agent_wrap.h"

/*
 * The node's function, redirected, with its parameters and a launch id of
 * its own (the node's row of the launch table is written now: every run of
 * the graph repeats the id).  Unchanged when the kernel is not
 * instrumented or the id cannot be passed.  F is the function, P the
 * parameter struct (v1 and v2 share these fields).
 */
#define AGENT_GRAPH_NODE(F, P, copy, args)                                              \
	do {                                                                            \
		struct agent_kernel *k = NULL;                                          \
		const unsigned d[6] = {(P)->gridDimX,  (P)->gridDimY,  (P)->gridDimZ,   \
				       (P)->blockDimX, (P)->blockDimY, (P)->blockDimZ}; \
		CUfunction g = (F) ? agent_launch_target(F, NULL, d, &k) : (F);         \
		if (g == (F) || agent_launch_args_make(args, k, (P)->kernelParams,      \
						       (P)->extra))                      \
			return P;                                                       \
		*(copy) = *(P);                                                         \
		(copy)->func = g;                                                       \
		(copy)->kernelParams = (args)->params;                                  \
		(copy)->extra = (args)->extra;                                          \
		agent_launch_note(args, k, d, (P)->sharedMemBytes, NULL,                \
				  GPUEXT_LAUNCH_GRAPH_NODE);                            \
	} while (0)

const CUDA_KERNEL_NODE_PARAMS_v2 *agent_graph_node_v2(const CUDA_KERNEL_NODE_PARAMS_v2 *p,
						      CUDA_KERNEL_NODE_PARAMS_v2 *copy,
						      struct agent_launch_args *args)
{
	if (!p || !agent_gpu_prog_cnt)
		return p;
	CUfunction f = p->func ? p->func : (CUfunction)p->kern;
	AGENT_GRAPH_NODE(f, p, copy, args);
	copy->kern = NULL;
	return copy;
}

const CUDA_KERNEL_NODE_PARAMS_v1 *agent_graph_node_v1(const CUDA_KERNEL_NODE_PARAMS_v1 *p,
						      CUDA_KERNEL_NODE_PARAMS_v1 *copy,
						      struct agent_launch_args *args)
{
	if (!p || !agent_gpu_prog_cnt)
		return p;
	AGENT_GRAPH_NODE(p->func, p, copy, args);
	return copy;
}

/*
 * cuGetProcAddress hands out the v1 or the _v2 function under the base name,
 * depending on the CUDA version asked for (_v2 from 12.0), and the two take
 * different parameter structs: a base name gets the _v2 wrapper when the
 * real function is the driver's _v2 export, else the v1 wrapper.
 */
static void *agent_resolve_graph(const char *name, void *real)
{
	const struct agent_hooked *h = agent_wrap_find(AGENT_WRAP_GRAPH, name);
	char v2[96];
	if (!h)
		return NULL;
	size_t n = strlen(name);
	if ((n < 3 || strcmp(name + n - 3, "_v2")) &&
	    snprintf(v2, sizeof(v2), "%s_v2", name) < (int)sizeof(v2)) {
		/* a base name: is real the driver's _v2 function? */
		const struct agent_hooked *h2 = agent_wrap_find(AGENT_WRAP_GRAPH, v2);
		void *real_v2 = h2 ? agent_real_driver(v2) : NULL;
		if (real_v2 && real_v2 == real)
			h = h2;
	}
	return agent_hooked_take(h, real);
}

__attribute__((constructor(101))) static void agent_graph_init(void)
{
	agent_hook_register(agent_resolve_graph);
}
