/* SPDX-License-Identifier: MIT */
/*
 * gpuext_maps.h - map types gpuext adds to Linux's (numbers from 256 up,
 * far above <linux/bpf.h>'s), for BTF-defined maps:
 *
 *   struct {
 *           __uint(type, BPF_MAP_TYPE_GPU_BLOCK_ARRAY);
 *           __uint(max_entries, 4);
 *           __type(key, __u32);
 *           __type(value, struct my_counts);
 *   } counts SEC(".maps");
 *
 * BPF_MAP_TYPE_GPU_BLOCK_ARRAY: an array in the shared memory of each block
 * of an instrumented kernel.  Every block has its own copy, zeroed when the
 * block starts (before any probe of the block runs) and gone when it ends;
 * the device programs of the kernel (gpu/mem, entry, exit, block_entry,
 * block_exit) look it up and update it like an array, and atomics on its
 * values stay in the SM (shared-memory atomics).  The usual pattern: count
 * per block here at every access, and add the block's totals to a global
 * map once, in gpu/block_exit.  Values up to 32 KiB in all; the host sees
 * none (docs/device-maps.md "Block-local array").
 */
#ifndef GPUEXT_BPF_GPUEXT_MAPS_H
#define GPUEXT_BPF_GPUEXT_MAPS_H

enum gpuext_bpf_map_type {
	BPF_MAP_TYPE_GPU_BLOCK_ARRAY = 256,
};

#endif
