/* SPDX-License-Identifier: MIT */
/*
 * fakeapp.h - what the fake driver's test applications share: reading
 * their PTX module from a file.  Header-only: each application is one
 * source file linked against the fake libcuda.
 */
#ifndef GPUEXT_FAKEAPP_H
#define GPUEXT_FAKEAPP_H

#include <stdio.h>
#include <stdlib.h>

/* The whole file at path, NUL-terminated; exits on any error. */
static inline char *fakeapp_read_all(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		exit(1);
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *buf = calloc(1, (size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		exit(1);
	fclose(f);
	return buf;
}

#endif
