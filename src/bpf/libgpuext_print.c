/* SPDX-License-Identifier: MIT */
/*
 * libgpuext_print.c - the replaceable print callback and options checks of
 * the public API.
 */
#include "libgpuext_impl.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static int api_print_stderr(enum gpuext_print_level level, const char *fmt, va_list ap)
{
	if (level == GPUEXT_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static _Atomic(gpuext_print_fn_t) api_printer = api_print_stderr;

GPUEXT_API gpuext_print_fn_t gpuext_set_print(gpuext_print_fn_t fn)
{
	return atomic_exchange(&api_printer, fn);
}

static void api_print(enum gpuext_print_level level, const char *fmt, ...)
{
	gpuext_print_fn_t fn = atomic_load(&api_printer);
	va_list ap;

	if (!fn)
		return;
	va_start(ap, fmt);
	fn(level, fmt, ap);
	va_end(ap);
}

void api_warn(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	api_print(GPUEXT_WARN, "libgpuext: %s\n", msg);
}

int api_opts_valid(const void *opts, size_t known, const char *what)
{
	size_t sz;

	if (!opts)
		return 1;
	memcpy(&sz, opts, sizeof(sz));
	if (sz < sizeof(size_t)) {
		api_warn("%s: sz %zu is too small", what, sz);
		return 0;
	}
	for (size_t i = known; i < sz; i++)
		if (((const unsigned char *)opts)[i]) {
			api_warn("%s: unknown non-zero field at byte %zu (sz %zu, this library knows %zu)",
				 what, i, sz, known);
			return 0;
		}
	return 1;
}
