/* SPDX-License-Identifier: MIT */
/*
 * agent_probes.c - what the programs targeting a kernel add to its module:
 * their probes translated to PTX (inline blocks per site, mem probes in
 * both forms), the block-local arrays they name, the map table, and the
 * device runtime functions they call, declared or as text.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "agent_impl.h"
#include "agent_probes.h"
#include "agent_tier.h"
#include "ptx/ptx_buf.h"
#include "ptx/ptx_rt.h"
#include "ptx/ptx_wrap.h"

/* Does p name map k (LD_IMM64 of the map or of its value)? */
static int agent_prog_uses_map(const struct prog *p, size_t k)
{
	for (size_t i = 0; i + 1 < p->insn_cnt; i++) {
		const struct isa_insn *in = &p->insns[i];
		if (in->code != ISA_OPC_LD_IMM64)
			continue;
		if ((in->src == ISA_PSEUDO_MAP_FD || in->src == ISA_PSEUDO_MAP_VALUE) &&
		    (size_t)in->imm == k)
			return 1;
		i++;
	}
	return 0;
}

/* Into pr, the block-local arrays that the programs on kernel name. */
static void agent_block_arrays(const char *kernel, const char *base, struct agent_probes *pr)
{
	for (size_t k = 0; k < agent_session->obj->map_cnt && k < AGENT_MAX_MAPS; k++) {
		const struct ptx_map_ref *r = &agent_refs()[k];
		int used = 0;
		if (r->type != MAP_TYPE_GPU_BLOCK_ARRAY)
			continue;
		for (size_t i = 0; i < agent_gpu_prog_cnt && !used; i++)
			used = agent_kernel_targeted_by(agent_gpu_progs[i], kernel, base) &&
			       agent_prog_uses_map(agent_gpu_progs[i], k);
		if (!used)
			continue;
		size_t n = pr->n_block_arrays++;
		ptx_block_array_sym(k, pr->block_syms[n], sizeof(pr->block_syms[n]));
		pr->block_arrays[n].sym = pr->block_syms[n];
		pr->block_arrays[n].bytes = r->max_entries * r->value_stride;
		pr->block_bytes += pr->block_arrays[n].bytes;
	}
}

/* The site of an inline probe kind (not mem). */
static int agent_site_of(enum ptx_probe_kind kind)
{
	return kind == PTX_PROBE_EXIT          ? AGENT_EXIT
	       : kind == PTX_PROBE_BLOCK_ENTRY ? AGENT_BLOCK_ENTRY
	       : kind == PTX_PROBE_BLOCK_EXIT  ? AGENT_BLOCK_EXIT
					       : AGENT_ENTRY;
}

/* Where the module's code finds the maps: the table's declaration, the
 * arena's mark (agent_device.h). */
static void agent_probes_maps(struct ptx_buf *b, int table, int va)
{
	if (table)
		ptx_buf_printf(b, ".const .align 8 .u64 %s[%zu];\n", AGENT_MAP_TABLE,
			       2 * agent_map_cnt());
	if (va)
		ptx_buf_printf(b, "%s\n", AGENT_MAP_VA_MARK);
}

void agent_probes_free(struct agent_probes *pr)
{
	free(pr->extra);
	free(pr->mem_func);
	for (int i = 0; i < AGENT_SITES; i++)
		free(pr->site[i]);
	*pr = (struct agent_probes){0};
}


int agent_build_probes(const char *kernel, int link, struct agent_probes *pr, struct err *e)
{
	struct ptx_buf code = {0}, site[AGENT_SITES] = {{0}}, b = {0}, func = {0};
	char mem_syms[16][128], base[256];
	/* the maps' addresses as immediates where their arena is in use, but
	 * in mem probes: those read them from the table (an immediate costs
	 * two moves at each access where the table's is an operand: memtrace
	 * 1-4% slower on an H200, bench/results/2026-11-22-h200-mapva-s8.md) */
	int n_mem = 0, err = 0, mem_local = 0, va = agent_map_va();

	*pr = (struct agent_probes){0};
	agent_demangle_base(kernel, base, sizeof(base));
	agent_block_arrays(kernel, base, pr);
	for (size_t i = 0; i < agent_gpu_prog_cnt && !err; i++) {
		struct prog *p = agent_gpu_progs[i];
		if (!agent_kernel_targeted_by(p, kernel, base))
			continue;
		/* inline probes read the launch id and the block index the
		 * injector declares */
		enum ptx_probe_kind kind = ptx_probe_kind_of(p->type);
		struct ptx_emit_opts o = {.maps = agent_refs(),
					  .map_table = va && kind != PTX_PROBE_MEM ? NULL
										 : AGENT_MAP_TABLE,
					  .launch_id = PTX_LAUNCH_ID_REG,
					  .block_index = PTX_BLOCK_INDEX_REG,
					  .elect_sync = agent_elect_sync(),
					  .elem_low_word = kind != PTX_PROBE_BLOCK_ENTRY &&
							   kind != PTX_PROBE_BLOCK_EXIT};
		if (kind != PTX_PROBE_MEM) {
			err = ptx_emit_probe_inline(&code, &site[agent_site_of(kind)], p, &o, kind, e);
		} else if (n_mem < 16) {
			int local = 0;
			err = ptx_emit_mem_probe(&code, &func, &site[AGENT_MEM], p, &o,
						 mem_syms[n_mem], &local, e);
			n_mem += !err;
			mem_local |= local;
		}
		if (err)
			err_prefix(e, "program '%s': ", p->name);
	}
	if (n_mem > 1) { /* one call per access: gxa_mem calls each program's */
		ptx_buf_printf(&func, ".func gxa_mem(.param .b64 gxa_a, .param .b32 gxa_s, "
				      ".param .b32 gxa_k)\n{\n\t.reg .b64 %%gxa_a;\n"
				      "\t.reg .b32 %%gxa_s, %%gxa_k;\n"
				      "\tld.param.b64 %%gxa_a, [gxa_a];\n"
				      "\tld.param.b32 %%gxa_s, [gxa_s];\n"
				      "\tld.param.b32 %%gxa_k, [gxa_k];\n");
		for (int i = 0; i < n_mem; i++)
			ptx_buf_printf(&func, "\tcall %s_probe, (%%gxa_a, %%gxa_s, %%gxa_k);\n",
				       mem_syms[i]);
		ptx_buf_printf(&func, "\tret;\n}\n");
	}
	pr->mem_local = mem_local;
	pr->mem_inline_max = agent_mem_inline_max(mem_local);
	if (n_mem == 1)
		snprintf(pr->mem_sym, sizeof(pr->mem_sym), "%s_probe", mem_syms[0]);
	else if (n_mem)
		snprintf(pr->mem_sym, sizeof(pr->mem_sym), "gxa_mem");
	for (int i = 0; i < AGENT_SITES; i++)
		if (!err && site[i].failed)
			err = err_set(e, ENOMEM, "out of memory");
	if (!err && (code.failed || func.failed))
		err = err_set(e, ENOMEM, "out of memory");
	if (!err) {
		/* before them, the runtime functions that the programs, the probes
		 * and the inline blocks name: declared, to be linked from the
		 * prebuilt runtime, or their text, to be compiled with them */
		const char *texts[2 + AGENT_SITES] = {code.text ? code.text : "", func.text};
		for (int i = 0; i < AGENT_SITES; i++)
			texts[2 + i] = site[i].text;
		/* the maps' addresses, filled in at each load (agent_map_table_fill),
		 * where they are not immediates; the mark of code made for the
		 * arena (agent_device.h's invariant) */
		int table = !va || n_mem;
		agent_probes_maps(&b, table, va);
		int declared = link ? ptx_emit_runtime_decls(&b, texts, 2 + AGENT_SITES) : -1;
		pr->linked = declared > 0;
		if (declared < 0) {
			ptx_buf_free(&b);
			agent_probes_maps(&b, table, va);
			ptx_emit_runtime_used(&b, texts, 2 + AGENT_SITES);
		}
		if (code.len)
			ptx_buf_append(&b, code.text, code.len);
		/* the sites did not fail (above): taking them gives their text */
		for (int i = 0; i < AGENT_SITES; i++)
			pr->site[i] = site[i].len ? ptx_buf_take(&site[i], NULL) : NULL;
		pr->mem_func = func.len ? ptx_buf_take(&func, NULL) : NULL;
		if (!(pr->extra = ptx_buf_take(&b, NULL)))
			err = err_set(e, ENOMEM, "out of memory");
	}
	ptx_buf_free(&code);
	ptx_buf_free(&func);
	for (int i = 0; i < AGENT_SITES; i++)
		ptx_buf_free(&site[i]);
	ptx_buf_free(&b);
	if (err)
		agent_probes_free(pr);
	return err;
}
