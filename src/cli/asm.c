/* SPDX-License-Identifier: MIT */
/*
 * asm.c - `gpuext asm [-o OUT] FILE`: assemble eBPF text (the syntax of
 * shared/conformance) into bytecode: raw little-endian slots into OUT, or
 * hex (one slot per line, the conformance "-- program" format) on stdout.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/asm.h"
#include "cli.h"

static const char asm_usage[] =
	"Usage: gpuext asm [-o OUT] FILE\n\n"
	"Assemble eBPF text (FILE, or - for stdin) into bytecode.  With -o the raw\n"
	"little-endian instructions go to OUT; otherwise they are printed in hex,\n"
	"one 8-byte slot per line.  The result must decode (RFC 9669 rules).\n";

int do_asm(int argc, char **argv)
{
	const char *out_path = NULL, *in_path = NULL;
	struct isa_insn *insns = NULL;
	struct isa_error ierr;
	struct err e = {{0}};
	size_t cnt;
	char *text;
	int ret = 1;

	struct cli_opts o = {.cmd = "asm", .shorts = "o:"};
	int c;
	while ((c = cli_opts_next(&o, argc, argv)) != CLI_OPT_END) {
		if (c == CLI_OPT_HELP) {
			fputs(asm_usage, stdout);
			return 0;
		} else if (c == 'o') {
			out_path = o.arg;
		} else if (c == CLI_OPT_ARG && !in_path) {
			in_path = o.arg;
		} else if (c == CLI_OPT_ARG) {
			cli_error("asm: more than one input file (see gpuext asm --help)");
			return 2;
		} else {
			return 2;
		}
	}
	if (!in_path) {
		fputs(asm_usage, stderr);
		return 2;
	}
	text = cli_read_file(in_path, NULL);
	if (!text) {
		cli_error("%s: %s", in_path, strerror(errno));
		return 1;
	}
	if (asm_assemble(text, &insns, &cnt, &e)) {
		cli_error("%s: %s", in_path, e.msg);
		goto out;
	}
	if (isa_decode(insns, cnt, 1, &ierr)) {
		cli_error("%s: insn %zu: %s", in_path, ierr.index, ierr.msg);
		goto out;
	}
	if (out_path) {
		FILE *f = fopen(out_path, "wb");
		if (!f || fwrite(insns, sizeof(*insns), cnt, f) != cnt) {
			cli_error("%s: %s", out_path, strerror(errno));
			if (f)
				fclose(f);
			goto out;
		}
		if (fclose(f)) {
			cli_error("%s: %s", out_path, strerror(errno));
			goto out;
		}
	} else {
		for (size_t i = 0; i < cnt; i++) {
			const unsigned char *b = (const unsigned char *)&insns[i];
			printf("%02x %02x %02x %02x %02x %02x %02x %02x\n", b[0], b[1], b[2], b[3],
			       b[4], b[5], b[6], b[7]);
		}
	}
	ret = 0;
out:
	free(insns);
	free(text);
	return ret;
}
