/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes-s7.md: blockv_krs7's
 * block_entry program alone (three stores past thread (0,0,0)'s first
 * loads), no warp exit program */
#define KRS_NO_WARP_EXIT
#include "blockv_krs7.bpf.c"
