/* SPDX-License-Identifier: MIT */
/*
 * ptx_emit.h - eBPF bytecode -> PTX text, without LLVM.
 *
 * A program becomes one PTX .func per eBPF function (the entry and every
 * bpf-to-bpf callee), named SYM_f0, SYM_f1, ...  Each takes the eBPF
 * argument registers r1..r5 and the warp word, and returns r0:
 *
 *   .func (.param .b64 rv) SYM_fN (.param .b64 a1, ..., a5, .param .b64 warp)
 *
 * eBPF registers are 64-bit PTX registers %r0..%r10; r10 points to the top
 * of a .local array of the function (one eBPF frame), as a generic address,
 * so every load and store is a generic ld/st -- unless the frame is only
 * ever accessed at constant offsets from r10, when its 8-byte slots are
 * registers %fp0..%fp63 and there is no .local frame (ptx_stack.h;
 * GPUEXT_PTX_STACK_FRAME=1 in the environment keeps the memory frame, to
 * compare the two in one build).  The frame is as deep as the
 * verifier found the program uses (prog->stack_depth; none for a program
 * that never touches its stack), 512 bytes for an unverified program.  Callee-saved r6..r9
 * need no code: each .func has its own registers.
 *
 * The warp word says for whom the program runs: bits 0..31 the warp's
 * active mask at the probe point, bit 32 (PTX_WARP_PER_THREAD) set when
 * every thread runs the program for itself.  The GPU helpers that report
 * the mask and the lane count read it.
 *
 * Helpers are calls into the device runtime (ptx_rt_dev.cu, see
 * ptx_helpers.h); the module must contain the runtime's text once
 * (ptx_emit_runtime) before the programs.  The exception: lookups in arrays
 * whose geometry the map references give are written inline (struct
 * ptx_map_ref).
 */
#ifndef GPUEXT_PTX_EMIT_H
#define GPUEXT_PTX_EMIT_H

#include <stdint.h>

#include "bpf/err.h"
#include "bpf/prog.h"
#include "ptx_buf.h"

#define PTX_WARP_PER_THREAD (1ull << 32)

/* A GPU architecture and the PTX ISA version used for it. */
struct ptx_target {
	unsigned sm;           /* 75, 80, 86, 89, 90, 100, 120 ... */
	char suffix;           /* 'a' or 'f' for sm_90a/sm_100f, else 0 */
	unsigned isa_major;    /* .version */
	unsigned isa_minor;
};

/* "sm_90", "sm_90a", "90": the target and the PTX version to write for it. */
int ptx_target_parse(const char *name, struct ptx_target *t, struct err *e);
/* The target a device of compute capability major.minor runs natively. */
void ptx_target_from_cc(int major, int minor, struct ptx_target *t);
/* "sm_90" into buf (at least 16 bytes). */
const char *ptx_target_name(const struct ptx_target *t, char *buf, size_t len);

/*
 * Device addresses a map reference resolves to (0 when only checking), and
 * the geometry of an array's data (struct ptx_devmap's fields, which never
 * change after creation).  With the geometry (value_stride != 0) a lookup in
 * an array or per-SM array named by a constant map reference is written
 * inline as address arithmetic on immediates: no load of the header, no
 * call (ptx_emit.c); without it every lookup calls the runtime.
 */
struct ptx_map_ref {
	uint64_t map;   /* the map's struct ptx_devmap */
	uint64_t value; /* array maps: address of value 0 (ISA_PSEUDO_MAP_VALUE) */
	uint32_t type;  /* enum map_type */
	uint32_t max_entries;
	uint32_t value_stride; /* 0: geometry unknown, lookups call the runtime */
	uint32_t nr_sms;       /* per-SM array: copies */
	uint64_t sm_stride;    /* per-SM array: bytes between copies */
	uint32_t value_size;   /* bytes an update copies; 0: updates call the runtime */
};

/*
 * A block-local array (MAP_TYPE_GPU_BLOCK_ARRAY, with its geometry in the
 * map reference) is the module-scope `.shared` array named by
 * ptx_block_array_sym(k) for the program's map k: the emitter addresses it
 * by that name, the injector declares and zeroes it (ptx_inject_opts
 * .block_arrays).  Lookups and updates are inline (generic addresses into
 * the block's shared memory); any other helper on it is refused.
 */
enum { PTX_BLOCK_ARRAY_SYM_LEN = 40 };
void ptx_block_array_sym(size_t k, char *out, size_t len);

struct ptx_emit_opts {
	/* Prefix of every PTX name of the program; [A-Za-z_][A-Za-z0-9_]*.
	 * NULL: "gx_" + the program's name. */
	const char *symbol;
	/* prog->map_cnt entries; NULL: every reference resolves to 0 (for
	 * checking the PTX without a device). */
	const struct ptx_map_ref *maps;
	/* NULL: the maps' addresses are immediates in the code.  Else the name
	 * of a module-scope `.const .u64 NAME[2 * number of maps]` holding each
	 * map's header and value-0 addresses (maps[k].map, maps[k].value at
	 * NAME[2k], NAME[2k+1]), which the code reads instead: PTX that does
	 * not depend on where the maps are (the agent's module cache keeps the
	 * compiled code across runs, where the maps land elsewhere). */
	const char *map_table;
	/* struct ptx_devmap of the ring buffer trace_printk writes to; 0: none
	 * (trace_printk then returns -ENOENT). */
	uint64_t trace_ring;
	/* Helper 5 returns r1: the rule of the conformance cases. */
	int conformance_helpers;
	/* Comment each instruction (index, fields, source line). */
	int comments;
	/*
	 * Inline mode: function 0 (the program's entry) is written into
	 * inline_out as a PTX block `{ ... }` to be pasted into a kernel, instead
	 * of as the .func SYM_f0 (callees stay .funcs in the main buffer).  The
	 * block reads r1 from the 64-bit register named inline_r1 and the warp
	 * word from inline_warp (both declared around it), sets r2..r5 to 0 and
	 * discards r0.  Everything the block declares shadows the kernel's names,
	 * so it needs no prefix.  Saves the call and its parameter passing.
	 */
	struct ptx_buf *inline_out;
	const char *inline_r1, *inline_warp;
	/*
	 * Inline probe with a ctx of inline_ctx_bytes (a multiple of 8): the
	 * ctx is also in 64-bit registers, its 8-byte word N in the register
	 * named inline_ctx "N" (a mem probe's struct gpuext_mem_ctx: "0" addr,
	 * "1" size | kind << 32; a block probe's struct gpuext_block_ctx: six
	 * words); loads of its fields at constant offsets read them.  When the
	 * program does anything else with its ctx pointer, the loads go to
	 * memory and *inline_ctx_mem is set to 1 (else 0): the block then needs
	 * the ctx in memory behind inline_r1.
	 */
	const char *inline_ctx;
	unsigned inline_ctx_bytes;
	int *inline_ctx_mem;
	/* Set (when not NULL) to 1 when the inline block declares a .local
	 * frame (the stack not in registers: ptx_stack.h), else 0. */
	int *inline_frame;
	/*
	 * Where bpf_gpu_launch_id() finds the launch's id: the operand (a
	 * 64-bit register the kernel declares) it reads in function 0 of an
	 * inline block, where a call in a bpf-to-bpf callee is refused naming
	 * the instruction (the kernel's register is not in its scope);
	 * PTX_LAUNCH_ID_UNREACHABLE: the code runs in a launch but cannot see
	 * the id (a mem probe, also called as a function), refused likewise;
	 * NULL: no launch at all (standalone runs, `gpuext ptx`): 0.
	 */
	const char *launch_id;
	/*
	 * Where bpf_gpu_block_index() finds the block's linear index in
	 * function 0 of an inline block: a .b64 register the kernel computes
	 * once per thread (the injector's PTX_BLOCK_INDEX_REG, past the
	 * kernel's first loads where it can); NULL, and everywhere else
	 * (callees, called mem probes): computed from special registers at the
	 * call.
	 */
	const char *block_index;
	/* Inline code: a .b32 register that holds %smid, read once where the
	 * code starts (a kernel's entry: the injector's PTX_SMID_REG), read
	 * for a per-SM array's copy instead of %smid at each probe. */
	const char *inline_smid;
	/* The probe code's election by elect.sync (ptx_wrap.h; the device is
	 * sm_90 or newer: ptx_inject_opts.elect_sync raises the module's
	 * target for it). */
	int elect_sync;
	/*
	 * An inline array lookup whose values' address is an immediate adds
	 * the element's offset to the low word alone, where no element is
	 * past a 4 GiB line (a wide multiply and two moves fewer: 0.6% of
	 * vecadd's 1-us blocks in kernelretsnoop's warp exit probe, H200).
	 * For the probes every warp runs; not for block programs, which run
	 * in one thread of the block on a branch that ptxas turns into
	 * predicated instructions for every warp when it is short enough:
	 * with it, kernelretsnoop's block_entry program was, 1.043 against
	 * 1.029 (bench/results/2026-11-22-h200-kernelretsnoop-s9.md).
	 */
	int elem_low_word;
};

#define PTX_LAUNCH_ID_UNREACHABLE "" /* ptx_emit_opts.launch_id */

/* .version/.target/.address_size of a module. */
void ptx_emit_header(struct ptx_buf *b, const struct ptx_target *t);
/* The device runtime (helpers, maps), once per module, after the header. */
void ptx_emit_runtime(struct ptx_buf *b);
/* Only the runtime functions that the texts code[0..n) (the module's
 * programs, probes; NULL entries skipped) name, with what those call. */
void ptx_emit_runtime_used(struct ptx_buf *b, const char *const *code, size_t n);
/* The same functions for a module linked with the prebuilt runtime
 * (ptx_rt_fatbin): the large ones as .extern declarations, the small ones
 * as text.  Returns how many are declared (0: nothing to link); -1 when the
 * runtime is not linkable so (what was written is then not to be used). */
int ptx_emit_runtime_decls(struct ptx_buf *b, const char *const *code, size_t n);
/* The runtime compiled at build time (nvcc -fatbin -rdc=true, SASS for
 * several GPUs): a CU_JIT_INPUT_FATBINARY for the JIT linker. */
const void *ptx_rt_fatbin(size_t *len);

/*
 * Append the functions of p.  Rejects what cannot run on the GPU (kfuncs,
 * helpers the device runtime lacks, jumps leaving a function) with
 * a message naming the instruction.  The symbol used is written to
 * sym_out (at least 128 bytes) when not NULL.
 */
int ptx_emit_prog(struct ptx_buf *b, const struct prog *p,
		  const struct ptx_emit_opts *o, char *sym_out, struct err *e);

/* "gx_" + name with every character PTX names cannot hold made '_'. */
void ptx_emit_symbol(const char *name, char *out, size_t len);

/* Does p call into the device runtime (so the module needs its text)? */
int ptx_emit_needs_runtime(const struct prog *p, const struct ptx_emit_opts *o);

#endif /* GPUEXT_PTX_EMIT_H */
