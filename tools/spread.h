/* SPDX-License-Identifier: MIT */
/*
 * spread.h - how the tools spread counters that every warp updates.
 *
 * A counter that all warps of an SM update is kept in SPREAD_SLOTS copies,
 * each on a 128-byte line of its own, chosen by the warp's index in its
 * block (bpf_gpu_warp_id() % SPREAD_SLOTS: the warps of a block, which run
 * together, take different lines), or for block probes by the block's
 * linear index (the blocks an SM runs at once are mostly consecutive);
 * readers sum the copies.  Measured on an
 * H200 against one line per SM (bench/results/2026-11-22-h200-device-tools.md):
 * smload, 5 adds a warp, 6.29x -> 5.41x on vecadd, 1.67x -> 1.08x on reduce,
 * 1.56x -> 0.81x on imbalance; threadhist and memtrace unchanged.
 */
#ifndef GPUEXT_TOOLS_SPREAD_H
#define GPUEXT_TOOLS_SPREAD_H

#define SPREAD_SLOTS 8

#endif
