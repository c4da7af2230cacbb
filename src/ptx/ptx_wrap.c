/* SPDX-License-Identifier: MIT */
#include "ptx_wrap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_inject.h"

enum ptx_probe_kind ptx_probe_kind_of(enum prog_type t)
{
	switch (t) {
	case PROG_TYPE_GPU_MEM:
		return PTX_PROBE_MEM;
	case PROG_TYPE_GPU_EXIT:
		return PTX_PROBE_EXIT;
	case PROG_TYPE_GPU_BLOCK_ENTRY:
		return PTX_PROBE_BLOCK_ENTRY;
	case PROG_TYPE_GPU_BLOCK_EXIT:
		return PTX_PROBE_BLOCK_EXIT;
	default:
		return PTX_PROBE_ENTRY;
	}
}

static int ptx_probe_is_block(enum ptx_probe_kind kind)
{
	return kind == PTX_PROBE_BLOCK_ENTRY || kind == PTX_PROBE_BLOCK_EXIT;
}

static const char *const ptx_probe_names[] = {"entry", "exit", "mem", "block_entry",
					      "block_exit"};

/* Call SYM_f0 with r1 = %x1, r2..r5 = 0 and warp word %w; r0 into %x0. */
static void ptx_emit_call_prog(struct ptx_buf *b, const char *sym)
{
	ptx_buf_printf(b, "\t{\n\t.param .b64 q1;\n\tst.param.b64 [q1], %%x1;\n");
	for (unsigned a = 2; a <= 5; a++)
		ptx_buf_printf(b, "\t.param .b64 q%u;\n\tst.param.b64 [q%u], 0;\n", a, a);
	ptx_buf_printf(b, "\t.param .b64 qw;\n\tst.param.b64 [qw], %%w;\n"
			  "\t.param .b64 rq;\n"
			  "\tcall.uni (rq), %s_f0, (q1, q2, q3, q4, q5, qw);\n"
			  "\tld.param.b64 %%x0, [rq];\n\t}\n", sym);
}

void ptx_emit_probe(struct ptx_buf *b, const char *sym, enum ptx_probe_kind kind,
		    enum ptx_mode mode)
{
	const char *what = ptx_probe_names[kind];

	if (ptx_probe_is_block(kind)) {
		/* the caller (the kernel's block code) elects the thread */
		ptx_buf_printf(b, "// %s probe of %s, once per block (r1 = the block's record)\n"
				  ".func %s_probe(.param .b64 ctx)\n{\n"
				  "\t.reg .b32 %%m;\n\t.reg .b64 %%w, %%x0, %%x1;\n"
				  "\tactivemask.b32 %%m;\n\tcvt.u64.u32 %%w, %%m;\n"
				  "\tld.param.b64 %%x1, [ctx];\n", what, sym, sym);
		ptx_emit_call_prog(b, sym);
		ptx_buf_printf(b, "\tret;\n}\n\n");
		return;
	}
	ptx_buf_printf(b, "// %s probe of %s, %s\n", what, sym,
		       mode == PTX_MODE_WARP ? "once per warp (lowest active lane)"
					     : "every thread");
	if (kind == PTX_PROBE_MEM)
		ptx_buf_printf(b, ".func %s_probe(.param .b64 addr, .param .b32 size, "
				  ".param .b32 kind)\n", sym);
	else
		ptx_buf_printf(b, ".func %s_probe()\n", sym);
	ptx_buf_printf(b, "{\n\t.reg .b32 %%m, %%lane, %%low;\n\t.reg .pred %%skip;\n"
			  "\t.reg .b64 %%w, %%x0, %%x1;\n\t.reg .b32 %%y;\n");
	/* Accesses through generic addresses reach the probe too: only global
	 * memory counts.  The lanes left elect the runner below. */
	if (kind == PTX_PROBE_MEM)
		ptx_buf_printf(b, "\tld.param.b64 %%x0, [addr];\n\tisspacep.global %%skip, %%x0;\n"
				  "\t@!%%skip bra RET;\n");
	ptx_buf_printf(b, "\tactivemask.b32 %%m;\n\tcvt.u64.u32 %%w, %%m;\n");
	if (mode == PTX_MODE_WARP) {
		/* lowest set bit of the mask: bit-reverse, then find the top bit */
		ptx_buf_printf(b, "\tmov.u32 %%lane, %%laneid;\n\tbrev.b32 %%low, %%m;\n"
				  "\tbfind.shiftamt.u32 %%low, %%low;\n"
				  "\tsetp.ne.u32 %%skip, %%lane, %%low;\n\t@%%skip bra DONE;\n");
	} else {
		ptx_buf_printf(b, "\tor.b64 %%w, %%w, 0x%llx;\n",
			       (unsigned long long)PTX_WARP_PER_THREAD);
	}
	if (kind == PTX_PROBE_MEM) {
		/* struct gpuext_mem_ctx {u64 addr; u32 size; u32 kind;} */
		ptx_buf_printf(b, "\t.local .align 8 .b8 ctx[16];\n"
				  "\tmov.u64 %%x1, ctx;\n\tcvta.local.u64 %%x1, %%x1;\n"
				  "\tld.param.b64 %%x0, [addr];\n\tst.u64 [%%x1], %%x0;\n"
				  "\tld.param.b32 %%y, [size];\n\tst.u32 [%%x1+8], %%y;\n"
				  "\tld.param.b32 %%y, [kind];\n\tst.u32 [%%x1+12], %%y;\n");
	} else {
		ptx_buf_printf(b, "\tmov.b64 %%x1, 0;\n");
	}
	ptx_emit_call_prog(b, sym);
	/* Once per warp, the other lanes wait here for the runner.  Without
	 * this, independent thread scheduling (sm_70 and newer) lets them return
	 * and reach the next probe while the runner is still in the program:
	 * that probe sees a smaller active mask, elects a second runner, and
	 * one warp's probe runs several times with partial lane counts. */
	ptx_buf_printf(b, "DONE:\n");
	if (mode == PTX_MODE_WARP)
		ptx_buf_printf(b, "\tbar.warp.sync %%m;\n");
	ptx_buf_printf(b, "RET:\n\tret;\n}\n\n");
}

void ptx_emit_run_kernel(struct ptx_buf *b, const char *sym)
{
	ptx_buf_printf(b, ".visible .entry %s_run(.param .u64 mem, .param .u64 len, "
			  ".param .u64 r0_out)\n{\n"
			  "\t.reg .b64 %%w, %%x0, %%x1, %%x2;\n\t.reg .b32 %%m;\n"
			  "\tactivemask.b32 %%m;\n\tcvt.u64.u32 %%w, %%m;\n"
			  "\tld.param.u64 %%x1, [mem];\n", sym);
	/* r2 = length: call with it explicitly (ptx_emit_call_prog passes 0) */
	ptx_buf_printf(b, "\tld.param.u64 %%x2, [len];\n\t{\n"
			  "\t.param .b64 q1;\n\tst.param.b64 [q1], %%x1;\n"
			  "\t.param .b64 q2;\n\tst.param.b64 [q2], %%x2;\n");
	for (unsigned a = 3; a <= 5; a++)
		ptx_buf_printf(b, "\t.param .b64 q%u;\n\tst.param.b64 [q%u], 0;\n", a, a);
	ptx_buf_printf(b, "\t.param .b64 qw;\n\tst.param.b64 [qw], %%w;\n"
			  "\t.param .b64 rq;\n"
			  "\tcall.uni (rq), %s_f0, (q1, q2, q3, q4, q5, qw);\n"
			  "\tld.param.b64 %%x0, [rq];\n\t}\n"
			  "\tld.param.u64 %%x1, [r0_out];\n\tcvta.to.global.u64 %%x1, %%x1;\n"
			  "\tst.global.u64 [%%x1], %%x0;\n\tret;\n}\n\n", sym);
}

/* The ctx of an inline probe: its words in registers REGS"N" where the
 * program only reads its fields (ptx_emit_opts.inline_ctx), else in memory
 * behind r1. */
struct ptx_wrap_ctx {
	const char *regs;
	unsigned bytes;
	const char *r1_mem;  /* r1 when the ctx is in memory */
	const char *r1_regs; /* r1 when it is in registers */
	int mem;             /* set: the program needs the ctx in memory */
};

/*
 * p's body as one block appended to site (callees to b), for the lane the
 * block's code elects: r1 is the register or constant r1 (set in the
 * runner only), which ctx (when not NULL) chooses.  Entry and exit probes
 * elect the warp's lowest active lane here, and the lanes of an entry
 * probe wait for it (a lane running ahead would make the next probe elect
 * a second runner with a partial mask); after the exit probe the threads
 * end, nothing follows that could see a partial warp, so no wait there.
 * A block probe runs in the one thread the injector's block code elects
 * (its code around has the wait); a mem probe in the lane the injector's
 * region elects once for a run of accesses (ptx_inject.c), with the
 * warp's mask in PTX_MEM_MASK_REG.
 */
static int ptx_wrap_inline_block(struct ptx_buf *b, struct ptx_buf *site, const struct prog *p,
				 const struct ptx_emit_opts *o, enum ptx_probe_kind kind,
				 const char *r1, struct ptx_wrap_ctx *ctx, char *sym, struct err *e)
{
	struct ptx_emit_opts io = *o;
	struct ptx_buf body = {0};
	int block = ptx_probe_is_block(kind), elect = !block && kind != PTX_PROBE_MEM;

	io.inline_out = &body;
	io.inline_r1 = "%gxp_x1";
	io.inline_warp = "%gxp_w";
	if (ctx) {
		io.inline_ctx = ctx->regs;
		io.inline_ctx_bytes = ctx->bytes;
		io.inline_ctx_mem = &ctx->mem;
	}
	if (kind == PTX_PROBE_MEM && o->launch_id) /* also called: no kernel registers there */
		io.launch_id = PTX_LAUNCH_ID_UNREACHABLE;
	if (kind == PTX_PROBE_MEM)
		io.block_index = NULL;
	/* the body first: whether the ctx must be in memory decides r1 */
	int err = ptx_emit_prog(b, p, &io, sym, e);
	if (err) {
		ptx_buf_free(&body);
		return err;
	}
	if (ctx)
		r1 = ctx->mem ? ctx->r1_mem : ctx->r1_regs;
	ptx_buf_printf(site, "\t{ // %s probe, inline, once per %s\n"
			     "\t.reg .b32 %%gxp_m, %%gxp_lt;\n\t.reg .pred %%gxp_skip;\n"
			     "\t.reg .b64 %%gxp_w, %%gxp_x1;\n",
		       ptx_probe_names[kind],
		       block			  ? "block (the thread the block code elects)"
		       : kind == PTX_PROBE_MEM ? "warp (the lane its region elects)"
					  : "warp (lowest active lane)");
	if (elect)
		ptx_inject_elect(site, "%gxp_m", "%gxp_lt", "%gxp_skip", "GXP_DONE", o->elect_sync);
	else if (kind == PTX_PROBE_MEM)
		ptx_buf_printf(site, "\tmov.b32 %%gxp_m, %s;\n", PTX_MEM_MASK_REG);
	else
		ptx_buf_printf(site, "\tactivemask.b32 %%gxp_m;\n");
	ptx_buf_printf(site, "\tcvt.u64.u32 %%gxp_w, %%gxp_m;\n\tmov.b64 %%gxp_x1, %s;\n", r1);
	if (body.len)
		ptx_buf_append(site, body.text, body.len);
	err = body.failed;
	ptx_buf_free(&body);
	if (elect)
		ptx_buf_printf(site, "GXP_DONE:\n");
	if (kind == PTX_PROBE_ENTRY)
		ptx_buf_printf(site, "\tbar.warp.sync %%gxp_m;\n");
	ptx_buf_printf(site, "\t}\n");
	return err || site->failed ? err_set(e, ENOMEM, "out of memory writing PTX") : 0;
}

int ptx_emit_probe_inline(struct ptx_buf *b, struct ptx_buf *site, const struct prog *p,
			  const struct ptx_emit_opts *o, enum ptx_probe_kind kind, struct err *e)
{
	if (kind == PTX_PROBE_MEM)
		return err_set(e, EINVAL, "mem probes are functions (ptx_emit_mem_probe)");
	if (!ptx_probe_is_block(kind))
		return ptx_wrap_inline_block(b, site, p, o, kind, "0", NULL, NULL, e);
	/* the record's words in the registers the injector computes, or the
	 * record in shared memory (ptx_inject.h, PTX_BLOCK_CTX_WORD);
	 * GPUEXT_PTX_BLOCK_RECORD=1: always in memory, as before the words were
	 * kept in registers, to compare the two in one build */
	struct ptx_wrap_ctx ctx = {.regs = PTX_BLOCK_CTX_WORD, .bytes = PTX_BLOCK_RECORD_BYTES,
				   .r1_mem = PTX_BLOCK_CTX_REG, .r1_regs = "0", .mem = 1};
	if (getenv("GPUEXT_PTX_BLOCK_RECORD"))
		return ptx_wrap_inline_block(b, site, p, o, kind, PTX_BLOCK_CTX_REG, NULL, NULL, e);
	return ptx_wrap_inline_block(b, site, p, o, kind, NULL, &ctx, NULL, e);
}

int ptx_emit_mem_probe(struct ptx_buf *b, struct ptx_buf *func, struct ptx_buf *site,
		       const struct prog *p, const struct ptx_emit_opts *o, char *sym, int *local,
		       struct err *e)
{
	struct ptx_buf body = {0}, block = {0};
	struct ptx_emit_opts io = *o;
	struct ptx_wrap_ctx ctx = {.regs = "%gxp_c", .bytes = 16, .r1_mem = "%gxp_ctx",
				   .r1_regs = "%gxp_ctx", .mem = 1};
	int frame = 0, err;
	const char *name = p->name ? p->name : "?";

	io.inline_frame = &frame;
	/* the SM's id read once, at the kernel's entry (pasted) or the
	 * function's (called); GPUEXT_PTX_SMID_ONCE=0: %smid at each probe,
	 * to compare both in one build */
	const char *once = getenv("GPUEXT_PTX_SMID_ONCE");
	if (!(once && !strcmp(once, "0")))
		io.inline_smid = PTX_SMID_REG;
	err = ptx_wrap_inline_block(b, &body, p, &io, PTX_PROBE_MEM, NULL, &ctx, sym, e);
	if (err) {
		ptx_buf_free(&body);
		return err;
	}
	/* The access's block: r1 = struct gpuext_mem_ctx {u64 addr; u32 size;
	 * u32 kind;}, in registers %gxp_c0 (addr) and %gxp_c1 (size | kind <<
	 * 32), and in local memory only when the program does more than load
	 * its fields (ptx_emit.h, inline_ctx).  Pasted at an access, the
	 * second is an immediate to ptxas, which can fold the program's tests
	 * of the size and kind. */
	ptx_buf_printf(&block, "\t{ // mem probe of program '%s'\n"
			       "\t.reg .b64 %%gxp_ctx, %%gxp_c<2>;\n"
			       "\tmov.b64 %%gxp_c0, %s;\n\tmov.b64 %%gxp_c1, %s;\n",
		       name, PTX_MEM_ADDR_REG, PTX_MEM_SK_REG);
	if (ctx.mem)
		ptx_buf_printf(&block, "\t.local .align 8 .b8 gxp_c[16];\n"
				       "\tmov.u64 %%gxp_ctx, gxp_c;\n"
				       "\tcvta.local.u64 %%gxp_ctx, %%gxp_ctx;\n"
				       "\tst.u64 [%%gxp_ctx], %%gxp_c0;\n"
				       "\tst.u64 [%%gxp_ctx+8], %%gxp_c1;\n");
	else
		ptx_buf_printf(&block, "\tmov.b64 %%gxp_ctx, 0;\n");
	if (body.len)
		ptx_buf_append(&block, body.text, body.len);
	ptx_buf_printf(&block, "\t}\n");
	ptx_buf_free(&body);
	if (block.failed) {
		ptx_buf_free(&block);
		return err_set(e, ENOMEM, "out of memory writing PTX");
	}
	/* Called: the same block behind the parameters and the election (the
	 * lanes of a call wait for its runner).  Accesses through generic
	 * addresses reach the function too: only global memory counts. */
	ptx_buf_printf(func, "// mem probe of program '%s', its body inline\n"
			     ".func %s_probe(.param .b64 addr, .param .b32 size, .param .b32 kind)\n"
			     "{\n\t.reg .b64 %s, %s;\n\t.reg .b32 %s, %%gxp_y, %%gxp_z, %s;\n"
			     "\t.reg .pred %%gxp_g;\n"
			     "\tld.param.b64 %s, [addr];\n\tisspacep.global %%gxp_g, %s;\n"
			     "\t@!%%gxp_g bra GXP_RET;\n"
			     "\tld.param.b32 %%gxp_y, [size];\n\tld.param.b32 %%gxp_z, [kind];\n"
			     "\tmov.b64 %s, {%%gxp_y, %%gxp_z};\n",
		       name, sym, PTX_MEM_ADDR_REG, PTX_MEM_SK_REG, PTX_MEM_MASK_REG, PTX_SMID_REG,
		       PTX_MEM_ADDR_REG, PTX_MEM_ADDR_REG, PTX_MEM_SK_REG);
	ptx_inject_elect(func, PTX_MEM_MASK_REG, "%gxp_y", "%gxp_g", "GXP_DONE", o->elect_sync);
	ptx_buf_printf(func, "\tmov.u32 %s, %%smid;\n", PTX_SMID_REG);
	if (block.len)
		ptx_buf_append(func, block.text, block.len);
	ptx_buf_printf(func, "GXP_DONE:\n");
	/* the lanes wait for the runner unless the body branches only
	 * forward (ptx_inject_forward_only: as the pasted regions);
	 * GPUEXT_PTX_MEM_WAIT=1 always, =0 never, to compare */
	const char *w = getenv("GPUEXT_PTX_MEM_WAIT");
	int wait = w && !strcmp(w, "1")   ? 1
		   : w && !strcmp(w, "0") ? 0
					  : ptx_inject_forward_only(block.len ? block.text : "", e) != 1;
	if (wait)
		ptx_inject_wait(func, PTX_MEM_MASK_REG, "%gxp_y");
	ptx_buf_printf(func, "GXP_RET:\n\tret;\n}\n\n");
	if (site && block.len)
		ptx_buf_append(site, block.text, block.len);
	ptx_buf_free(&block);
	if (local)
		*local = ctx.mem || frame;
	return b->failed || func->failed || (site && site->failed)
		       ? err_set(e, ENOMEM, "out of memory writing PTX")
		       : 0;
}
