/* SPDX-License-Identifier: MIT */
/* memtrace.h - maps of tools/memtrace.bpf.c. */
#ifndef GPUEXT_TOOLS_MEMTRACE_H
#define GPUEXT_TOOLS_MEMTRACE_H

#include <linux/types.h>

#include "spread.h"

/* Heat map granularity: accesses are counted per 2 MiB region. */
#define MT_REGION_SHIFT 21
/*
 * Region slots of memtrace's heat map, a power of two: region r is counted
 * in slot r % MT_MAX_REGIONS (so any 2 GiB of contiguous address space fits
 * without a collision), found from the address alone; slot MT_MAX_REGIONS
 * counts regions r with r + 1 >= 2^32 (addresses past 8 PiB, which no GPU
 * has), as untracked.
 */
#define MT_MAX_REGIONS 1024

/*
 * memtrace's counts (`region_lanes`, per SM; key = region slot), one line
 * of 16 words a slot (1025 slots x 132 SMs = 17.3 MB on an H200), updated
 * by two reductions to that line a whole-warp access of a power-of-two
 * size up to 16 bytes:
 *   w[0]  whose the slot is: the OR of t | ~t << 32 for the tag t = r + 1
 *         of every region counted there: one region gives low half = t,
 *         high half = ~t (32 bits); two regions set some bit in both
 *         halves (mt_region_tag, the host's reading);
 *   w[MT_WORD(kind, c)]  the lanes of accesses of 1 << c bytes of kind
 *         (GPUEXT_MEM_LOAD, _STORE, _ATOMIC), c < MT_CLASSES;
 *   w[MT_WORD_OTHER]  the lanes of accesses of other sizes (any kind): the
 *         word of 1-byte atomics, which PTX does not have.
 * A region's accesses are the sum of its slot's lane words; a kind's bytes
 * and accesses the sums over slots of its words (x 1 << c), exactly.
 */
#define MT_KINDS 3
#define MT_CLASSES 5
#define MT_SLOT_WORDS 16
#define MT_WORD(kind, c) (1 + (kind) * MT_CLASSES + (c))
#define MT_WORD_OTHER MT_WORD(2, 0)
struct mt_slot {
	__u64 w[MT_SLOT_WORDS];
};

/*
 * What a slot's lanes do not say (per SM; key = kind), rare: the lanes a
 * partial warp (fewer than 32 lanes) of the sizes above lacks, and bytes,
 * lanes and warp instructions of other sizes.  So a kind's warp
 * instructions = (its slots' lanes + missing) / 32 + other_instrs, each
 * warp instruction of the sizes above counting 32 lanes, its own and the
 * missing ones: one add for a partial warp.
 */
struct mt_odd {
	__u64 missing;
	__u64 other_bytes, other_lanes, other_instrs;
};

/* The two parts of memtrace's probe (tools/memtrace.bpf.c's MT_PARTS). */
#define MT_PART_COUNTS 1
#define MT_PART_BITS 2

/* The two halves of memtrace_block's probe (its MT_PARTS). */
#define MT_PART_TRAFFIC 1
#define MT_PART_HEAT 2

/* Access sizes counted by class: 1 << c bytes for c < MT_SIZE_CLASSES. */
#define MT_SIZE_CLASSES 6

/*
 * Value of `traffic` (per SM; key = kind x SPREAD_SLOTS + spread slot, kind
 * = GPUEXT_MEM_LOAD, _STORE or _ATOMIC), a 128-byte line of its own.  The
 * common access -- a whole warp (32 lanes) of a power-of-two size up to 32
 * bytes -- costs one add (full[class]); a partial warp adds its lanes to
 * part_lanes[class] and 1 to part_instrs; any other size adds to other_*.
 * So (mt_traffic_totals): accesses = 32 x full + part_lanes + other_lanes,
 * bytes = the same per class x the class's size + other_bytes, warp
 * instructions = full + part_instrs + other_instrs.
 */
struct mt_traffic {
	__u64 full[MT_SIZE_CLASSES];       /* warp instructions with 32 lanes */
	__u64 part_lanes[MT_SIZE_CLASSES]; /* lanes of the others */
	__u64 part_instrs;
	__u64 other_bytes, other_lanes, other_instrs;
};


/*
 * memtrace_block (tools/memtrace_block.bpf.c), the same counts gathered per
 * block.  Region slots of its global heat map, a power of two: region r is counted
 * in slot r % MTB_MAX_REGIONS (`region_accesses`, per SM), and the slot's
 * `region_bits` (per SM) OR in r + 1 and ~(r + 1), with fire-and-forget
 * reductions: the device never waits for the global map (a lookup there at
 * each block's first access of a region was an L2 round trip on the
 * block's path).  The host reads a slot's region from the bits: one region
 * gives ones = r + 1 and zeros = ~ones; regions that met in a slot (any 8
 * GiB of contiguous address space fits without one) set a bit in both, and
 * their accesses are reported as untracked.
 */
#define MTB_MAX_REGIONS 4096

struct mt_region_bits {
	__u64 ones, zeros; /* OR of r + 1, OR of ~(r + 1) */
};

/*
 * Block-local counts (BPF_MAP_TYPE_GPU_BLOCK_ARRAY, in each block's shared
 * memory), added to the maps above once per block by the gpu/block_exit
 * program.  Traffic of power-of-two sizes, per kind (key = kind): the same
 * counters as struct mt_traffic's, 32-bit (shared-memory atomics of 32 bits
 * are native; a block would need 2^32 warp instructions of one class to
 * wrap).  Other sizes go to the global counters directly (rare).
 */
struct mt_block_traffic {
	__u32 full[MT_SIZE_CLASSES];
	__u32 part_lanes[MT_SIZE_CLASSES];
	__u32 part_instrs;
	__u32 pad;
};

/*
 * The block's region cache (one value, key 0): MT_BLOCK_SLOTS regions with
 * their thread accesses, tag = region + 1 (0: free; 64 bits because clang's
 * default BPF target has no 32-bit compare-and-swap).  Region r is looked
 * for in slot (r ^ r >> MT_BLOCK_SLOT_BITS) % MT_BLOCK_SLOTS and the
 * MT_BLOCK_PROBES - 1 after it (a block's consecutive regions seldom meet
 * in a slot -- a tile of a 2048 x 2048 GEMM reads a column panel spanning
 * all 8 regions of B -- nor do arrays a multiple of MT_BLOCK_SLOTS regions
 * apart: vecadd's, 32; an access whose region is in its first slot costs a
 * shared load and add), claimed by a shared
 * compare-and-swap (the winner also sets the slot's bit in `claimed`, once
 * a region and block).  The block's end adds each claimed slot's count to the global
 * heat map with reductions only: the end of a block is on the path of the
 * next block on its SM, so what it does must be short.  A region that finds
 * no slot is counted in the global heat map at each access, as without the
 * cache.
 */
#define MT_BLOCK_SLOT_BITS 4
#define MT_BLOCK_SLOTS (1 << MT_BLOCK_SLOT_BITS)
#define MT_BLOCK_PROBES 4
struct mt_block_slot {
	__u64 tag;      /* region + 1; 0: free */
	__u32 accesses; /* thread accesses in this block */
	__u32 pad;
};
struct mt_block_regions {
	__u64 claimed; /* bit s: slot s holds a region */
	struct mt_block_slot slot[MT_BLOCK_SLOTS];
};

/* The block's counts, one value of one block-local array: the traffic per
 * kind (index kind & 3, the fourth unused: a kind's index is then proven
 * in range, no test), and the region cache. */
struct mt_block {
	struct mt_block_traffic traffic[4];
	struct mt_block_regions regions;
};

#endif
