/* SPDX-License-Identifier: MIT */
/*
 * memcost_bits_always.bpf.c - tools/memtrace.bpf.c with the bits that name
 * a region slot's region per SM and ORed at every access, no load (two
 * reductions an access, as session 5's merged layout), to time what the
 * load that ORs once per region saves (bench/memtrace_cost.sh).
 */
#define MT_BITS_ALWAYS
#include "../../tools/memtrace.bpf.c"
