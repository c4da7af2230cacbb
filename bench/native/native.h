/* SPDX-License-Identifier: MIT */
/*
 * native.h - the benchmark kernels compiled natively (clang -O2, x86-64),
 * one out-of-line function each so the harness calls them exactly like a
 * JIT-compiled program: through a pointer, with (mem, len).
 */
#ifndef GPUEXT_BENCH_NATIVE_H
#define GPUEXT_BENCH_NATIVE_H

#include <stddef.h>
#include <stdint.h>

typedef uint64_t (*native_fn)(uint8_t *mem, uint64_t len);

uint64_t native_loop_sum(uint8_t *mem, uint64_t len);
uint64_t native_fnv1a(uint8_t *mem, uint64_t len);
uint64_t native_memcpy_copy(uint8_t *mem, uint64_t len);
uint64_t native_switch_vm(uint8_t *mem, uint64_t len);
uint64_t native_xxh64_unrolled(uint8_t *mem, uint64_t len);

/* "clang VERSION -O2": the compiler the native column was built with. */
extern const char native_compiler[];

#endif
