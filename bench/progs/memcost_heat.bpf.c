/* SPDX-License-Identifier: MIT */
/*
 * memcost_heat.bpf.c - tools/memtrace.bpf.c with only the bits that name a
 * region slot's region (one OR an access), to time what each part of
 * memtrace costs (bench/memtrace_cost.sh).
 */
#define MT_PARTS MT_PART_BITS
#include "../../tools/memtrace.bpf.c"
