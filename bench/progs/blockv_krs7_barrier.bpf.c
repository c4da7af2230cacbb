/* SPDX-License-Identifier: MIT */
/* blockv_krs7 with the barrier form's end: the block_entry program past
 * thread (0,0,0)'s first loads, then a block_exit program (after the exit
 * barrier, thread (0,0,0)) storing the end time; no warp exit program */
#define KRS_NO_WARP_EXIT
#define KRS_BLOCK_EXIT_END
#include "blockv_krs7.bpf.c"
