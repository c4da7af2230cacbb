/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes-s7.md: blockv_krs7 with the
 * start time from the block's record (ctx->start_ns: %globaltimer read by
 * the injector at the kernel's entry, before the loads) instead of read by
 * the program at its sink point */
#define KRS_START_NS(ctx) ((ctx)->start_ns)
#include "blockv_krs7.bpf.c"
