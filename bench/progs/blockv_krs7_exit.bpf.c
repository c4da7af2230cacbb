/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes-s7.md: blockv_krs7's warp
 * exit program alone (each warp's red.max of its exit time at the block's
 * end word), no block_entry program */
#define KRS_NO_BLOCK_ENTRY
#include "blockv_krs7.bpf.c"
