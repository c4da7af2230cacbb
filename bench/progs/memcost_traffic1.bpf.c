/* SPDX-License-Identifier: MIT */
/*
 * memcost_traffic1.bpf.c - memtrace's traffic half with one copy of its
 * counters per SM instead of SPREAD_SLOTS (no warp index to compute), to
 * measure what spreading them buys (bench/memtrace_cost.sh).
 */
#define MT_PARTS MT_PART_TRAFFIC
#define MT_TRAFFIC_COPIES 1
#include "../../tools/memtrace.bpf.c"
