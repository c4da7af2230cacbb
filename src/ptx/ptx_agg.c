/* SPDX-License-Identifier: MIT */
/*
 * ptx_agg.c - reductions combined across the lanes that run a program at
 * once (ptx_agg.h).
 */
#include "ptx_agg.h"

#include <ctype.h>
#include <string.h>

/* One reduction of the form ptx_agg handles, as parts of its line. */
struct ptx_agg_red {
	const char *op, *type, *addr, *val; /* addr: the register, then +OFF */
	int op_len, type_len, addr_len, reg_len, val_len;
	unsigned bits;
};

static const char *const ptx_agg_ops[] = {"add", "or", "and", "xor", "min", "max"};
static const char *const ptx_agg_types[] = {"u32", "s32", "b32", "u64", "s64", "b64"};

/* The length of the name s starts with ([A-Za-z0-9_$]). */
static int ptx_agg_name(const char *s)
{
	int n = 0;
	while (isalnum((unsigned char)s[n]) || s[n] == '_' || s[n] == '$')
		n++;
	return n;
}

/* The word at *p among words (then *p past it), else -1. */
static int ptx_agg_word(const char **p, const char *const *words, size_t nwords)
{
	int n = ptx_agg_name(*p);
	for (size_t i = 0; i < nwords; i++)
		if ((size_t)n == strlen(words[i]) && !memcmp(*p, words[i], (size_t)n)) {
			*p += n;
			return (int)i;
		}
	return -1;
}

/* Is the line [s, end) a reduction ptx_agg rewrites?  Then r its parts. */
static int ptx_agg_parse(const char *s, const char *end, struct ptx_agg_red *r)
{
	const char *p = s;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (end - p < 12 || memcmp(p, "red.global.", 11))
		return 0;
	p += 11;
	r->op = p;
	if (ptx_agg_word(&p, ptx_agg_ops, 6) < 0 || *p != '.')
		return 0;
	r->op_len = (int)(p - r->op);
	r->type = ++p;
	if (ptx_agg_word(&p, ptx_agg_types, 6) < 0 || *p != ' ' || p[1] != '[' || p[2] != '%')
		return 0;
	r->type_len = (int)(p - r->type);
	r->bits = r->type[1] == '3' ? 32 : 64;
	r->addr = p + 2;
	r->reg_len = 1 + ptx_agg_name(r->addr + 1);
	p = r->addr + r->reg_len;
	if (*p == '+') { /* +OFF, +-OFF */
		p += 1 + (p[1] == '-');
		while (isdigit((unsigned char)*p))
			p++;
	}
	r->addr_len = (int)(p - r->addr);
	if (r->reg_len < 2 || p[0] != ']' || p[1] != ',' || p[2] != ' ' || p[3] != '%')
		return 0;
	r->val = p + 3;
	r->val_len = 1 + ptx_agg_name(r->val + 1);
	p = r->val + r->val_len;
	if (r->val_len < 2 || *p++ != ';')
		return 0;
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
		p++;
	return p == end;
}

/* The combined form of reduction r (ptx_agg.h), in registers %P_r*
 * declared ahead (ptx_agg_reductions). */
static void ptx_agg_emit(struct ptx_buf *b, const struct ptx_agg_red *r, const char *P)
{
	unsigned w = r->bits;
	int add = r->op_len == 3 && !memcmp(r->op, "add", 3);
	int xor = r->op_len == 3 && !memcmp(r->op, "xor", 3);

	ptx_buf_printf(b, "\tactivemask.b32 %%%s_rm;\n\tmatch.any.sync.b64 %%%s_rg, %.*s, %%%s_rm;\n"
			  "\tmatch.any.sync.b%u %%%s_rv, %.*s, %%%s_rg;\n"
			  "\tmov.u32 %%%s_rl, %%lanemask_lt;\n\tand.b32 %%%s_rl, %%%s_rl, %%%s_rv;\n"
			  "\tsetp.eq.u32 %%%s_rq, %%%s_rl, 0;\n",
		       P, P, r->reg_len, r->addr, P, w, P, r->val_len, r->val, P, P, P, P, P, P,
		       P);
	if (add) {
		ptx_buf_printf(b, "\tpopc.b32 %%%s_rl, %%%s_rv;\n", P, P);
		if (w == 64)
			ptx_buf_printf(b, "\tcvt.u64.u32 %%%s_rx, %%%s_rl;\n"
					  "\tmul.lo.u64 %%%s_rx, %%%s_rx, %.*s;\n",
				       P, P, P, P, r->val_len, r->val);
		else
			ptx_buf_printf(b, "\tmul.lo.u32 %%%s_rl, %%%s_rl, %.*s;\n", P, P, r->val_len,
				       r->val);
	} else if (xor) { /* an even number of the same value cancels */
		ptx_buf_printf(b, "\tpopc.b32 %%%s_rl, %%%s_rv;\n\tand.b32 %%%s_rl, %%%s_rl, 1;\n"
				  "\tsetp.ne.and.u32 %%%s_rq, %%%s_rl, 0, %%%s_rq;\n",
			       P, P, P, P, P, P, P);
	}
	ptx_buf_printf(b, "\t@%%%s_rq red.global.%.*s.%.*s [%.*s], ", P, r->op_len, r->op,
		       r->type_len, r->type, r->addr_len, r->addr);
	if (add)
		ptx_buf_printf(b, "%%%s_r%c;\n", P, w == 64 ? 'x' : 'l');
	else
		ptx_buf_printf(b, "%.*s;\n", r->val_len, r->val);
}

/* Each line of code: a reduction ptx_agg rewrites (emitted into out when
 * out is given), or copied as it is; the count of the first. */
static size_t ptx_agg_pass(struct ptx_buf *out, const char *code, const char *pfx)
{
	size_t count = 0;

	for (const char *s = code; *s;) {
		const char *nl = strchr(s, '\n'), *end = nl ? nl : s + strlen(s);
		struct ptx_agg_red r;
		if (ptx_agg_parse(s, end, &r)) {
			if (out)
				ptx_agg_emit(out, &r, pfx);
			count++;
		} else if (out) {
			ptx_buf_append(out, s, (size_t)(end - s) + (nl != NULL));
		}
		s = nl ? nl + 1 : end;
	}
	return count;
}

void ptx_agg_reductions(struct ptx_buf *out, const char *code, const char *pfx, size_t *n)
{
	size_t count = ptx_agg_pass(NULL, code, pfx);

	/* the registers once, in the scope code is pasted in: every
	 * reduction's combining is over before the next one's starts */
	if (count)
		ptx_buf_printf(out, "\t.reg .b32 %%%s_rm, %%%s_rg, %%%s_rv, %%%s_rl;\n"
				    "\t.reg .b64 %%%s_rx;\n\t.reg .pred %%%s_rq;\n",
			       pfx, pfx, pfx, pfx, pfx, pfx);
	ptx_agg_pass(out, code, pfx);
	if (n)
		*n = count;
}
