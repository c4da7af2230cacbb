/* SPDX-License-Identifier: MIT */
/*
 * memcost_traffic.bpf.c - tools/memtrace.bpf.c with only its traffic half,
 * to time what each half of memtrace costs (bench/memtrace_cost.sh).
 */
#define MT_PARTS MT_PART_TRAFFIC
#include "../../tools/memtrace.bpf.c"
