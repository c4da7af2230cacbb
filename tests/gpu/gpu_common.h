/* SPDX-License-Identifier: MIT */
/*
 * gpu_common.h - what the GPU batch programs share: a few eBPF programs
 * written as instructions, and PTX "application" kernels that call a probe
 * the way an instrumented kernel does.
 *
 * Every program takes --ptx-out FILE: it then writes the PTX it would load
 * and exits without touching the driver, so that the unit tests can check
 * it with ptxas on a machine without a GPU.
 */
#ifndef GPUEXT_TEST_GPU_COMMON_H
#define GPUEXT_TEST_GPU_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/isa.h"
#include "bpf/prog.h"
#include "ptx/ptx_buf.h"
#include "ptx/ptx_emit.h"
#include "ptx/ptx_wrap.h"

enum { GPU_EXIT_SKIP = 77 };

/* Instruction builders. */
#define INSN(c, d, s, o, i) ((struct isa_insn){(uint8_t)(c), (d), (s), (int16_t)(o), (int32_t)(i)})

struct gpu_prog_buf {
	struct isa_insn insns[128];
	size_t n;
};

/* The programs of the batch; map slot 0 is the map each one updates. */
enum gpu_prog_kind {
	GPU_PROG_EMPTY,   /* r0 = 0 */
	GPU_PROG_COUNTER, /* array[0] += lane count (atomic) */
	GPU_PROG_HASH,    /* hash[global warp id % keys] += lane count */
	GPU_PROG_RINGBUF, /* ringbuf_output({warp, lanes, warp ^ magic}) */
};
#define GPU_RING_MAGIC 0x5a5aa5a5c3c33c3cull
struct gpu_ring_rec {
	uint64_t warp, lanes, check;
};

void gpu_prog_build(enum gpu_prog_kind kind, unsigned hash_keys, struct gpu_prog_buf *out);
const char *gpu_prog_name(enum gpu_prog_kind kind);

/*
 * A module: header for target, runtime, program p as SYM with its probe in
 * mode, and an application kernel SYM_app(.param .u32 iters,
 * .param .u64 cycles_out) calling the probe iters times and, when
 * cycles_out is not 0, storing each thread's clock64 cycles spent in the
 * calls.  p NULL: the probe is an empty function (the baseline).
 */
int gpu_module(struct ptx_buf *b, const struct ptx_target *t, const struct prog *p,
	       const char *sym, const struct ptx_map_ref *refs, enum ptx_mode mode,
	       struct err *e);

/* Write text to path; 0 or -1 (message on stderr). */
int gpu_write_file(const char *path, const char *text);

#endif
