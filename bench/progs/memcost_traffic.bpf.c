/* SPDX-License-Identifier: MIT */
/*
 * memcost_traffic.bpf.c - tools/memtrace.bpf.c with only its counts (the
 * lanes per region slot, kind and size: traffic and heat in one add), to
 * time what each part of memtrace costs (bench/memtrace_cost.sh).
 */
#define MT_PARTS MT_PART_COUNTS
#include "../../tools/memtrace.bpf.c"
