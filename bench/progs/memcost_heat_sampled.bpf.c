/* SPDX-License-Identifier: MIT */
/*
 * memcost_heat_sampled.bpf.c - memtrace's heat half counting one warp
 * instruction in 8 (chosen by the warp's and block's index, so the same
 * warps every time), to measure what sampling the heat map would save
 * (bench/memtrace_cost.sh).
 */
#define MT_PARTS MT_PART_HEAT
#define MT_HEAT_SAMPLE 8
#include "../../tools/memtrace.bpf.c"
