/* SPDX-License-Identifier: MIT */
/*
 * memcost_none.bpf.c - tools/memtrace.bpf.c with only its probe (no map update),
 * to time what each half of memtrace costs (bench/memtrace_cost.sh).
 */
#define MT_PARTS 0
#include "../../tools/memtrace.bpf.c"
