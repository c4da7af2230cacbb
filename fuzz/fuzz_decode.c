/* SPDX-License-Identifier: MIT */
/*
 * fuzz_decode - bytecode decoder, disassembler, and assembler of the
 * disassembly.  Any bytes: isa_decode and disasm_insn must not crash.
 * Bytes that decode: disassembling (with labels, and with offsets) and
 * assembling again must give the same bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/asm.h"
#include "bpf/disasm.h"
#include "bpf/isa.h"

enum { FUZZ_MAX_SLOTS = 4096 };

static void fuzz_roundtrip(const struct isa_insn *insns, size_t cnt, const char *text,
			   const char *how)
{
	struct isa_insn *again = NULL;
	size_t again_cnt = 0;
	struct err e = {{0}};

	if (asm_assemble(text, &again, &again_cnt, &e)) {
		fprintf(stderr, "%s disassembly does not assemble: %s\n%s", how, e.msg, text);
		abort();
	}
	if (again_cnt != cnt || memcmp(again, insns, cnt * sizeof(*insns))) {
		fprintf(stderr, "%s disassembly assembles to other bytes:\n%s", how, text);
		abort();
	}
	free(again);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	size_t cnt = size / sizeof(struct isa_insn);
	struct isa_insn *insns;
	struct isa_error ierr;
	char line[DISASM_BUF_SIZE], *text = NULL;
	size_t len = 0;

	if (cnt == 0 || cnt > FUZZ_MAX_SLOTS)
		return 0;
	insns = malloc(cnt * sizeof(*insns));
	memcpy(insns, data, cnt * sizeof(*insns));

	/* Every slot prints, valid or not. */
	for (size_t i = 0; i < cnt; i++)
		disasm_insn(insns, cnt, i, DISASM_LABELS, line, sizeof(line));

	if (isa_decode(insns, cnt, size % 2, &ierr) == 0) {
		FILE *f = open_memstream(&text, &len);
		disasm_program(f, insns, cnt);
		fclose(f);
		fuzz_roundtrip(insns, cnt, text, "labelled");
		free(text);

		text = NULL;
		f = open_memstream(&text, &len);
		for (size_t i = 0; i < cnt;) {
			i += disasm_insn(insns, cnt, i, 0, line, sizeof(line));
			fprintf(f, "%s\n", line);
		}
		fclose(f);
		fuzz_roundtrip(insns, cnt, text, "offset");
		free(text);
	} else if (ierr.index >= cnt || !memchr(ierr.msg, '\0', sizeof(ierr.msg))) {
		fprintf(stderr, "bad isa_error: index %zu of %zu\n", ierr.index, cnt);
		abort();
	}
	free(insns);
	return 0;
}
