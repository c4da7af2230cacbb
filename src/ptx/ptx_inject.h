/* SPDX-License-Identifier: MIT */
/*
 * ptx_inject.h - instrument a kernel of an application's PTX module.
 *
 * ptx_parse() reads a whole PTX module (what nvcc, NVRTC, Triton, Numba and
 * CuPy emit) into a tree of directives, functions and statements.
 * ptx_inject() writes the module back as text with calls to probe functions
 * inserted into one kernel:
 *   entry  `call SYM;` before the kernel's first statement
 *   exit   `call SYM;` before every `ret` and `exit` of the kernel
 *   mem    `call SYM, (addr, size, kind);` before every global load, store,
 *          atomic and reduction (ld/st/atom/red in .global, and generic
 *          ones, whose probe checks isspacep.global), with the address
 *          computed into a fresh register; or the probe's code pasted
 *          after runs of them (mem_code, below)
 * and with `extra` (the translated programs, the device runtime and the probe
 * functions of ptx_wrap.h, without .version/.target) appended after the
 * module's own directives.  Every register or name it adds uses a prefix
 * that occurs nowhere in the module, so nothing can clash.  The module's
 * .version is raised to at least min_version when the extra code needs it.
 * Every other statement is written back unchanged in meaning.
 */
#ifndef GPUEXT_PTX_INJECT_H
#define GPUEXT_PTX_INJECT_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/err.h"

struct ptx_module;

/* Parse PTX text (need not be NUL-terminated).  Errors name the line. */
int ptx_parse(const char *text, size_t len, struct ptx_module **out, struct err *e);
void ptx_module_free(struct ptx_module *m);

/* The module's .target ("sm_75") and .version (major, minor). */
const char *ptx_module_target(const struct ptx_module *m);
void ptx_module_version(const struct ptx_module *m, unsigned *major, unsigned *minor);

/* Kernels (.entry) of the module, in order: mangled names. */
size_t ptx_module_kernel_count(const struct ptx_module *m);
const char *ptx_module_kernel_name(const struct ptx_module *m, size_t i);

/*
 * 0 if the module defines no variable (__device__, __constant__: a
 * module-scope .global or .const that is not .extern); else -ENOTSUP naming
 * the first.  An instrumented kernel loaded as a module of its own would get
 * a second copy of such a variable, which neither the original module's
 * kernels nor the host (cudaMemcpyToSymbol) see: until the agent maps them
 * onto the original's, it runs such kernels unchanged.
 */
int ptx_module_check_no_variables(const struct ptx_module *m, struct err *e);

/* Write the module back (ptx_print(parse(x)) is accepted by ptxas like x). */
int ptx_print(const struct ptx_module *m, char **out, size_t *out_len, struct err *e);

/* Bytes of the block probes' record (struct gpuext_block_ctx) in shared memory. */
#define PTX_BLOCK_RECORD_BYTES 48

/*
 * How a block program's code (block_entry_code, block_exit_code) reads its
 * record: the record's 8-byte word N (start_ns, end_ns, block, sm |
 * threads << 32, warps | reserved << 32, exit_threads | exit_warps << 32)
 * from the register PTX_BLOCK_CTX_WORD "N", and the record's generic
 * address from PTX_BLOCK_CTX_REG.  The injector declares both around the
 * code and computes only what the code names: a word register where the
 * code names it, the record in shared memory where the code names
 * PTX_BLOCK_CTX_REG (a program that passes or stores its ctx pointer).
 * In the registers, `reserved` reads 0.
 */
#define PTX_BLOCK_CTX_REG "%gxb_ctx"
#define PTX_BLOCK_CTX_WORD "%gxb_c"
#define PTX_BLOCK_CTX_WORDS (PTX_BLOCK_RECORD_BYTES / 8)
/* The registers an inline mem probe (mem_code) reads the access from: its
 * address (global) and size | kind << 32 (enum ptx_mem_kind); and (.b32)
 * the lanes of the warp that made the access, the election's active mask. */
#define PTX_MEM_ADDR_REG "%gxm_addr"
#define PTX_MEM_SK_REG "%gxm_sk"
#define PTX_MEM_MASK_REG "%gxm_mask"
/* The SM's id (.b32), read once at the kernel's entry where mem_code names
 * it (ptx_emit_opts.inline_smid): a special-register read and its latency
 * once per thread, not at every access's probe.  A warp counts in the
 * copy of the SM it started on (as a program that reads %smid once,
 * ptx_emit.c). */
#define PTX_SMID_NAME "gxs_smid"
#define PTX_SMID_REG "%" PTX_SMID_NAME

/*
 * The election of a warp's runner, for the probe code pasted into
 * kernels: the active mask into the .b32 register mask, and every other
 * lane branches to label (tmp .b32 and pred .pred are scratch).  With
 * sync (the device is sm_90 or newer: PTX_ELECT_SYNC_SM), `elect.sync`
 * over the mask elects the runner (one instruction, where the lane-mask
 * test is a special-register read, an and, a compare); else the lowest
 * active lane by `%lanemask_lt`.  ptx_inject_wait: where those lanes wait
 * for the runner, after label: a shfl.sync over the mask (value unused),
 * which makes them wait as bar.warp.sync does without ordering memory
 * (docs/ptx-inject.md).
 */
struct ptx_buf;
void ptx_inject_elect(struct ptx_buf *b, const char *mask, const char *tmp, const char *pred,
		      const char *label, int sync);
/* The least target elect.sync needs, and the least .version (8.0). */
#define PTX_ELECT_SYNC_SM 90
#define PTX_ELECT_SYNC_OUT_OF_LOOPS 1
#define PTX_ELECT_SYNC_ALL 2
#define PTX_ELECT_SYNC_VERSION_MAJOR 8
#define PTX_ELECT_SYNC_VERSION_MINOR 0
void ptx_inject_wait(struct ptx_buf *b, const char *mask, const char *tmp);
/*
 * Does code branch only forward: no call, return, exit or indirect branch,
 * and every `bra` to a label later in its scope or one around it (no
 * loop)?  <0 when it does not lex.  Such a program cannot hold its runner
 * while the other lanes of its warp run ahead: ptxas predicates the region
 * or reconverges its lanes at the region's end (a convergence barrier that
 * every lane of the election's branch passes), so the lanes need no wait.
 */
int ptx_inject_forward_only(const char *code, struct err *e);

/*
 * The register holding the launch's id (bpf_gpu_launch_id) in the kernel,
 * for inline probes (ptx_emit_opts.launch_id): the injector declares it at
 * the kernel's top, from the parameter it appends (ptx_inject_opts), else 0.
 */
#define PTX_LAUNCH_ID_NAME "gxl_id"
#define PTX_LAUNCH_ID_REG "%" PTX_LAUNCH_ID_NAME

/*
 * The register holding the block's linear index (bpf_gpu_block_index) in
 * the kernel, for inline entry, exit and block probes
 * (ptx_emit_opts.block_index): where their code names it, the injector
 * computes it once per thread (ptx_block.c), past the kernel's first
 * global loads where only code after them reads it, else at the entry: a
 * warp's exit then reads no special register on its way out.
 */
#define PTX_BLOCK_INDEX_NAME "gxk_block"
#define PTX_BLOCK_INDEX_REG "%" PTX_BLOCK_INDEX_NAME

/* The name of a kernel's twin for flat launches is the kernel's and this
 * (ptx_inject_opts.flat_twin). */
#define PTX_FLAT_SUFFIX "__gx_flat"
/* The most statements a kernel with a flat twin has: element-wise kernels
 * (the examples' vecadd has 40), not gemm (150) or reduce (193), whose
 * blocks are long enough that the twin gains nothing (1.00 under
 * kernelretsnoop either way) and whose compiles ahead of the first launch
 * it would double (reduce's under smload, 135 ms of JIT on the H200, then
 * kept its first launch waiting 34 ms). */
#define PTX_FLAT_MAX_STMTS 128

/* What ptx_inject did about the launch id parameter. */
struct ptx_launch_param {
	size_t params; /* the kernel's own parameters (kernelParams entries) */
	size_t offset; /* of the appended .u64 in the parameter buffer (`extra`) */
	int added;     /* 0: not appended (why says why); PTX_LAUNCH_ID_REG is 0 */
	const char *why;
};

/* Probe kinds of ptx_mem_probe's `kind` argument. */
enum ptx_mem_kind { PTX_MEM_LOAD = 0, PTX_MEM_STORE = 1, PTX_MEM_ATOMIC = 2 };

struct ptx_block_array {
	const char *sym; /* ptx_block_array_sym() */
	uint32_t bytes;
};

struct ptx_inject_opts {
	const char *kernel;     /* mangled name of the .entry to instrument */
	const char *entry_sym;  /* probe .func names from ptx_emit_probe(); NULL: none */
	const char *exit_sym;
	const char *mem_sym;
	/*
	 * Inline mem probes (ptx_emit_mem_probe's site block): with mem_code,
	 * the kernel's global and generic accesses get mem_code pasted after
	 * them, instead of a call of mem_sym before them: one region after
	 * each run of consecutive unguarded .global accesses of a straight
	 * line of code (up to 8; a guarded or generic access is a run of its
	 * own, run only by the lanes that accessed global memory), which
	 * elects the warp's lowest active lane (PTX_MEM_MASK_REG = the active
	 * mask) and runs mem_code in it once per access, in order, with the
	 * access in PTX_MEM_ADDR_REG and PTX_MEM_SK_REG, then (unless mem_code
	 * branches only forward) makes the lanes wait for it.  A copy of
	 * mem_code an access while mem_code's length times the accesses is at
	 * most mem_inline_max (bytes of PTX pasted; 0: never, SIZE_MAX:
	 * always), else one copy a region, a loop over its accesses, while
	 * that fits, else the call.  mem_func (the text defining mem_sym) is
	 * appended to extra only when the call form is used.  Without
	 * mem_sym, always inline.
	 */
	const char *mem_code;
	const char *mem_func;
	size_t mem_inline_max;
	int mem_run_loop; /* a copy a region even where a copy an access fits */
	/*
	 * A run of several accesses probed by as many of the warp's lanes at
	 * once (the lane of rank j among the active ones takes access j, with
	 * its own copy of the address): one copy of mem_code a region, one
	 * pass of its instructions instead of one an access; where mem_code
	 * branches only forward and writes only its own thread's memory
	 * besides atomics (so lanes running it at once lose no update), else
	 * ignored.  A program sees the same warp mask and lane count.
	 */
	int mem_simt;
	/*
	 * In that form, in regions of at least mem_agg accesses, each of
	 * mem_code's `red.global` issued once per address and value by the
	 * lanes that share them (ptx_agg.h: reduce's unrolled loop, 16 lanes
	 * into one word, 16 reductions -> 1); on sm_70 or newer (match.sync).
	 * 0: every lane its own everywhere.
	 */
	unsigned mem_agg;
	/*
	 * Unroll counted loops (ptx_unroll.h) whose probed accesses would
	 * otherwise keep ptxas from unrolling them: mem_unroll turns (2, 4 or 8)
	 * back to back with one region after them, the loop as written left
	 * for the turns that remain; only where a region has one copy of
	 * mem_code (mem_simt or mem_run_loop).  0: none.
	 */
	unsigned mem_unroll;
	/* the unrolled turns in their order, the region after them, where
	 * they could go loads first (ptx_unroll.h: to compare the two) */
	int mem_unroll_in_order;
	/* set to the bytes of the kernel's own code the unrolled turns add
	 * (their copies of the loops' bodies, not their probes; may be NULL) */
	size_t *mem_unrolled_bytes;
	/* set to the bytes the combined reductions (mem_agg) add over
	 * mem_code's copies as they are (may be NULL) */
	size_t *mem_agg_bytes;
	/* the wait after a region: 0 unless mem_code branches only forward
	 * (no loop, call or return), 1 always, -1 never (to compare them) */
	int mem_wait;
	/*
	 * The device runs sm_90 or newer (not 0): the mem regions elect their
	 * runner with elect.sync (ptx_inject_elect), those inside a loop
	 * too with PTX_ELECT_SYNC_ALL, not with PTX_ELECT_SYNC_OUT_OF_LOOPS
	 * (ptx_inject.c: ptxas does not unroll a loop around elect.sync), and
	 * the module's .target is raised to sm_90 (.version to 8.0) where it
	 * is lower, for that and for code in extra/entry_code/exit_code/
	 * mem_func made with ptx_emit_opts.elect_sync.  PTX for an older
	 * target is valid for a newer one, and the driver compiles the module
	 * for its device.
	 */
	int elect_sync;
	/*
	 * A twin of the kernel for flat launches (1-D grid, 1-D blocks), named
	 * kernel PTX_FLAT_SUFFIX, after it in the module: its block code takes
	 * the block index to be %ctaid.x and thread (0,0,0) to be the one
	 * whose %tid.x is 0, with no other special register read on every
	 * thread's way (the per-thread %ctaid.y/z and %tid.y/z reads and their
	 * arithmetic cost kernelretsnoop 0.9% of vecadd's 1-us blocks on an
	 * H200).  Made where the kernel has block code and no mem probes and
	 * the module has no name with the suffix, and where the twin is worth
	 * compiling the kernel twice: no block_exit code that calls a function
	 * (blockretsnoop's ring buffer output: doubled, it kept reduce's first
	 * launch waiting 117 ms for the compile) and at most
	 * PTX_FLAT_MAX_STMTS statements (a long kernel's blocks are long: the
	 * reads are noise there).  *flat_made (may be NULL) says whether it
	 * was.  Its launches must be flat: the launcher picks.
	 */
	int flat_twin;
	int *flat_made;
	int *mem_inlined; /* set to 1 when mem_code was pasted, else 0 (may be NULL) */
	size_t *mem_sites; /* set to the kernel's probed accesses (may be NULL) */
	size_t *mem_regions; /* set to the regions mem_code was pasted in (may be NULL) */
	/*
	 * Inline probes (ptx_emit_probe_inline), instead of entry_sym/exit_sym:
	 * entry_code is pasted where `call entry_sym` would go; with exit_code,
	 * every `ret`/`exit` becomes a branch (same guard) to one exit block at
	 * the end of the kernel: exit_code, then `ret`.  One copy of the exit
	 * probe however many returns the kernel has.
	 */
	const char *entry_code;
	const char *exit_code;
	/*
	 * Block probes (ptx_emit_probe_inline with PTX_PROBE_BLOCK_*): run by
	 * thread (0,0,0), with their struct gpuext_block_ctx in registers or
	 * in a .shared variable of the kernel's own (PTX_BLOCK_CTX_WORD,
	 * above).  block_entry_code runs at its entry, before entry_code,
	 * with no barrier.  block_exit_code runs at the exit block (exit_code's,
	 * made when only block probes are given) once every thread of the
	 * block has reached it: where every thread can only leave through that
	 * block and none waits for another (no barrier or warp-synchronous
	 * instruction in the kernel or its functions, no `exit` in a function,
	 * no call out of the module, target sm_70 or later), the other warps
	 * arrive at a named barrier that warp 0 waits on; otherwise each warp
	 * adds its lanes to a counter in the record with one shared atomic
	 * (zeroed before an entry `bar.sync 0` that every thread passes before
	 * the kernel's first instruction) and the warp completing the count
	 * runs it.
	 */
	const char *block_entry_code;
	const char *block_exit_code;
	/* Count the exits with the shared atomic even where the barrier would
	 * do (to compare the two in one build). */
	int block_exit_counted;
	/*
	 * Block-local arrays (MAP_TYPE_GPU_BLOCK_ARRAY) the programs name:
	 * each a module-scope `.shared .align 8 .b8 SYM[bytes]` declared
	 * before the extra code and zeroed by the block's threads (each an
	 * 8-byte word in turn) before an entry barrier, so every probe of the
	 * block sees it zeroed; with a block_exit program, the exit block fences
	 * (fence.acq_rel.cta) so that the program sees every warp's updates.
	 * bytes: a multiple of 8.
	 */
	const struct ptx_block_array *block_arrays;
	size_t n_block_arrays;
	const char *extra;      /* PTX appended to the module (no header) */
	unsigned min_version_major, min_version_minor;
	/* Leave out the module's other kernels (those no statement refers to
	 * by name), so that the driver JIT-compiles only what runs, and the
	 * variables no kept statement refers to. */
	int only_kernel;
	/* Fail (ENOTSUP, as ptx_module_check_no_variables) when the module
	 * as written still defines a variable (after only_kernel's dropping). */
	int no_variables;
	/*
	 * Non-NULL: append `.param .u64` to the kernel's parameter list, the
	 * launch's id (the launcher passes it after the kernel's own), and
	 * declare PTX_LAUNCH_ID_REG from it; what was done goes here.  When the
	 * parameter does not fit (4 KiB of parameters, 32764 bytes from PTX
	 * 8.1 on sm_70+) or the list is not understood, the kernel keeps its
	 * list and the register is 0.
	 */
	struct ptx_launch_param *launch_param;
};

/*
 * The instrumented module as malloc'd NUL-terminated text.  Fails (and the
 * caller runs the kernel uninstrumented) when the kernel is not in the
 * module or the module uses something the injector does not understand.
 */
int ptx_inject(const struct ptx_module *m, const struct ptx_inject_opts *o,
	       char **out, size_t *out_len, struct err *e);

#endif /* GPUEXT_PTX_INJECT_H */
