/* SPDX-License-Identifier: MIT */
/*
 * helpers_trace.c - trace_printk, trace_vprintk and snprintf: Linux's
 * format rules, and the trace sink.
 *
 * Linux accepts a deliberately small format language (bpf_bprintf_prepare):
 * printable ASCII only; conversions %d %i %u %x %X with the l and ll
 * modifiers, %c, %s, %p (and %pK %px, %pks %pus for strings); flags
 * "0 +-" and a width, but no precision; at most one argument per
 * conversion, and no more conversions than arguments.  Anything else makes
 * the helper return -EINVAL without output.  Pointer arguments of %s are
 * read with helper_safe_read_str, so a bad pointer prints as an empty
 * string instead of crashing.  %p prints the raw address in hexadecimal
 * with 0x (Linux hashes it; a user-space runtime has nothing to hide from
 * its own user).
 */
#include "helpers.h"
#include "helpers_impl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum {
	TRACE_BUF_SIZE = 1024, /* Linux's BPF_TRACE_PRINTK_SIZE */
	TRACE_STR_MAX = 512,   /* longest %s argument copied */
	TRACE_PRINTK_ARGS = 3,
	TRACE_MAX_ARGS = 12,   /* MAX_BPRINTF_VARARGS */
};

/* One line per call, as each call is one event in Linux's trace_pipe. */
static void trace_write_stderr(void *arg, const char *line, size_t len)
{
	fprintf(stderr, "%.*s%s", (int)len, line, len && line[len - 1] == '\n' ? "" : "\n");
}

static _Thread_local struct helper_trace_sink trace_sink = {trace_write_stderr, NULL};

void helper_set_trace_sink(const struct helper_trace_sink *sink)
{
	if (sink && sink->write)
		trace_sink = *sink;
	else
		trace_sink = (struct helper_trace_sink){trace_write_stderr, NULL};
}

/* Appends with snprintf semantics: len counts what would have been written. */
struct trace_out {
	char *buf;
	size_t size, len;
};

__attribute__((format(printf, 2, 3))) static void trace_put(struct trace_out *o,
							   const char *fmt, ...)
{
	size_t room = o->len < o->size ? o->size - o->len : 0;
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

/*
 * Format fmt (fmt_len bytes, which must include its NUL) with args into
 * out (out_size bytes, always terminated when out_size > 0).  Returns the
 * length of the full result without the NUL, or -EINVAL.
 */
static long trace_format(char *out, size_t out_size, const char *fmt, size_t fmt_len,
			 const uint64_t *args, unsigned nargs)
{
	struct trace_out o = {out, out_size, 0};
	unsigned used = 0;

	if (!fmt_len || fmt[fmt_len - 1] != '\0')
		return -EINVAL;
	if (out_size)
		out[0] = '\0';
	/* Validate everything before printing anything. */
	for (int pass = 0; pass < 2; pass++) {
		used = 0;
		o.len = 0;
		for (size_t i = 0; fmt[i]; i++) {
			unsigned char c = (unsigned char)fmt[i];
			if (c >= 0x80 || (c < 0x20 && c != '\t' && c != '\n' && c != '\v' &&
					  c != '\f' && c != '\r') || c == 0x7f)
				return -EINVAL;
			if (c != '%') {
				if (pass)
					trace_put(&o, "%c", c);
				continue;
			}
			if (fmt[i + 1] == '%') {
				if (pass)
					trace_put(&o, "%%");
				i++;
				continue;
			}
			if (used >= nargs)
				return -EINVAL;
			/* "%" flags width: the numeric spec takes all flags, %s %c %p
			 * only '-' (the others are undefined for them in C). */
			char spec[32], text_spec[32];
			size_t n = 0, tn = 0;
			spec[n++] = text_spec[tn++] = '%';
			for (i++; fmt[i] && strchr("0+- ", fmt[i]) && n < 8; i++) {
				spec[n++] = fmt[i];
				if (fmt[i] == '-')
					text_spec[tn++] = '-';
			}
			if (fmt[i] >= '1' && fmt[i] <= '9')
				for (; fmt[i] >= '0' && fmt[i] <= '9' && n < 16; i++)
					spec[n++] = text_spec[tn++] = fmt[i];
			if (fmt[i] >= '0' && fmt[i] <= '9')
				return -EINVAL; /* width too long */
			memcpy(text_spec + tn, "s", 2);
			uint64_t arg = args[used++];
			char conv = fmt[i];
			if (conv == 'p') {
				if ((fmt[i + 1] == 'k' || fmt[i + 1] == 'u') && fmt[i + 2] == 's') {
					i += 2;
					conv = 's';
				} else {
					int plain = 1;
					if (fmt[i + 1] == 'K' || fmt[i + 1] == 'x')
						i++, plain = 0;
					else if (fmt[i + 1] && strchr("BiIhMmSsUu", fmt[i + 1]))
						return -EINVAL; /* %pB, %pI4, ...: not supported */
					if (pass) {
						char hex[24];
						/* Linux prints a NULL %p as "(null)". */
						snprintf(hex, sizeof(hex), plain && !arg ? "(null)" : "0x%llx",
							 (unsigned long long)arg);
						trace_put(&o, text_spec, hex);
					}
					continue;
				}
			}
			if (conv == 's') {
				if (pass) {
					char str[TRACE_STR_MAX];
					if (helper_safe_read_str(str, sizeof(str),
								 (const void *)(uintptr_t)arg) < 0)
						str[0] = '\0';
					trace_put(&o, text_spec, str);
				}
				continue;
			}
			if (conv == 'c') {
				if (pass) {
					char ch[2] = {(char)arg, '\0'};
					trace_put(&o, text_spec, ch);
				}
				continue;
			}
			int longs = 0;
			while (fmt[i] == 'l' && longs < 2)
				longs++, i++;
			conv = fmt[i];
			if (!conv || !strchr("diuxX", conv))
				return -EINVAL;
			if (!pass)
				continue;
			memcpy(spec + n, "ll", 2);
			spec[n + 2] = conv;
			spec[n + 3] = '\0';
			int is_signed = conv == 'd' || conv == 'i';
			/* int arguments are the low 32 bits, like the kernel's va_list. */
			if (longs == 0 && is_signed)
				trace_put(&o, spec, (long long)(int32_t)arg);
			else if (longs == 0)
				trace_put(&o, spec, (unsigned long long)(uint32_t)arg);
			else if (is_signed)
				trace_put(&o, spec, (long long)arg);
			else
				trace_put(&o, spec, (unsigned long long)arg);
		}
	}
	return (long)o.len;
}

static uint64_t trace_emit(const char *fmt, uint32_t fmt_size, const uint64_t *args,
			   unsigned nargs)
{
	char buf[TRACE_BUF_SIZE];
	long n = trace_format(buf, sizeof(buf), fmt, fmt_size, args, nargs);

	if (n < 0)
		return (uint64_t)n;
	size_t len = (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1;
	trace_sink.write(trace_sink.arg, buf, len);
	return len;
}

uint64_t helper_trace_printk(uint64_t fmt, uint64_t fmt_size, uint64_t a1, uint64_t a2,
			     uint64_t a3)
{
	const uint64_t args[TRACE_PRINTK_ARGS] = {a1, a2, a3};
	return trace_emit((const char *)(uintptr_t)fmt, (uint32_t)fmt_size, args,
			  TRACE_PRINTK_ARGS);
}

/* The arguments of vprintk and snprintf: an array of u64, 8 bytes each. */
static int trace_args(uint64_t data, uint32_t data_len, uint64_t *args, unsigned *nargs)
{
	if (data_len % 8 || data_len > TRACE_MAX_ARGS * 8 || (data_len && !data))
		return -EINVAL;
	*nargs = data_len / 8;
	if (data_len)
		memcpy(args, (const void *)(uintptr_t)data, data_len);
	return 0;
}

uint64_t helper_trace_vprintk(uint64_t fmt, uint64_t fmt_size, uint64_t data, uint64_t data_len,
			      uint64_t r5)
{
	uint64_t args[TRACE_MAX_ARGS];
	unsigned nargs;
	int err = trace_args(data, (uint32_t)data_len, args, &nargs);

	if (err)
		return (uint64_t)(int64_t)err;
	return trace_emit((const char *)(uintptr_t)fmt, (uint32_t)fmt_size, args, nargs);
}

uint64_t helper_snprintf(uint64_t str, uint64_t str_size, uint64_t fmt, uint64_t data,
			 uint64_t data_len)
{
	uint64_t args[TRACE_MAX_ARGS];
	unsigned nargs;
	int err = trace_args(data, (uint32_t)data_len, args, &nargs);
	const char *f = (const char *)(uintptr_t)fmt;

	if (err)
		return (uint64_t)(int64_t)err;
	/* The verifier proved fmt a NUL-terminated constant string. */
	long n = trace_format((char *)(uintptr_t)str, (uint32_t)str_size, f, strlen(f) + 1, args,
			      nargs);
	/* Linux returns the size the whole result needs, NUL included. */
	return n < 0 ? (uint64_t)n : (uint64_t)n + 1;
}
