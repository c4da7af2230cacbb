/* SPDX-License-Identifier: MIT */
/*
 * memcost_heat_count.bpf.c - memtrace's heat half without the bits that
 * name a slot's region (the count's add alone), to measure what the OR
 * costs (bench/memtrace_cost.sh).
 */
#define MT_PARTS MT_PART_HEAT
#define MT_HEAT_NO_BITS
#include "../../tools/memtrace.bpf.c"
