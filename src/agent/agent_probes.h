/* SPDX-License-Identifier: MIT */
/*
 * agent_probes.h - the PTX that the programs targeting a kernel add to its
 * module (agent_probes.c), before it is injected (ptx_inject).
 */
#ifndef GPUEXT_AGENT_PROBES_H
#define GPUEXT_AGENT_PROBES_H

#include <stddef.h>
#include <stdint.h>

#include "agent_device.h"
#include "bpf/err.h"
#include "ptx/ptx_inject.h"

/* Where inline probe code goes (ptx_inject_opts' *_code). */
enum { AGENT_ENTRY, AGENT_EXIT, AGENT_BLOCK_ENTRY, AGENT_BLOCK_EXIT, AGENT_MEM, AGENT_SITES };

/*
 * What the programs targeting kernel (warp mode) add to its module: entry
 * and exit programs inline (ptx_emit_probe_inline: no call per warp), one
 * block per program in site[AGENT_ENTRY] / [AGENT_EXIT], block_entry and
 * block_exit programs likewise; mem programs in both forms
 * (ptx_emit_mem_probe): their blocks in site[AGENT_MEM], pasted at each
 * access when small enough (mem_inline_max, agent_tier.h), else the probe
 * functions in mem_func, called at each access (mem_sym: through gxa_mem
 * when there are several); the device runtime functions they use, and the
 * callees, in extra.  NULL / "" for a kind no program has.
 */
struct agent_probes {
	char *extra, *site[AGENT_SITES]; /* inline code per site; NULL: none */
	char *mem_func;    /* the mem probe functions (called form) */
	char mem_sym[160]; /* the function every access calls; "": no mem probe */
	size_t mem_inline_max; /* ptx_inject_opts' */
	int mem_run_loop;  /* ptx_inject_opts': a copy a region (agent_tier_choose) */
	int mem_local;     /* a mem program uses local memory (its stack) */
	int linked; /* extra declares runtime functions, to be linked (ptx_rt_module_link) */
	/* the block-local arrays the kernel's programs name (ptx_inject_opts) */
	struct ptx_block_array block_arrays[AGENT_MAX_MAPS];
	char block_syms[AGENT_MAX_MAPS][PTX_BLOCK_ARRAY_SYM_LEN];
	size_t n_block_arrays;
	uint32_t block_bytes; /* their shared memory, in all */
};

/* Build what the programs targeting kernel add (link: the runtime
 * functions declared, to be linked from the prebuilt runtime, where that
 * works; else their text): 0, or -errno with e set naming the program. */
int agent_build_probes(const char *kernel, int link, struct agent_probes *pr, struct err *e);
void agent_probes_free(struct agent_probes *pr);

#endif /* GPUEXT_AGENT_PROBES_H */
