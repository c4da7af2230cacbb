/* SPDX-License-Identifier: MIT */
/*
 * ptx_intrin.c - the GPU helpers that are one special register (or a few
 * instructions on the warp word), written inline by the translator instead
 * of calling their device-runtime functions (ptx_rt_dev.cu), whose
 * results they reproduce.  A call is parameter passing, a call and a
 * return around one `mov` of %smid; every device tool calls several of
 * these on every probe.
 */
#include "ptx_helpers.h"

#include <errno.h>
#include <stdio.h>

/* r0 = the special register named by r1 (0 x, 1 y, 2 z; 0 for others), as
 * the runtime's dim helpers select it. */
static void ptx_intrin_dim(struct ptx_buf *b, const char *sreg)
{
	ptx_buf_printf(b, "\tmov.u32 %%h0, %%%s.x;\n\tmov.u32 %%h1, %%%s.y;\n"
			  "\tmov.u32 %%h2, %%%s.z;\n"
			  "\tsetp.eq.u64 %%p0, %%r1, 1;\n\tselp.b32 %%h0, %%h1, %%h0, %%p0;\n"
			  "\tsetp.eq.u64 %%p0, %%r1, 2;\n\tselp.b32 %%h0, %%h2, %%h0, %%p0;\n"
			  "\tsetp.gt.u64 %%p0, %%r1, 2;\n\tselp.b32 %%h0, 0, %%h0, %%p0;\n"
			  "\tcvt.u64.u32 %%r0, %%h0;\n", sreg, sreg, sreg);
}

void ptx_intrin_block_index(struct ptx_buf *b, const char *dst, const char *a, const char *bb,
			    const char *u)
{
	ptx_buf_printf(b, "\tmov.u32 %s, %%ctaid.z;\n\tmov.u32 %s, %%nctaid.y;\n"
			  "\tmul.wide.u32 %s, %s, %s;\n"
			  "\tmov.u32 %s, %%ctaid.y;\n\tcvt.u64.u32 %s, %s;\n\tadd.s64 %s, %s, %s;\n"
			  "\tmov.u32 %s, %%nctaid.x;\n\tcvt.u64.u32 %s, %s;\n\tmul.lo.u64 %s, %s, %s;\n"
			  "\tmov.u32 %s, %%ctaid.x;\n\tcvt.u64.u32 %s, %s;\n\tadd.s64 %s, %s, %s;\n",
		       a, bb, dst, a, bb, a, u, a, dst, dst, u, a, u, a, dst, dst, u, a, u, a, dst,
		       dst, u);
}

int ptx_intrin_emit(struct ptx_buf *b, uint32_t id, const char *launch_id,
		    const char *block_index)
{
	switch (id) {
	case HELPER_GPU_ACTIVE_MASK:
		ptx_buf_printf(b, "\tand.b64 %%r0, %%warp, 0xffffffff;\n");
		break;
	case HELPER_GPU_LANE_COUNT: /* 1 in per-thread mode, else the mask's lanes */
		ptx_buf_printf(b, "\tcvt.u32.u64 %%h0, %%warp;\n\tpopc.b32 %%h0, %%h0;\n"
				  "\tshr.u64 %%t0, %%warp, 32;\n\tand.b64 %%t0, %%t0, 1;\n"
				  "\tsetp.ne.u64 %%p0, %%t0, 0;\n\tselp.b32 %%h0, 1, %%h0, %%p0;\n"
				  "\tcvt.u64.u32 %%r0, %%h0;\n");
		break;
	case HELPER_GPU_LANE_ID:
		ptx_buf_printf(b, "\tmov.u32 %%h0, %%laneid;\n\tcvt.u64.u32 %%r0, %%h0;\n");
		break;
	case HELPER_GPU_WARP_ID: /* (x + ntid.x * (y + ntid.y * z)) / 32 */
		ptx_buf_printf(b, "\tmov.u32 %%h0, %%tid.z;\n\tmov.u32 %%h1, %%ntid.y;\n"
				  "\tmov.u32 %%h2, %%tid.y;\n\tmad.lo.u32 %%h0, %%h1, %%h0, %%h2;\n"
				  "\tmov.u32 %%h1, %%ntid.x;\n\tmov.u32 %%h2, %%tid.x;\n"
				  "\tmad.lo.u32 %%h0, %%h1, %%h0, %%h2;\n\tshr.u32 %%h0, %%h0, 5;\n"
				  "\tcvt.u64.u32 %%r0, %%h0;\n");
		break;
	case HELPER_GPU_SM_ID:
		ptx_buf_printf(b, "\tmov.u32 %%h0, %%smid;\n\tcvt.u64.u32 %%r0, %%h0;\n");
		break;
	case HELPER_GPU_BLOCK_IDX:
		ptx_intrin_dim(b, "ctaid");
		break;
	case HELPER_GPU_THREAD_IDX:
		ptx_intrin_dim(b, "tid");
		break;
	case HELPER_GPU_GRID_DIM:
		ptx_intrin_dim(b, "nctaid");
		break;
	case HELPER_GPU_BLOCK_DIM:
		ptx_intrin_dim(b, "ntid");
		break;
	case HELPER_GPU_GLOBALTIMER:
		ptx_buf_printf(b, "\tmov.u64 %%r0, %%globaltimer;\n");
		break;
	case HELPER_GPU_CLOCK:
		ptx_buf_printf(b, "\tmov.u64 %%r0, %%clock64;\n");
		break;
	case HELPER_GPU_PER_THREAD:
		ptx_buf_printf(b, "\tshr.u64 %%r0, %%warp, 32;\n\tand.b64 %%r0, %%r0, 1;\n");
		break;
	case HELPER_GPU_LAUNCH_ID: /* the kernel's added parameter, read at its top */
		if (!launch_id)
			return -ENOTSUP;
		ptx_buf_printf(b, "\tmov.b64 %%r0, %s;\n", launch_id);
		break;
	case HELPER_GPU_BLOCK_INDEX: /* the injector's register, else special registers */
		if (block_index)
			ptx_buf_printf(b, "\tmov.b64 %%r0, %s;\n", block_index);
		else
			ptx_intrin_block_index(b, "%r0", "%h0", "%h1", "%t0");
		break;
	default:
		return 0;
	}
	return 1;
}
