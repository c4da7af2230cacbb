/* SPDX-License-Identifier: MIT */
/*
 * prog.c - programs: construction from bytecode, section names, line info.
 *
 * Ownership: a prog owns its strings (name, section, target), its
 * instructions and the maps[] and lines[] arrays; it does not own the maps
 * themselves nor the strings the lines point to (those belong to the
 * object).  It owns its compiled JIT code (p->jit), released with jit_free().
 */
#include "prog.h"
#include "jit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int prog_from_insns(const char *name, const struct isa_insn *insns, size_t cnt,
		    struct prog **out, struct err *e)
{
	struct prog *p;

	if (cnt == 0)
		return err_set(e, EINVAL, "prog '%s': no instructions", name ? name : "");
	p = calloc(1, sizeof(*p));
	if (!p)
		return err_set(e, ENOMEM, "prog '%s': out of memory", name ? name : "");
	p->name = strdup(name ? name : "");
	p->insns = malloc(cnt * sizeof(*insns));
	if (!p->name || !p->insns) {
		prog_free(p);
		return err_set(e, ENOMEM, "prog '%s': out of memory", name ? name : "");
	}
	memcpy(p->insns, insns, cnt * sizeof(*insns));
	p->insn_cnt = cnt;
	p->type = PROG_TYPE_RAW;
	*out = p;
	return 0;
}

void prog_free(struct prog *p)
{
	if (!p)
		return;
	jit_free(p);
	free(p->name);
	free(p->section);
	free(p->target);
	free(p->insns);
	free(p->maps);
	free(p->lines);
	free(p);
}

/*
 * Section prefixes, longest first where one is a prefix of another.  A
 * uprobe target with a '/' or ':' names a file (uprobe/PATH:FUNC, kernel
 * uprobes); without one it is a CUDA driver function (in-process).
 */
static const struct {
	const char *prefix;
	enum prog_type type;
	int needs_target;
} prog_sections[] = {
	{"uprobe/", PROG_TYPE_UPROBE, 1},
	{"uretprobe/", PROG_TYPE_URETPROBE, 1},
	{"gpu/entry/", PROG_TYPE_GPU_ENTRY, 1},
	{"gpu/exit/", PROG_TYPE_GPU_EXIT, 1},
	{"gpu/mem/", PROG_TYPE_GPU_MEM, 1},
	{"gpu/block_entry/", PROG_TYPE_GPU_BLOCK_ENTRY, 1},
	{"gpu/block_exit/", PROG_TYPE_GPU_BLOCK_EXIT, 1},
	{"kprobe/", PROG_TYPE_GPU_ENTRY, 1},    /* bpftime's GPU name for gpu/entry */
	{"kretprobe/", PROG_TYPE_GPU_EXIT, 1},  /* bpftime's GPU name for gpu/exit */
	{"cupti/kernel", PROG_TYPE_CUPTI_KERNEL, 0},
	{"cupti/memcpy", PROG_TYPE_CUPTI_MEMCPY, 0},
	{"cupti/uvm", PROG_TYPE_CUPTI_UVM, 0},
	{"struct_ops/", PROG_TYPE_STRUCT_OPS, 1},
};

int prog_type_from_section(const char *section, enum prog_type *type, const char **target)
{
	for (size_t i = 0; i < sizeof(prog_sections) / sizeof(prog_sections[0]); i++) {
		const char *prefix = prog_sections[i].prefix;
		size_t n = strlen(prefix);

		if (!prog_sections[i].needs_target) {
			if (strcmp(section, prefix))
				continue;
			*type = prog_sections[i].type;
			if (target)
				*target = NULL;
			return 0;
		}
		if (strncmp(section, prefix, n))
			continue;
		const char *t = section + n;
		if (!*t)
			return -EINVAL; /* "uprobe/" with nothing to attach to */
		*type = prog_sections[i].type;
		if (*type == PROG_TYPE_UPROBE && strpbrk(t, "/:"))
			*type = PROG_TYPE_UPROBE_PATH;
		if (target)
			*target = t;
		return 0;
	}
	return -ENOENT;
}

const char *prog_type_name(enum prog_type t)
{
	switch (t) {
	case PROG_TYPE_RAW:
		return "raw";
	case PROG_TYPE_UPROBE:
		return "uprobe";
	case PROG_TYPE_URETPROBE:
		return "uretprobe";
	case PROG_TYPE_UPROBE_PATH:
		return "uprobe_path";
	case PROG_TYPE_GPU_ENTRY:
		return "gpu_entry";
	case PROG_TYPE_GPU_EXIT:
		return "gpu_exit";
	case PROG_TYPE_GPU_MEM:
		return "gpu_mem";
	case PROG_TYPE_CUPTI_KERNEL:
		return "cupti_kernel";
	case PROG_TYPE_CUPTI_MEMCPY:
		return "cupti_memcpy";
	case PROG_TYPE_CUPTI_UVM:
		return "cupti_uvm";
	case PROG_TYPE_STRUCT_OPS:
		return "struct_ops";
	case PROG_TYPE_GPU_BLOCK_ENTRY:
		return "gpu_block_entry";
	case PROG_TYPE_GPU_BLOCK_EXIT:
		return "gpu_block_exit";
	}
	return "unknown";
}

const struct prog_line *prog_line_of(const struct prog *p, size_t idx)
{
	size_t lo = 0, hi = p->line_cnt;

	/* The last line whose first instruction is <= idx (lines are sorted). */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->lines[mid].insn <= idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &p->lines[lo - 1] : NULL;
}
