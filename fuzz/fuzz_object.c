/* SPDX-License-Identifier: MIT */
/*
 * fuzz_object: the ELF/BTF object loader on arbitrary bytes.  Whatever the
 * input, object_open_mem either loads it or fails with a message naming
 * the input; ASan/UBSan flag any out-of-bounds read or undefined behaviour.
 * A loaded object is walked (instructions, line info, map definitions) so
 * that what the loader hands out is read too.
 * Seed corpus: the compiled test programs (fuzz/corpus/fuzz_object/).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/object.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct object *obj = NULL;
	struct err e = {{0}};
	volatile uint64_t sink = 0;

	if (object_open_mem(data, size, "fuzz.o", &obj, &e)) {
		if (obj || strncmp(e.msg, "fuzz.o: ", 8))
			abort();
		return 0;
	}
	for (size_t i = 0; i < obj->prog_cnt; i++) {
		const struct prog *p = obj->progs[i];
		for (size_t k = 0; k < p->insn_cnt; k++)
			sink += p->insns[k].imm;
		for (size_t k = 0; k < p->line_cnt; k++)
			sink += strlen(p->lines[k].file) + p->lines[k].line +
				(p->lines[k].text ? strlen(p->lines[k].text) : 0);
		sink += strlen(p->name) + strlen(p->section);
	}
	for (size_t i = 0; i < obj->map_cnt; i++) {
		const struct object_map *m = &obj->maps[i];
		sink += m->def.value_size + strlen(m->def.name);
		if (m->init && m->init_len)
			sink += ((const uint8_t *)m->init)[m->init_len - 1];
	}
	(void)sink;
	object_free(obj);
	return 0;
}
