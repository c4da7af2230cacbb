/* SPDX-License-Identifier: MIT */
/*
 * jit_dump.c - print JIT-compiled machine code (for `prog dump --jited`):
 * the raw bytes, then objdump's disassembly when objdump is installed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static void dump_bytes(FILE *out, const uint8_t *code, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (i % 16 == 0)
			fprintf(out, "%s%6zx:", i ? "\n" : "", i);
		fprintf(out, " %02x", code[i]);
	}
	fputc('\n', out);
}

/* objdump -D -b binary on a temporary copy; 0 if it ran. */
static int dump_disasm(FILE *out, const uint8_t *code, size_t len)
{
	char path[] = "/tmp/gpuext-jit-XXXXXX";
	char cmd[256], line[512];
	int fd = mkstemp(path), rc = -1;

	if (fd < 0)
		return -1;
	if (write(fd, code, len) != (ssize_t)len)
		goto out;
	snprintf(cmd, sizeof(cmd),
		 "objdump -D -b binary -mi386:x86-64 -M intel '%s' 2>/dev/null", path);
	FILE *p = popen(cmd, "r");
	if (!p)
		goto out;
	/* Skip objdump's file header; keep from the first disassembled line on. */
	int started = 0;
	while (fgets(line, sizeof(line), p)) {
		if (!started && strstr(line, "<.data>:"))
			started = 1;
		else if (started)
			fputs(line, out);
	}
	rc = pclose(p) == 0 && started ? 0 : -1;
out:
	close(fd);
	unlink(path);
	return rc;
}

void cli_jit_dump(FILE *out, const uint8_t *code, size_t len)
{
	fprintf(out, "x86-64 code, %zu bytes:\n", len);
	dump_bytes(out, code, len);
	if (dump_disasm(out, code, len))
		fprintf(out, "(objdump not available: raw bytes only)\n");
}
