/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes-s5.md, kernelretsnoop decomposed:
 * one 8-byte store at the block index after the exit barrier and no time
 * read (blockv_krs_end less its %globaltimer) */
#define KRS_END_VALUE(ctx) ((ctx)->block)
#include "blockv_krs_end.bpf.c"
