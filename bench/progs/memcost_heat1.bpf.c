/* SPDX-License-Identifier: MIT */
/*
 * memcost_heat1.bpf.c - memtrace's heat half with one copy of its counters
 * per SM instead of SPREAD_SLOTS, to measure what contention on the
 * counters' lines costs now that nothing is loaded (bench/memtrace_cost.sh).
 */
#define MT_PARTS MT_PART_HEAT
#define MT_HEAT_COPIES 1
#include "../../tools/memtrace.bpf.c"
