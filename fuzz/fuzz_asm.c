/* SPDX-License-Identifier: MIT */
/*
 * fuzz_asm - the assembler on arbitrary text.  It must not crash; when the
 * result decodes, its disassembly must assemble to the same bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/asm.h"
#include "bpf/disasm.h"
#include "bpf/isa.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct isa_insn *insns = NULL, *again = NULL;
	size_t cnt = 0, again_cnt = 0, len = 0;
	struct isa_error ierr;
	struct err e = {{0}};
	char *text, *dis = NULL;

	if (size > 1 << 16)
		return 0;
	text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	if (asm_assemble(text, &insns, &cnt, &e)) {
		if (!memchr(e.msg, '\0', sizeof(e.msg)) || !e.msg[0]) {
			fprintf(stderr, "assembler failed without a message\n");
			abort();
		}
		free(text);
		return 0;
	}
	if (isa_decode(insns, cnt, 1, &ierr) == 0) {
		FILE *f = open_memstream(&dis, &len);
		disasm_program(f, insns, cnt);
		fclose(f);
		if (asm_assemble(dis, &again, &again_cnt, &e) || again_cnt != cnt ||
		    memcmp(again, insns, cnt * sizeof(*insns))) {
			fprintf(stderr, "round trip failed (%s) for:\n%s\n--- disassembly:\n%s", e.msg,
				text, dis);
			abort();
		}
		free(again);
		free(dis);
	}
	free(insns);
	free(text);
	return 0;
}
