/* SPDX-License-Identifier: MIT */
/*
 * memcost_block_none.bpf.c - memtrace_block with the probe and the block's scaffolding, no count, to time that
 * part (bench/memtrace_cost.sh; results in
 * bench/results/2026-11-22-h200-memtrace-s4.md).
 */
#define MT_PARTS 0
#include "../../tools/memtrace_block.bpf.c"
