/* SPDX-License-Identifier: MIT */
/*
 * memcost_heat8.bpf.c - memtrace's heat half with its counters spread over
 * SPREAD_SLOTS copies per SM (by the warp's and block's index) instead of
 * one, to measure what spreading them buys (bench/memtrace_cost.sh).
 */
#define MT_PARTS MT_PART_HEAT
#define MT_HEAT_COPIES SPREAD_SLOTS
#include "../../tools/memtrace.bpf.c"
