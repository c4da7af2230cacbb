/* SPDX-License-Identifier: MIT */
/*
 * memcost_block_traffic.bpf.c - memtrace_block with the per-kind traffic counters alone, to time that
 * part (bench/memtrace_cost.sh; results in
 * bench/results/2026-11-22-h200-memtrace-s4.md).
 */
#define MT_PARTS MT_PART_TRAFFIC
#include "../../tools/memtrace_block.bpf.c"
