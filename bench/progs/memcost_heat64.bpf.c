/* SPDX-License-Identifier: MIT */
/*
 * memcost_heat64.bpf.c - memtrace's heat half with its counters spread
 * over 64 copies per SM instead of 8, to measure what contention on the
 * counters' lines costs (bench/memtrace_cost.sh).
 */
#define MT_PARTS MT_PART_HEAT
#define MT_HEAT_COPIES 64
#include "../../tools/memtrace.bpf.c"
