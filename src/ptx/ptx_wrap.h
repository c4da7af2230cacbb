/* SPDX-License-Identifier: MIT */
/*
 * ptx_wrap.h - how translated programs are entered on the GPU.
 *
 * A probe is a PTX .func that every thread of a warp calls at the probe
 * point (kernel entry, each exit, each global memory access), or the same
 * code pasted there (ptx_emit_probe_inline, ptx_emit_mem_probe).  In warp mode
 * only the lowest active lane runs the program, with the warp's active mask
 * in the warp word, so helpers report the mask and the lane count and the
 * program aggregates per-thread quantities (a counter adds the lane count)
 * instead of running 32 times.  In thread mode every thread runs it, for
 * the tools that need per-thread values; the lane count is then 1.
 *
 *   entry, exit:  .func SYM_probe()
 *   mem:          .func SYM_probe(.param .b64 addr, .param .b32 size,
 *                                 .param .b32 kind)
 *                 the program gets r1 = struct gpuext_mem_ctx (bpf/gpuext.h);
 *                 lanes whose address is not global memory skip the probe
 *
 * Block probes (gpu/block_entry, gpu/block_exit) run once per block, by the
 * thread the injector's block code elects (ptx_inject.h), with r1 = the
 * block's struct gpuext_block_ctx in shared memory:
 *   block:        .func SYM_probe(.param .b64 ctx)   (no election inside)
 *
 * The standalone kernel runs a raw program once (one thread) on memory:
 *   .entry SYM_run(.param .u64 mem, .param .u64 len, .param .u64 r0_out)
 */
#ifndef GPUEXT_PTX_WRAP_H
#define GPUEXT_PTX_WRAP_H

#include "bpf/err.h"
#include "bpf/prog.h"
#include "ptx_buf.h"
#include "ptx_emit.h"

enum ptx_probe_kind {
	PTX_PROBE_ENTRY,
	PTX_PROBE_EXIT,
	PTX_PROBE_MEM,
	PTX_PROBE_BLOCK_ENTRY,
	PTX_PROBE_BLOCK_EXIT,
};

/* The probe kind of a GPU program type (gpu/entry... gpu/block_exit). */
enum ptx_probe_kind ptx_probe_kind_of(enum prog_type t);
enum ptx_mode { PTX_MODE_WARP, PTX_MODE_THREAD };

/* The probe function of program SYM (already emitted by ptx_emit_prog). */
void ptx_emit_probe(struct ptx_buf *b, const char *sym, enum ptx_probe_kind kind,
		    enum ptx_mode mode);

/*
 * An entry or exit probe with program p inline, for ptx_inject_opts's
 * entry_code/exit_code: appends to site one self-contained PTX block (the
 * election of the warp's lowest active lane, then p's body with r1 = 0),
 * and p's bpf-to-bpf callees, if any, to b as .funcs (b must precede the
 * kernel).  Warp mode only.  No call, no parameter passing: what an
 * empty probe costs is an activemask, a compare and a branch per warp.
 * A block probe (kind PTX_PROBE_BLOCK_*), for block_entry_code /
 * block_exit_code, has no election (the injector's block code runs it in
 * one thread) and r1 = PTX_BLOCK_CTX_REG (ptx_inject.h).
 */
int ptx_emit_probe_inline(struct ptx_buf *b, struct ptx_buf *site, const struct prog *p,
			  const struct ptx_emit_opts *o, enum ptx_probe_kind kind, struct err *e);

/*
 * A mem probe of program p in both forms, from one translation (p's
 * bpf-to-bpf callees, if any, to b as .funcs; b must precede the kernel):
 * - called: `.func SYM_probe(.param .b64 addr, .param .b32 size, .param
 *   .b32 kind)` (the mem signature above: global accesses only, once per
 *   warp, r1 = struct gpuext_mem_ctx) appended to func (which may be b),
 *   for one call per access (ptx_inject_opts.mem_sym);
 * - inline (site not NULL): one PTX block appended to site, to be pasted
 *   after accesses (ptx_inject_opts.mem_code), in the region whose runner
 *   runs it once per access, reading the access from the registers
 *   PTX_MEM_ADDR_REG (a global address: the injector tests generic ones)
 *   and PTX_MEM_SK_REG (size | kind << 32, from immediates) and the
 *   warp's lanes from PTX_MEM_MASK_REG, declared around it: p's body,
 *   no election (the region's), no call.
 * *local (when not NULL) is set to 1 when the block declares local memory
 * (a frame ptx_stack.h could not keep in registers, or the ctx in memory):
 * ptxas gives every pasted copy a frame of its own, so such a program is
 * better called.  SYM (ptx_emit_prog's: o->symbol, else "gx_" + the
 * program's name) goes to sym (at least 128 bytes).
 */
int ptx_emit_mem_probe(struct ptx_buf *b, struct ptx_buf *func, struct ptx_buf *site,
		       const struct prog *p, const struct ptx_emit_opts *o, char *sym, int *local,
		       struct err *e);

/* The standalone kernel SYM_run of program SYM. */
void ptx_emit_run_kernel(struct ptx_buf *b, const char *sym);

#endif /* GPUEXT_PTX_WRAP_H */
