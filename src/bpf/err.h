/* SPDX-License-Identifier: MIT */
/*
 * err.h - error messages for the caller.
 *
 * Inside gpuext a failing function returns a negative errno and, when the
 * caller passed a struct err, a message that names what is wrong and where:
 * "prog.bpf.o: section 'uprobe/x': relocation 3: unknown symbol 'foo'".
 * The message is written once, by the function that knows the context; the
 * callers above only pass it on.  A NULL struct err is allowed everywhere.
 */
#ifndef GPUEXT_BPF_ERR_H
#define GPUEXT_BPF_ERR_H

#include <stdarg.h>
#include <stddef.h>

struct err {
	char msg[512];
};

/* Set the message (truncated to fit).  Returns -errnum for `return err_set(...)`. */
__attribute__((format(printf, 3, 4))) int err_set(struct err *e, int errnum,
						   const char *fmt, ...);

/* Prefix an existing message with context: "file.o: " + old message. */
__attribute__((format(printf, 2, 3))) void err_prefix(struct err *e,
						      const char *fmt, ...);

#endif /* GPUEXT_BPF_ERR_H */
