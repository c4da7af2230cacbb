/* SPDX-License-Identifier: MIT */
/*
 * helpers_impl.h - what the helper files share (helpers.c, helpers_probe.c,
 * helpers_trace.c); not part of helpers.h's interface.
 */
#ifndef GPUEXT_BPF_HELPERS_IMPL_H
#define GPUEXT_BPF_HELPERS_IMPL_H

#include <stddef.h>
#include <stdint.h>

/*
 * Read len bytes at src of this process without ever faulting: 0, or
 * -EFAULT with dst zeroed when any byte is unreadable.
 */
int helper_safe_read(void *dst, const void *src, size_t len);

/* The fallback path of helper_safe_read (tested on its own): 0 or -EFAULT,
 * dst undefined on failure. */
int helper_read_via_pipe(void *dst, const void *src, size_t len);

/*
 * Copy a NUL-terminated string of at most size - 1 bytes from src, without
 * faulting; dst is always terminated.  Returns the length with the NUL, or
 * -EFAULT with dst zeroed.
 */
long helper_safe_read_str(char *dst, size_t size, const void *src);

/* Host implementations, in Linux's argument order (r1..r5). */
#define HELPER_FN_DECL(name)                                                   \
	uint64_t name(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5);
HELPER_FN_DECL(helper_probe_read)
HELPER_FN_DECL(helper_probe_read_str)
HELPER_FN_DECL(helper_trace_printk)
HELPER_FN_DECL(helper_trace_vprintk)
HELPER_FN_DECL(helper_snprintf)
#undef HELPER_FN_DECL

#endif /* GPUEXT_BPF_HELPERS_IMPL_H */
