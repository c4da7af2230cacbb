/* SPDX-License-Identifier: MIT */
#include "gpu_common.h"

#include <stdio.h>
#include <string.h>

#include "ptx/ptx_helpers.h"

#define R10 ISA_REG_FP

static void emit(struct gpu_prog_buf *b, struct isa_insn in)
{
	b->insns[b->n++] = in;
}

static void emit_map(struct gpu_prog_buf *b, unsigned reg, int idx)
{
	emit(b, INSN(ISA_OPC_LD_IMM64, reg, ISA_PSEUDO_MAP_FD, 0, idx));
	emit(b, INSN(0, 0, 0, 0, 0));
}

static void emit_call(struct gpu_prog_buf *b, int id)
{
	emit(b, INSN(ISA_OPC_JMP_CALL, 0, ISA_CALL_HELPER, 0, id));
}

/* r6 = blockIdx.x * warps per block + warp id in block */
static void emit_global_warp(struct gpu_prog_buf *b)
{
	emit(b, INSN(ISA_OPC_ALU64_MOV_K, 1, 0, 0, 0));
	emit_call(b, HELPER_GPU_BLOCK_IDX);
	emit(b, INSN(ISA_OPC_ALU64_MOV_X, 6, 0, 0, 0));
	emit(b, INSN(ISA_OPC_ALU64_MOV_K, 1, 0, 0, 0));
	emit_call(b, HELPER_GPU_BLOCK_DIM);
	emit(b, INSN(ISA_OPC_ALU64_ADD_K, 0, 0, 0, 31));
	emit(b, INSN(ISA_OPC_ALU64_RSH_K, 0, 0, 0, 5));
	emit(b, INSN(ISA_OPC_ALU64_MUL_X, 6, 0, 0, 0));
	emit_call(b, HELPER_GPU_WARP_ID);
	emit(b, INSN(ISA_OPC_ALU64_ADD_X, 6, 0, 0, 0));
}

void gpu_prog_build(enum gpu_prog_kind kind, unsigned hash_keys, struct gpu_prog_buf *b)
{
	size_t jmp;

	b->n = 0;
	switch (kind) {
	case GPU_PROG_EMPTY:
		break;
	case GPU_PROG_COUNTER:
		emit(b, INSN(ISA_OPC_ST_W, R10, 0, -4, 0));
		emit(b, INSN(ISA_OPC_ALU64_MOV_X, 2, R10, 0, 0));
		emit(b, INSN(ISA_OPC_ALU64_ADD_K, 2, 0, 0, -4));
		emit_map(b, 1, 0);
		emit_call(b, HELPER_MAP_LOOKUP_ELEM);
		emit(b, INSN(ISA_OPC_JMP_JEQ_K, 0, 0, 3, 0)); /* -> exit */
		emit(b, INSN(ISA_OPC_ALU64_MOV_X, 6, 0, 0, 0));
		emit_call(b, HELPER_GPU_LANE_COUNT);
		emit(b, INSN(ISA_OPC_ATOMIC_DW, 6, 0, 0, ISA_ATOMIC_ADD));
		break;
	case GPU_PROG_HASH:
		emit_global_warp(b);
		emit(b, INSN(ISA_OPC_ALU64_MOD_K, 6, 0, 0, (int32_t)hash_keys));
		emit(b, INSN(ISA_OPC_STX_DW, R10, 6, -8, 0));
		emit_map(b, 1, 0);
		emit(b, INSN(ISA_OPC_ALU64_MOV_X, 2, R10, 0, 0));
		emit(b, INSN(ISA_OPC_ALU64_ADD_K, 2, 0, 0, -8));
		emit_call(b, HELPER_MAP_LOOKUP_ELEM);
		jmp = b->n;
		emit(b, INSN(ISA_OPC_JMP_JNE_K, 0, 0, 0, 0)); /* -> add, patched */
		emit(b, INSN(ISA_OPC_ST_DW, R10, 0, -16, 0));
		emit_map(b, 1, 0);
		emit(b, INSN(ISA_OPC_ALU64_MOV_X, 2, R10, 0, 0));
		emit(b, INSN(ISA_OPC_ALU64_ADD_K, 2, 0, 0, -8));
		emit(b, INSN(ISA_OPC_ALU64_MOV_X, 3, R10, 0, 0));
		emit(b, INSN(ISA_OPC_ALU64_ADD_K, 3, 0, 0, -16));
		emit(b, INSN(ISA_OPC_ALU64_MOV_K, 4, 0, 0, 1)); /* BPF_NOEXIST */
		emit_call(b, HELPER_MAP_UPDATE_ELEM);
		emit_map(b, 1, 0);
		emit(b, INSN(ISA_OPC_ALU64_MOV_X, 2, R10, 0, 0));
		emit(b, INSN(ISA_OPC_ALU64_ADD_K, 2, 0, 0, -8));
		emit_call(b, HELPER_MAP_LOOKUP_ELEM);
		emit(b, INSN(ISA_OPC_JMP_JEQ_K, 0, 0, 3, 0)); /* -> exit */
		b->insns[jmp].off = (int16_t)(b->n - jmp - 1);
		emit(b, INSN(ISA_OPC_ALU64_MOV_X, 7, 0, 0, 0));
		emit_call(b, HELPER_GPU_LANE_COUNT);
		emit(b, INSN(ISA_OPC_ATOMIC_DW, 7, 0, 0, ISA_ATOMIC_ADD));
		break;
	case GPU_PROG_RINGBUF:
		emit_global_warp(b);
		emit_call(b, HELPER_GPU_LANE_COUNT);
		emit(b, INSN(ISA_OPC_STX_DW, R10, 6, -24, 0));
		emit(b, INSN(ISA_OPC_STX_DW, R10, 0, -16, 0));
		emit(b, INSN(ISA_OPC_LD_IMM64, 1, 0, 0, (int32_t)(uint32_t)GPU_RING_MAGIC));
		emit(b, INSN(0, 0, 0, 0, (int32_t)(uint32_t)(GPU_RING_MAGIC >> 32)));
		emit(b, INSN(ISA_OPC_ALU64_XOR_X, 1, 6, 0, 0));
		emit(b, INSN(ISA_OPC_STX_DW, R10, 1, -8, 0));
		emit_map(b, 1, 0);
		emit(b, INSN(ISA_OPC_ALU64_MOV_X, 2, R10, 0, 0));
		emit(b, INSN(ISA_OPC_ALU64_ADD_K, 2, 0, 0, -24));
		emit(b, INSN(ISA_OPC_ALU64_MOV_K, 3, 0, 0, 24));
		emit(b, INSN(ISA_OPC_ALU64_MOV_K, 4, 0, 0, 0));
		emit_call(b, HELPER_RINGBUF_OUTPUT);
		break;
	}
	emit(b, INSN(ISA_OPC_ALU64_MOV_K, 0, 0, 0, 0));
	emit(b, INSN(ISA_OPC_JMP_EXIT, 0, 0, 0, 0));
}

const char *gpu_prog_name(enum gpu_prog_kind kind)
{
	static const char *names[] = {"empty", "array counter", "hash update", "ringbuf record"};
	return names[kind];
}

int gpu_module(struct ptx_buf *b, const struct ptx_target *t, const struct prog *p,
	       const char *sym, const struct ptx_map_ref *refs, enum ptx_mode mode,
	       struct err *e)
{
	ptx_emit_header(b, t);
	ptx_emit_runtime(b);
	if (p) {
		struct ptx_emit_opts o = {.symbol = sym, .maps = refs, .comments = 1};
		int err = ptx_emit_prog(b, p, &o, NULL, e);
		if (err)
			return err;
		ptx_emit_probe(b, sym, PTX_PROBE_ENTRY, mode);
	} else {
		ptx_buf_printf(b, ".func %s_probe()\n{\n\tret;\n}\n\n", sym);
	}
	/* The "application": a loop around the probe, timed with clock64. */
	ptx_buf_printf(b,
		".visible .entry %s_app(.param .u32 iters, .param .u64 cycles_out)\n{\n"
		"\t.reg .b32 %%i, %%n, %%gtid, %%cta, %%nt;\n\t.reg .pred %%p;\n"
		"\t.reg .b64 %%c0, %%c1, %%acc, %%out;\n"
		"\tld.param.u32 %%n, [iters];\n\tmov.u32 %%i, 0;\n\tmov.u64 %%acc, 0;\n"
		"LOOP:\n\tsetp.ge.u32 %%p, %%i, %%n;\n\t@%%p bra END;\n"
		"\tmov.u64 %%c0, %%clock64;\n\tcall %s_probe;\n\tmov.u64 %%c1, %%clock64;\n"
		"\tsub.s64 %%c1, %%c1, %%c0;\n\tadd.s64 %%acc, %%acc, %%c1;\n"
		"\tadd.u32 %%i, %%i, 1;\n\tbra LOOP;\nEND:\n"
		"\tld.param.u64 %%out, [cycles_out];\n\tsetp.eq.u64 %%p, %%out, 0;\n"
		"\t@%%p bra DONE;\n"
		"\tmov.u32 %%gtid, %%tid.x;\n\tmov.u32 %%cta, %%ctaid.x;\n"
		"\tmov.u32 %%nt, %%ntid.x;\n\tmad.lo.u32 %%gtid, %%cta, %%nt, %%gtid;\n"
		"\tcvta.to.global.u64 %%out, %%out;\n\tmul.wide.u32 %%c0, %%gtid, 8;\n"
		"\tadd.s64 %%out, %%out, %%c0;\n\tst.global.u64 [%%out], %%acc;\n"
		"DONE:\n\tret;\n}\n\n", sym, sym);
	return b->failed ? err_set(e, 12, "out of memory") : 0;
}

int gpu_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0) {
		perror(path);
		if (f)
			fclose(f);
		return -1;
	}
	return fclose(f) ? -1 : 0;
}
