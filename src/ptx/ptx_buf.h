/* SPDX-License-Identifier: MIT */
/*
 * ptx_buf.h - a growable text buffer that PTX is written into.
 *
 * An allocation failure is remembered (failed = 1) and every later append is
 * a no-op, so emitters append freely and check once at the end.
 */
#ifndef GPUEXT_PTX_BUF_H
#define GPUEXT_PTX_BUF_H

#include <stddef.h>

struct ptx_buf {
	char *text; /* NUL-terminated when len > 0 */
	size_t len;
	size_t cap;
	int failed;
};

__attribute__((format(printf, 2, 3))) void ptx_buf_printf(struct ptx_buf *b,
							  const char *fmt, ...);
void ptx_buf_append(struct ptx_buf *b, const char *s, size_t n);
/* Hand the text to the caller (malloc'd, NUL-terminated), or NULL if an
 * allocation failed; the buffer is reset either way. */
char *ptx_buf_take(struct ptx_buf *b, size_t *len);
void ptx_buf_free(struct ptx_buf *b);

#endif /* GPUEXT_PTX_BUF_H */
