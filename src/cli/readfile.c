/* SPDX-License-Identifier: MIT */
/* readfile.c - cli_read_file(), shared by the commands that take a FILE. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Read a whole file (or stdin for "-") as a NUL-terminated string. */
char *cli_read_file(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	char *buf = NULL;
	size_t n = 0, cap = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = (cap + 4096) * 2;
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				buf = NULL;
				errno = ENOMEM;
				break;
			}
			buf = nb;
		}
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (got == 0)
			break;
	}
	if (f != stdin)
		fclose(f);
	if (buf) {
		buf[n] = '\0';
		if (len)
			*len = n;
	}
	return buf;
}
