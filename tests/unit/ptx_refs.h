/* SPDX-License-Identifier: MIT */
/*
 * ptx_refs.h - a program's map references as the agent gives them to the
 * translator (ptx_emit_opts.maps), for the PTX tests: made-up addresses,
 * and the arrays' geometry, so that their lookups and updates are inline
 * (ptx_emit.h) as on a GPU.
 */
#ifndef GPUEXT_TEST_PTX_REFS_H
#define GPUEXT_TEST_PTX_REFS_H

#include <stddef.h>

#include "bpf/prog.h"
#include "ptx/ptx_emit.h"

/* refs[0..n) for p's maps (p->map_cnt <= n); per-SM arrays for 132 SMs. */
void ptx_refs_of(const struct prog *p, struct ptx_map_ref *refs, size_t n);

#endif
