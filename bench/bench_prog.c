/* SPDX-License-Identifier: MIT */
/*
 * bench_prog.c - the bytecode of one benchmark program, through gpuext's own
 * object loader (object_open): the bytes uBPF is given are exactly those
 * gpuext runs.  A benchmark program must use no map and no global data
 * (uBPF would need them emulated through helpers): this is checked here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bpf/object.h"

int bench_load_prog(const char *path, const char *section, struct isa_insn **insns,
		    size_t *cnt, char *err, size_t err_len)
{
	struct object *obj;
	struct prog *p;
	struct err e = {{0}};
	int ret = -1;

	if (object_open(path, &obj, &e) < 0) {
		snprintf(err, err_len, "%s (run `make` first)", e.msg);
		return -1;
	}
	if (!(p = object_find_prog(obj, section)))
		snprintf(err, err_len, "%s: no program in section '%s'", path, section);
	else if (obj->map_cnt)
		snprintf(err, err_len, "%s: section '%s': a benchmark program must use no map or "
			 "global data (the object has %zu)", path, section, obj->map_cnt);
	else if (!(*insns = malloc(p->insn_cnt * sizeof(**insns))))
		snprintf(err, err_len, "out of memory");
	else {
		memcpy(*insns, p->insns, p->insn_cnt * sizeof(**insns));
		*cnt = p->insn_cnt;
		ret = 0;
	}
	object_free(obj);
	return ret;
}
