/* SPDX-License-Identifier: MIT */
/*
 * agent_mem_signal.h - the device access signal of the memory-policy
 * runtime (agent_mem_signal.c), as the agent's device side calls it.
 */
#ifndef GPUEXT_AGENT_MEM_SIGNAL_H
#define GPUEXT_AGENT_MEM_SIGNAL_H

#include "ptx/ptx_rt.h"

/* The device maps exist (maps: by session map index): when the session
 * holds policies/mem-signal.bpf.c's, the signal starts (the runtime takes
 * it over from CUPTI at the first touch it reports).  Returns the index of
 * the map this file copies itself (not to be mirrored), or -1. */
long agent_mem_signal_bind(struct ptx_rt_map **maps);
/* Around each copy of the device maps into the session. */
void agent_mem_signal_before(void);
void agent_mem_signal_after(void);
/* A managed allocation came or went: the window follows. */
void agent_mem_signal_window_changed(void);

#endif /* GPUEXT_AGENT_MEM_SIGNAL_H */
