/* SPDX-License-Identifier: MIT */
/*
 * ptx_params.c - a kernel's parameter list, as the driver lays it out
 * (ptx_params.h).  A parameter is
 *   .param [.align N] .TYPE [.ptr [.SPACE] [.align N]] NAME [ '[' COUNT ']' ]
 * in any order of its directives; lists are separated by commas.
 */
#include "ptx_params.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_parse.h"

unsigned ptx_type_bits(const char *s, size_t n)
{
	static const struct {
		const char *name;
		unsigned bits;
	} types[] = {
		{"b8", 8},      {"u8", 8},      {"s8", 8},      {"b16", 16},     {"u16", 16},
		{"s16", 16},    {"f16", 16},    {"bf16", 16},   {"b32", 32},     {"u32", 32},
		{"s32", 32},    {"f32", 32},    {"f16x2", 32},  {"bf16x2", 32},  {"tf32", 32},
		{"b64", 64},    {"u64", 64},    {"s64", 64},    {"f64", 64},     {"b128", 128},
		{"e4m3x2", 16}, {"e5m2x2", 16}, {"f32x2", 64},  {"u16x2", 32},   {"s16x2", 32},
	};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strlen(types[i].name) == n && !memcmp(types[i].name, s, n))
			return types[i].bits;
	return 0;
}

/* One parameter, tokens [t, end): its size and alignment in bytes. */
static int ptx_param_one(const struct ptx_module *m, uint32_t t, uint32_t end, size_t *size,
			 size_t *align, struct err *e)
{
	unsigned bits = 0;
	size_t count = 1, explicit_align = 0;
	int ptr = 0;

	for (; t < end; t++) {
		const struct ptx_tok *k = &m->toks[t];
		const char *s = m->text + k->off;
		if (k->kind == PTX_TOK_DIRECTIVE) {
			if (ptx_parse_tok_is(m, t, ".align") && t + 1 < end &&
			    m->toks[t + 1].kind == PTX_TOK_NUMBER)
				explicit_align = strtoul(m->text + m->toks[++t].off, NULL, 0);
			else if (ptx_parse_tok_is(m, t, ".ptr"))
				ptr = 1;
			else if (ptx_type_bits(s + 1, k->len - 1))
				bits = ptx_type_bits(s + 1, k->len - 1);
		} else if (ptx_parse_tok_is(m, t, "[")) {
			if (t + 2 >= end || m->toks[t + 1].kind != PTX_TOK_NUMBER ||
			    !ptx_parse_tok_is(m, t + 2, "]"))
				break;
			count = strtoul(m->text + m->toks[t + 1].off, NULL, 0);
			t += 2;
		}
	}
	if (!bits || bits % 8 || !count || t != end)
		return err_set(e, EINVAL, "line %u: a kernel parameter of a type or shape the "
			       "layout rules do not cover", m->toks[end - 1].line);
	*size = bits / 8 * count;
	/* .ptr's .align is the pointee's: the parameter keeps its own */
	*align = explicit_align && !ptr ? explicit_align : bits / 8;
	if (*align & (*align - 1))
		return err_set(e, EINVAL, "line %u: kernel parameter alignment %zu is not a power "
			       "of 2", m->toks[end - 1].line, *align);
	return 0;
}

int ptx_param_layout(const struct ptx_module *m, const struct ptx_func *f,
		     struct ptx_param_layout *l, struct err *e)
{
	const struct ptx_stmt *h = &m->stmts[f->head];
	uint32_t t = f->name + 1, last = h->tok + h->ntok;

	*l = (struct ptx_param_layout){.open = UINT32_MAX, .close = f->name};
	if (t >= last || !ptx_parse_tok_is(m, t, "("))
		return 0; /* `.entry NAME {` or NAME followed by performance directives */
	l->open = t++;
	while (t < last && !ptx_parse_tok_is(m, t, ")")) {
		uint32_t end = t;
		while (end < last && !ptx_parse_tok_is(m, end, ",") &&
		       !ptx_parse_tok_is(m, end, ")"))
			end++;
		if (end == last)
			break;
		size_t size = 0, align = 1;
		int err = ptx_param_one(m, t, end, &size, &align, e);
		if (err)
			return err;
		l->bytes = (l->bytes + align - 1) / align * align + size;
		l->count++;
		t = ptx_parse_tok_is(m, end, ",") ? end + 1 : end;
	}
	if (t >= last)
		return err_set(e, EINVAL, "line %u: the kernel's parameter list has no ')'",
			       h->line);
	l->close = t;
	return 0;
}
