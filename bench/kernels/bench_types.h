/* SPDX-License-Identifier: MIT */
/*
 * bench_types.h - fixed-width types for the benchmark kernels.
 *
 * Each kernel in bench/kernels/ is compiled twice from the same source: by
 * clang -target bpf into bench/progs/NAME.bpf.o (the bytecode every engine
 * runs) and by clang -O2 for x86-64 into the native column.  Neither
 * <stdint.h> nor <linux/types.h> is needed: the compiler's predefined types
 * are the same in both targets.
 */
#ifndef GPUEXT_BENCH_TYPES_H
#define GPUEXT_BENCH_TYPES_H

typedef __UINT8_TYPE__ bench_u8;
typedef __UINT32_TYPE__ bench_u32;
typedef __UINT64_TYPE__ bench_u64;

/*
 * Every kernel has the signature of a raw gpuext program (and of uBPF's
 * ubpf_jit_fn): r1 = memory, r2 = its length in bytes, r0 = the result.
 */
#define BENCH_KERNEL static inline __attribute__((always_inline)) bench_u64

#endif
