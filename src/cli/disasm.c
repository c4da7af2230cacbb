/* SPDX-License-Identifier: MIT */
/*
 * disasm.c - `gpuext disasm FILE`: raw little-endian eBPF bytecode to text
 * that `gpuext asm` turns back into the same bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/disasm.h"
#include "cli.h"

static const char disasm_usage[] =
	"Usage: gpuext disasm FILE\n\n"
	"Disassemble raw little-endian eBPF bytecode (FILE, or - for stdin), 8 bytes\n"
	"per instruction slot.  Jump targets are printed as labels.  Exits 1 if the\n"
	"bytecode breaks an RFC 9669 encoding rule (the disassembly is still printed).\n";

int do_disasm(int argc, char **argv)
{
	const char *path = NULL;
	struct isa_error ierr;
	size_t len;
	char *data;

	struct cli_opts o = {.cmd = "disasm"};
	int c;
	while ((c = cli_opts_next(&o, argc, argv)) != CLI_OPT_END) {
		if (c == CLI_OPT_HELP) {
			fputs(disasm_usage, stdout);
			return 0;
		} else if (c == CLI_OPT_ARG && !path) {
			path = o.arg;
		} else if (c == CLI_OPT_ARG) {
			cli_error("disasm: more than one input file (see gpuext disasm --help)");
			return 2;
		} else {
			return 2;
		}
	}
	if (!path) {
		fputs(disasm_usage, stderr);
		return 2;
	}
	data = cli_read_file(path, &len);
	if (!data) {
		cli_error("%s: %s", path, strerror(errno));
		return 1;
	}
	if (len >= 4 && !memcmp(data, "\177ELF", 4)) {
		cli_error("%s: is an ELF object, not raw bytecode (gpuext prog dump shows its programs)",
			  path);
		free(data);
		return 1;
	}
	if (len == 0 || len % sizeof(struct isa_insn)) {
		cli_error("%s: %zu bytes is not a whole number of 8-byte instructions", path, len);
		free(data);
		return 1;
	}
	/* The buffer from cli_read_file is malloc'd, so aligned for isa_insn. */
	const struct isa_insn *insns = (const struct isa_insn *)(void *)data;
	size_t cnt = len / sizeof(struct isa_insn);
	disasm_program(stdout, insns, cnt);
	int ret = 0;
	if (isa_decode(insns, cnt, 1, &ierr)) {
		cli_error("%s: insn %zu: %s", path, ierr.index, ierr.msg);
		ret = 1;
	}
	free(data);
	return ret;
}
