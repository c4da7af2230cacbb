/* SPDX-License-Identifier: MIT */
/*
 * agent_graph.c - CUDA graph kernel nodes added or changed explicitly
 * (cuGraphAddKernelNode, cuGraphKernelNodeSetParams,
 * cuGraphExecKernelNodeSetParams, each in its v1 and _v2 form): the node
 * gets the instrumented function when a program targets its kernel.
 * Graphs captured from streams need nothing here: the captured launches
 * went through the launch wrappers.  Kernels of graph launches are mirrored
 * by the agent's timer (session.h), not at each completion.
 */
#include <string.h>

#include "agent.h"
#include "agent_impl.h"



/* The node's function, redirected (v2 params: func, else the CUkernel). */
static void agent_node_v2(CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
	if (!agent_gpu_prog_cnt)
		return;
	CUfunction f = p->func ? p->func : (CUfunction)p->kern;
	CUfunction g = f ? agent_launch_target(f, NULL) : f;
	if (g != f) {
		p->func = g;
		p->kern = NULL;
	}
}

static void agent_node_v1(CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
	if (agent_gpu_prog_cnt && p->func)
		p->func = agent_launch_target(p->func, NULL);
}

typedef CUresult (*add_v1_fn)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
			      const CUDA_KERNEL_NODE_PARAMS_v1 *);
typedef CUresult (*add_v2_fn)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
			      const CUDA_KERNEL_NODE_PARAMS_v2 *);
typedef CUresult (*set_v1_fn)(CUgraphNode, const CUDA_KERNEL_NODE_PARAMS_v1 *);
typedef CUresult (*set_v2_fn)(CUgraphNode, const CUDA_KERNEL_NODE_PARAMS_v2 *);
typedef CUresult (*exec_set_v1_fn)(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS_v1 *);
typedef CUresult (*exec_set_v2_fn)(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS_v2 *);

static add_v1_fn real_add;
static add_v2_fn real_add_v2;
static set_v1_fn real_set;
static set_v2_fn real_set_v2;
static exec_set_v1_fn real_exec_set;
static exec_set_v2_fn real_exec_set_v2;

AGENT_EXPORT CUresult agent_w_graph_add(CUgraphNode *n, CUgraph g, const CUgraphNode *d,
					size_t nd, const CUDA_KERNEL_NODE_PARAMS_v1 *p)
	__asm__("cuGraphAddKernelNode");
CUresult agent_w_graph_add(CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd,
			   const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
	AGENT_REAL(real_add, "cuGraphAddKernelNode");
	if (!p)
		return real_add(n, g, d, nd, p);
	CUDA_KERNEL_NODE_PARAMS_v1 q = *p;
	agent_node_v1(&q);
	return real_add(n, g, d, nd, &q);
}

AGENT_EXPORT CUresult agent_w_graph_add_v2(CUgraphNode *n, CUgraph g, const CUgraphNode *d,
					   size_t nd, const CUDA_KERNEL_NODE_PARAMS_v2 *p)
	__asm__("cuGraphAddKernelNode_v2");
CUresult agent_w_graph_add_v2(CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd,
			      const CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
	AGENT_REAL(real_add_v2, "cuGraphAddKernelNode_v2");
	if (!p)
		return real_add_v2(n, g, d, nd, p);
	CUDA_KERNEL_NODE_PARAMS_v2 q = *p;
	agent_node_v2(&q);
	return real_add_v2(n, g, d, nd, &q);
}

AGENT_EXPORT CUresult agent_w_graph_set(CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v1 *p)
	__asm__("cuGraphKernelNodeSetParams");
CUresult agent_w_graph_set(CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
	AGENT_REAL(real_set, "cuGraphKernelNodeSetParams");
	if (!p)
		return real_set(n, p);
	CUDA_KERNEL_NODE_PARAMS_v1 q = *p;
	agent_node_v1(&q);
	return real_set(n, &q);
}

AGENT_EXPORT CUresult agent_w_graph_set_v2(CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v2 *p)
	__asm__("cuGraphKernelNodeSetParams_v2");
CUresult agent_w_graph_set_v2(CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
	AGENT_REAL(real_set_v2, "cuGraphKernelNodeSetParams_v2");
	if (!p)
		return real_set_v2(n, p);
	CUDA_KERNEL_NODE_PARAMS_v2 q = *p;
	agent_node_v2(&q);
	return real_set_v2(n, &q);
}

AGENT_EXPORT CUresult agent_w_exec_set(CUgraphExec e, CUgraphNode n,
				       const CUDA_KERNEL_NODE_PARAMS_v1 *p)
	__asm__("cuGraphExecKernelNodeSetParams");
CUresult agent_w_exec_set(CUgraphExec e, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
	AGENT_REAL(real_exec_set, "cuGraphExecKernelNodeSetParams");
	if (!p)
		return real_exec_set(e, n, p);
	CUDA_KERNEL_NODE_PARAMS_v1 q = *p;
	agent_node_v1(&q);
	return real_exec_set(e, n, &q);
}

AGENT_EXPORT CUresult agent_w_exec_set_v2(CUgraphExec e, CUgraphNode n,
					  const CUDA_KERNEL_NODE_PARAMS_v2 *p)
	__asm__("cuGraphExecKernelNodeSetParams_v2");
CUresult agent_w_exec_set_v2(CUgraphExec e, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
	AGENT_REAL(real_exec_set_v2, "cuGraphExecKernelNodeSetParams_v2");
	if (!p)
		return real_exec_set_v2(e, n, p);
	CUDA_KERNEL_NODE_PARAMS_v2 q = *p;
	agent_node_v2(&q);
	return real_exec_set_v2(e, n, &q);
}

/*
 * cuGetProcAddress hands out the v1 or the _v2 function under the base name,
 * depending on the CUDA version asked for (_v2 from 12.0), and the two take
 * different parameter structs: a base name gets the _v2 wrapper when the
 * real function is the driver's _v2 export, else the v1 wrapper.
 */
static const struct agent_hooked agent_graph_hooked[] = {
	{"cuGraphAddKernelNode", (void *)agent_w_graph_add, (void **)&real_add},
	{"cuGraphAddKernelNode_v2", (void *)agent_w_graph_add_v2, (void **)&real_add_v2},
	{"cuGraphKernelNodeSetParams", (void *)agent_w_graph_set, (void **)&real_set},
	{"cuGraphKernelNodeSetParams_v2", (void *)agent_w_graph_set_v2, (void **)&real_set_v2},
	{"cuGraphExecKernelNodeSetParams", (void *)agent_w_exec_set, (void **)&real_exec_set},
	{"cuGraphExecKernelNodeSetParams_v2", (void *)agent_w_exec_set_v2,
	 (void **)&real_exec_set_v2},
};
enum { AGENT_GRAPH_HOOKED = sizeof(agent_graph_hooked) / sizeof(agent_graph_hooked[0]) };

static void *agent_resolve_graph(const char *name, void *real)
{
	const struct agent_hooked *h = agent_hooked_find(agent_graph_hooked, AGENT_GRAPH_HOOKED, name);
	if (!h)
		return NULL;
	if ((h - agent_graph_hooked) % 2 == 0) {
		/* a base name: is real the driver's _v2 function? */
		void *v2 = agent_real_driver(h[1].name);
		if (v2 && v2 == real)
			h++;
	}
	return agent_hooked_take(h, real);
}

__attribute__((constructor(101))) static void agent_graph_init(void)
{
	agent_hook_register(agent_resolve_graph);
}
