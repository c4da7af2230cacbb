/* SPDX-License-Identifier: MIT */
/*
 * memcost_heat.bpf.c - tools/memtrace.bpf.c with only its heat half,
 * to time what each half of memtrace costs (bench/memtrace_cost.sh).
 */
#define MT_PARTS MT_PART_HEAT
#include "../../tools/memtrace.bpf.c"
