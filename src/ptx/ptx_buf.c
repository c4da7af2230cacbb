/* SPDX-License-Identifier: MIT */
#include "ptx_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ptx_buf_reserve(struct ptx_buf *b, size_t extra)
{
	if (b->failed)
		return -1;
	if (b->len + extra + 1 <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->len + extra + 1)
		cap *= 2;
	char *t = realloc(b->text, cap);
	if (!t) {
		b->failed = 1;
		return -1;
	}
	b->text = t;
	b->cap = cap;
	return 0;
}

void ptx_buf_append(struct ptx_buf *b, const char *s, size_t n)
{
	if (ptx_buf_reserve(b, n))
		return;
	memcpy(b->text + b->len, s, n);
	b->len += n;
	b->text[b->len] = '\0';
}

void ptx_buf_printf(struct ptx_buf *b, const char *fmt, ...)
{
	va_list ap;
	char small[256];

	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->failed = 1;
		return;
	}
	if ((size_t)n < sizeof(small)) {
		ptx_buf_append(b, small, (size_t)n);
		return;
	}
	if (ptx_buf_reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->text + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

char *ptx_buf_take(struct ptx_buf *b, size_t *len)
{
	char *t = b->failed ? NULL : b->text;

	if (b->failed)
		free(b->text);
	else if (!t)
		t = calloc(1, 1);
	if (len)
		*len = t ? b->len : 0;
	memset(b, 0, sizeof(*b));
	return t;
}

void ptx_buf_free(struct ptx_buf *b)
{
	free(b->text);
	memset(b, 0, sizeof(*b));
}
