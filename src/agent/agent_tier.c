/* SPDX-License-Identifier: MIT */
/*
 * agent_tier.c - the form a kernel's mem probes take: the program's block
 * pasted before each access (no call; ptxas compiles one copy per access),
 * or one probe function called at each access.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent_tier.h"

/*
 * The limit: AGENT_MEM_INLINE_MAX, measured (docs/ptx-inject.md, "Mem
 * probes inline"); none for a program with local memory (ptxas gives each
 * copy a frame of its own).  GPUEXT_PTX_MEM_INLINE=1 pastes at every
 * access whatever the size, =0 calls everywhere, to compare both in one
 * build.
 */
#define AGENT_MEM_INLINE_MAX (128u << 10)

size_t agent_mem_inline_max(int local)
{
	const char *v = getenv("GPUEXT_PTX_MEM_INLINE");
	if (v && !strcmp(v, "1"))
		return SIZE_MAX;
	if (v && !strcmp(v, "0"))
		return 0;
	return local ? 0 : AGENT_MEM_INLINE_MAX;
}
