/* SPDX-License-Identifier: MIT */
/*
 * agent_tier.h - the form a kernel's mem probes take (agent_tier.c):
 * pasted at every access, or called.
 */
#ifndef GPUEXT_AGENT_TIER_H
#define GPUEXT_AGENT_TIER_H

#include <stddef.h>

/* How many bytes of a mem probe's PTX a kernel may get pasted, one copy per
 * access (ptx_inject_opts.mem_inline_max), before its accesses call the
 * probe instead (local: a mem program uses local memory). */
size_t agent_mem_inline_max(int local);

#endif /* GPUEXT_AGENT_TIER_H */
