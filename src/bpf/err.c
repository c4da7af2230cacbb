/* SPDX-License-Identifier: MIT */
#include "err.h"

#include <stdio.h>
#include <string.h>

int err_set(struct err *e, int errnum, const char *fmt, ...)
{
	if (e) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		va_end(ap);
	}
	return -errnum;
}

void err_prefix(struct err *e, const char *fmt, ...)
{
	char prefix[256], old[sizeof(e->msg)];
	va_list ap;

	if (!e)
		return;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, e->msg, sizeof(old));
	/* Truncation keeps the start of the message, which names the place. */
	size_t n = strnlen(prefix, sizeof(e->msg) - 1);
	memcpy(e->msg, prefix, n);
	size_t rest = strnlen(old, sizeof(old) - 1);
	if (rest > sizeof(e->msg) - 1 - n)
		rest = sizeof(e->msg) - 1 - n;
	memcpy(e->msg + n, old, rest);
	e->msg[n + rest] = '\0';
}
