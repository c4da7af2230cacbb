/* SPDX-License-Identifier: MIT */
/*
 * memcost_traffic8.bpf.c - memtrace's traffic half with its counters spread
 * over SPREAD_SLOTS copies per SM (by the warp's index) instead of one, to
 * measure what spreading them buys (bench/memtrace_cost.sh).
 */
#define MT_PARTS MT_PART_TRAFFIC
#define MT_TRAFFIC_COPIES SPREAD_SLOTS
#include "../../tools/memtrace.bpf.c"
