/* SPDX-License-Identifier: MIT */
/*
 * spread.h - how the tools spread counters that every warp updates.
 *
 * On an H200, atomic adds to one cache line from many warps are served one
 * after the other by the L2, at roughly 40-50 cycles each (measured: 1.7x on
 * a 64 us kernel whose 524,288 warps each add twice to their SM's line).  So
 * a counter that all warps of an SM update is kept in SPREAD_SLOTS copies,
 * each on a 128-byte line of its own, chosen by the warp's index in its
 * block (bpf_gpu_warp_id() % SPREAD_SLOTS: the warps of a block, which run
 * together, take different lines); readers sum the copies.
 */
#ifndef GPUEXT_TOOLS_SPREAD_H
#define GPUEXT_TOOLS_SPREAD_H

#define SPREAD_SLOTS 8

#endif
