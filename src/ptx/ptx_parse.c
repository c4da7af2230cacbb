/* SPDX-License-Identifier: MIT */
/*
 * ptx_parse.c - a PTX module into statements, and back into text.
 *
 * Module level: newline-terminated directives (.version, .target,
 * .address_size, .file, .loc), ';'-terminated ones (variables with their
 * initialisers, .extern/.weak/.common declarations, function prototypes),
 * `.section NAME { ... }` kept whole, and function definitions: a header
 * (linkage, .func/.entry, return and parameter lists, performance
 * directives such as .maxntid) up to '{', then the body.  Body: nested
 * scopes, labels, declarations, and instructions with an optional guard,
 * an opcode token and operands split at the top-level commas.  Opcodes
 * the injector has no use for (cp.async, wgmma, ...) are kept as they are.
 */
#include "ptx_parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_buf.h"

#define PTX_MAX_DEPTH 200

struct ptx_parser {
	struct ptx_module *m;
	size_t cap_stmt, cap_opnd, cap_func;
	struct err *e;
};

int ptx_parse_tok_is(const struct ptx_module *m, uint32_t t, const char *s)
{
	size_t n = strlen(s);
	return t < m->ntok && m->toks[t].len == n && !memcmp(m->text + m->toks[t].off, s, n);
}

/* "'tok'" of a token for messages (at most 40 characters). */
static const char *ptx_parse_tok_str(const struct ptx_module *m, size_t t, char *buf,
				     size_t len)
{
	if (t >= m->ntok) {
		snprintf(buf, len, "end of text");
		return buf;
	}
	int n = (int)(m->toks[t].len > 40 ? 40 : m->toks[t].len);
	snprintf(buf, len, "'%.*s'", n, m->text + m->toks[t].off);
	return buf;
}

static uint32_t ptx_parse_line(const struct ptx_module *m, size_t t)
{
	if (t < m->ntok)
		return m->toks[t].line;
	return m->ntok ? m->toks[m->ntok - 1].line : 1;
}

static int ptx_parse_grow(void **arr, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 256;
	void *p = realloc(*arr, ncap * size);
	if (!p)
		return -1;
	*arr = p;
	*cap = ncap;
	return 0;
}

static struct ptx_stmt *ptx_parse_add_stmt(struct ptx_parser *p, enum ptx_stmt_kind kind,
					   size_t tok, size_t ntok, unsigned depth)
{
	struct ptx_module *m = p->m;

	if (ptx_parse_grow((void **)&m->stmts, &p->cap_stmt, m->nstmt, sizeof(*m->stmts))) {
		err_set(p->e, ENOMEM, "out of memory parsing PTX");
		return NULL;
	}
	struct ptx_stmt *s = &m->stmts[m->nstmt++];
	memset(s, 0, sizeof(*s));
	s->kind = (uint8_t)kind;
	s->tok = (uint32_t)tok;
	s->ntok = (uint32_t)ntok;
	s->line = ptx_parse_line(m, tok);
	s->depth = (uint8_t)depth;
	s->guard = -1;
	return s;
}

static int ptx_parse_is_punct(const struct ptx_module *m, size_t t, char c)
{
	return t < m->ntok && m->toks[t].kind == PTX_TOK_PUNCT && m->text[m->toks[t].off] == c;
}

/* Directives that end at the end of their line instead of at ';'. */
static int ptx_parse_line_directive(const struct ptx_module *m, size_t t)
{
	static const char *const names[] = {".version", ".target", ".address_size", ".file",
					    ".loc"};
	if (m->toks[t].kind != PTX_TOK_DIRECTIVE)
		return 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (ptx_parse_tok_is(m, (uint32_t)t, names[i]))
			return 1;
	return 0;
}

static size_t ptx_parse_line_end(const struct ptx_module *m, size_t t)
{
	size_t j = t + 1;
	while (j < m->ntok && !m->toks[j].line_start)
		j++;
	return j;
}

static void ptx_parse_header_directive(struct ptx_module *m, size_t t, size_t end)
{
	if (ptx_parse_tok_is(m, (uint32_t)t, ".target") && t + 1 < end &&
	    m->toks[t + 1].kind == PTX_TOK_NAME) {
		const struct ptx_tok *k = &m->toks[t + 1];
		snprintf(m->target, sizeof(m->target), "%.*s",
			 (int)(k->len < sizeof(m->target) ? k->len : sizeof(m->target) - 1),
			 m->text + k->off);
	}
	if (ptx_parse_tok_is(m, (uint32_t)t, ".version") && t + 1 < end &&
	    m->toks[t + 1].kind == PTX_TOK_NUMBER) {
		char v[16];
		const struct ptx_tok *k = &m->toks[t + 1];
		unsigned major = 0, minor = 0;
		snprintf(v, sizeof(v), "%.*s", (int)(k->len < 15 ? k->len : 15), m->text + k->off);
		if (sscanf(v, "%u.%u", &major, &minor) == 2) {
			m->ver_major = major;
			m->ver_minor = minor;
			m->version_stmt = (int)m->nstmt;
		}
	}
}

/* Operands of the instruction whose opcode is token t, up to ';'. */
static int ptx_parse_operands(struct ptx_parser *p, struct ptx_stmt *s, size_t t, size_t *end)
{
	struct ptx_module *m = p->m;
	char stack[PTX_MAX_DEPTH], buf[48];
	size_t depth = 0, start = t + 1, j;

	s->opnd = (uint32_t)m->nopnd;
	for (j = t + 1; j < m->ntok; j++) {
		const struct ptx_tok *k = &m->toks[j];
		char c = k->kind == PTX_TOK_PUNCT ? m->text[k->off] : 0;
		if (c == '(' || c == '[' || c == '{') {
			if (depth == PTX_MAX_DEPTH)
				return err_set(p->e, EINVAL, "line %u: operands nested too deeply",
					       k->line);
			stack[depth++] = c == '(' ? ')' : c == '[' ? ']' : '}';
			continue;
		}
		if (c == '}' && !depth)
			break; /* a ';' is missing: reported below */
		if (c == ')' || c == ']' || c == '}') {
			if (!depth || stack[depth - 1] != c)
				return err_set(p->e, EINVAL, "line %u: unbalanced '%c' in operands",
					       k->line, c);
			depth--;
			continue;
		}
		if (c == ';' && depth)
			return err_set(p->e, EINVAL, "line %u: missing '%c' before ';'", k->line,
				       stack[depth - 1]);
		if (depth || (c != ',' && c != ';'))
			continue;
		if (j == start) {
			if (c == ';' && j == t + 1)
				break; /* no operands */
			return err_set(p->e, EINVAL, "line %u: empty operand", k->line);
		}
		if (ptx_parse_grow((void **)&m->opnds, &p->cap_opnd, m->nopnd, sizeof(*m->opnds)))
			return err_set(p->e, ENOMEM, "out of memory parsing PTX");
		struct ptx_opnd *o = &m->opnds[m->nopnd++];
		o->tok = (uint32_t)start;
		o->ntok = (uint32_t)(j - start);
		o->kind = ptx_parse_is_punct(m, start, '[') ? PTX_OPND_ADDR
			  : ptx_parse_is_punct(m, start, '{') ? PTX_OPND_VEC
			  : ptx_parse_is_punct(m, start, '(') ? PTX_OPND_LIST
							     : PTX_OPND_OTHER;
		s->nopnd++;
		start = j + 1;
		if (c == ';')
			break;
	}
	if (j >= m->ntok || !ptx_parse_is_punct(m, j, ';'))
		return err_set(p->e, EINVAL, "line %u: instruction %s not terminated by ';'",
			       m->toks[t].line, ptx_parse_tok_str(m, t, buf, sizeof(buf)));
	*end = j + 1;
	return 0;
}

/* One statement of a body at token t; *next is the token after it. */
static int ptx_parse_body_stmt(struct ptx_parser *p, size_t t, unsigned *depth, size_t *next,
			       int *done)
{
	struct ptx_module *m = p->m;
	const struct ptx_tok *k = &m->toks[t];
	struct ptx_stmt *s;
	char buf[48];

	if (ptx_parse_is_punct(m, t, '{')) {
		if (*depth >= PTX_MAX_DEPTH)
			return err_set(p->e, EINVAL, "line %u: scopes nested too deeply", k->line);
		if (!ptx_parse_add_stmt(p, PTX_STMT_OPEN, t, 1, *depth))
			return -ENOMEM;
		++*depth;
		*next = t + 1;
		return 0;
	}
	if (ptx_parse_is_punct(m, t, '}')) {
		--*depth;
		*done = *depth == 0;
		if (!ptx_parse_add_stmt(p, *done ? PTX_STMT_FUNC_END : PTX_STMT_CLOSE, t, 1, *depth))
			return -ENOMEM;
		*next = t + 1;
		return 0;
	}
	if (ptx_parse_line_directive(m, t)) {
		size_t end = ptx_parse_line_end(m, t);
		if (!ptx_parse_add_stmt(p, PTX_STMT_DECL, t, end - t, *depth))
			return -ENOMEM;
		*next = end;
		return 0;
	}
	if (k->kind == PTX_TOK_NAME && ptx_parse_is_punct(m, t + 1, ':')) {
		if (!ptx_parse_add_stmt(p, PTX_STMT_LABEL, t, 2, *depth))
			return -ENOMEM;
		*next = t + 2;
		return 0;
	}
	if (k->kind == PTX_TOK_DIRECTIVE) {
		size_t j = t, nest = 0;
		for (; j < m->ntok; j++) {
			const struct ptx_tok *q = &m->toks[j];
			char c = q->kind == PTX_TOK_PUNCT ? m->text[q->off] : 0;
			if (c == '(' || c == '[' || c == '{')
				nest++;
			else if ((c == ')' || c == ']' || c == '}') && nest)
				nest--;
			else if (c == '}' || (c == ';' && !nest))
				break;
		}
		if (j >= m->ntok || !ptx_parse_is_punct(m, j, ';'))
			return err_set(p->e, EINVAL, "line %u: declaration %s not terminated by ';'",
				       k->line, ptx_parse_tok_str(m, t, buf, sizeof(buf)));
		if (!ptx_parse_add_stmt(p, PTX_STMT_DECL, t, j + 1 - t, *depth))
			return -ENOMEM;
		*next = j + 1;
		return 0;
	}
	int32_t guard = -1;
	uint8_t negate = 0;
	size_t op = t;
	if (ptx_parse_is_punct(m, t, '@')) {
		op = t + 1;
		if (ptx_parse_is_punct(m, op, '!')) {
			negate = 1;
			op++;
		}
		if (op >= m->ntok ||
		    (m->toks[op].kind != PTX_TOK_REG && m->toks[op].kind != PTX_TOK_NAME))
			return err_set(p->e, EINVAL, "line %u: expected a predicate after '@', "
				       "found %s", k->line, ptx_parse_tok_str(m, op, buf, sizeof(buf)));
		guard = (int32_t)op;
		op++;
	}
	if (op >= m->ntok || m->toks[op].kind != PTX_TOK_NAME)
		return err_set(p->e, EINVAL, "line %u: expected an instruction, found %s",
			       ptx_parse_line(m, op), ptx_parse_tok_str(m, op, buf, sizeof(buf)));
	if (!(s = ptx_parse_add_stmt(p, PTX_STMT_INSN, t, 0, *depth)))
		return -ENOMEM;
	s->guard = guard;
	s->negate = negate;
	s->opcode = (uint32_t)op;
	size_t end = 0;
	int err = ptx_parse_operands(p, s, op, &end);
	if (err)
		return err;
	s->ntok = (uint32_t)(end - t);
	*next = end;
	return 0;
}

/* A function header [t, brace) and its body from brace on. */
static int ptx_parse_function(struct ptx_parser *p, size_t t, size_t brace, size_t kw,
			      size_t *next)
{
	struct ptx_module *m = p->m;
	size_t name = kw + 1;
	char buf[48];

	if (ptx_parse_is_punct(m, name, '(')) { /* .func (return list) NAME */
		size_t nest = 0;
		for (; name < brace; name++) {
			if (ptx_parse_is_punct(m, name, '('))
				nest++;
			else if (ptx_parse_is_punct(m, name, ')') && --nest == 0)
				break;
		}
		name++;
	}
	if (name >= brace || m->toks[name].kind != PTX_TOK_NAME)
		return err_set(p->e, EINVAL, "line %u: expected a function name, found %s",
			       ptx_parse_line(m, name), ptx_parse_tok_str(m, name, buf, sizeof(buf)));
	size_t head = m->nstmt;
	if (!ptx_parse_add_stmt(p, PTX_STMT_FUNC_HEAD, t, brace + 1 - t, 0))
		return -ENOMEM;
	unsigned depth = 1;
	int done = 0;
	size_t j = brace + 1;
	while (!done) {
		if (j >= m->ntok)
			return err_set(p->e, EINVAL, "line %u: function %s has no closing '}'",
				       m->toks[name].line,
				       ptx_parse_tok_str(m, name, buf, sizeof(buf)));
		int err = ptx_parse_body_stmt(p, j, &depth, &j, &done);
		if (err)
			return err;
	}
	if (ptx_parse_grow((void **)&m->funcs, &p->cap_func, m->nfunc, sizeof(*m->funcs)))
		return err_set(p->e, ENOMEM, "out of memory parsing PTX");
	struct ptx_func *f = &m->funcs[m->nfunc++];
	f->head = head;
	f->end = m->nstmt - 1;
	f->name = (uint32_t)name;
	f->entry = ptx_parse_tok_is(m, (uint32_t)kw, ".entry");
	*next = j;
	return 0;
}

/* One module-level statement at token t. */
static int ptx_parse_top_stmt(struct ptx_parser *p, size_t t, size_t *next)
{
	struct ptx_module *m = p->m;
	size_t j, paren = 0, brace = 0, kw = 0;
	int init = 0, func = 0;
	char buf[48];

	if (ptx_parse_line_directive(m, t)) {
		size_t end = ptx_parse_line_end(m, t);
		ptx_parse_header_directive(m, t, end);
		if (!ptx_parse_add_stmt(p, PTX_STMT_DIRECTIVE, t, end - t, 0))
			return -ENOMEM;
		*next = end;
		return 0;
	}
	for (j = t; j < m->ntok; j++) {
		const struct ptx_tok *k = &m->toks[j];
		char c = k->kind == PTX_TOK_PUNCT ? m->text[k->off] : 0;
		if (!paren && !brace && !init && !func &&
		    (ptx_parse_tok_is(m, (uint32_t)j, ".func") ||
		     ptx_parse_tok_is(m, (uint32_t)j, ".entry"))) {
			func = 1;
			kw = j;
		}
		if (c == '=' && !paren && !brace)
			init = 1;
		else if (c == '(' || c == '[')
			paren++;
		else if ((c == ')' || c == ']') && paren)
			paren--;
		else if (c == '{' && !paren && !brace && !init) {
			if (func)
				return ptx_parse_function(p, t, j, kw, next);
			if (ptx_parse_tok_is(m, (uint32_t)t, ".section")) {
				size_t nest = 0;
				for (; j < m->ntok; j++) {
					if (ptx_parse_is_punct(m, j, '{'))
						nest++;
					else if (ptx_parse_is_punct(m, j, '}') && --nest == 0)
						break;
				}
				if (j >= m->ntok)
					return err_set(p->e, EINVAL, "line %u: section has no "
						       "closing '}'", m->toks[t].line);
				if (!ptx_parse_add_stmt(p, PTX_STMT_SECTION, t, j + 1 - t, 0))
					return -ENOMEM;
				*next = j + 1;
				return 0;
			}
			return err_set(p->e, EINVAL, "line %u: '{' outside a function", k->line);
		} else if (c == '{')
			brace++;
		else if (c == '}') {
			if (!brace)
				return err_set(p->e, EINVAL, "line %u: unexpected '}'", k->line);
			brace--;
		} else if (c == ';' && !paren && !brace) {
			if (!ptx_parse_add_stmt(p, func ? PTX_STMT_FUNC_DECL : PTX_STMT_DIRECTIVE, t,
						j + 1 - t, 0))
				return -ENOMEM;
			*next = j + 1;
			return 0;
		}
	}
	return err_set(p->e, EINVAL, "line %u: statement starting with %s not terminated",
		       m->toks[t].line, ptx_parse_tok_str(m, t, buf, sizeof(buf)));
}

static int ptx_parse_kernels(struct ptx_module *m, struct err *e)
{
	size_t n = 0;
	for (size_t i = 0; i < m->nfunc; i++)
		n += (size_t)m->funcs[i].entry;
	m->kernel_names = calloc(n ? n : 1, sizeof(char *));
	if (!m->kernel_names)
		return err_set(e, ENOMEM, "out of memory parsing PTX");
	for (size_t i = 0; i < m->nfunc; i++) {
		if (!m->funcs[i].entry)
			continue;
		const struct ptx_tok *k = &m->toks[m->funcs[i].name];
		m->kernel_names[m->nkernel] = strndup(m->text + k->off, k->len);
		if (!m->kernel_names[m->nkernel])
			return err_set(e, ENOMEM, "out of memory parsing PTX");
		m->nkernel++;
	}
	return 0;
}

int ptx_parse(const char *text, size_t len, struct ptx_module **out, struct err *e)
{
	struct ptx_module *m = calloc(1, sizeof(*m));
	struct ptx_parser p = {.m = m, .e = e};
	int err;

	*out = NULL;
	if (!m)
		return err_set(e, ENOMEM, "out of memory parsing PTX");
	m->version_stmt = -1;
	m->text = malloc(len + 1);
	if (!m->text) {
		free(m);
		return err_set(e, ENOMEM, "out of memory parsing PTX");
	}
	memcpy(m->text, text, len);
	m->text[len] = 0;
	m->len = len;
	err = ptx_lex(m->text, len, &m->toks, &m->ntok, e);
	for (size_t t = 0; !err && t < m->ntok;)
		err = ptx_parse_top_stmt(&p, t, &t);
	if (!err)
		err = ptx_parse_kernels(m, e);
	if (err) {
		ptx_module_free(m);
		return err;
	}
	*out = m;
	return 0;
}

void ptx_module_free(struct ptx_module *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nkernel; i++)
		free(m->kernel_names[i]);
	free(m->kernel_names);
	free(m->funcs);
	free(m->opnds);
	free(m->stmts);
	free(m->toks);
	free(m->text);
	free(m);
}

const char *ptx_module_target(const struct ptx_module *m)
{
	return m->target;
}

void ptx_module_version(const struct ptx_module *m, unsigned *major, unsigned *minor)
{
	*major = m->ver_major;
	*minor = m->ver_minor;
}

size_t ptx_module_kernel_count(const struct ptx_module *m)
{
	return m->nkernel;
}

const char *ptx_module_kernel_name(const struct ptx_module *m, size_t i)
{
	return i < m->nkernel ? m->kernel_names[i] : NULL;
}

void ptx_parse_print_toks(const struct ptx_module *m, uint32_t t, uint32_t n,
			  struct ptx_buf *b)
{
	for (uint32_t i = t; i < t + n && i < m->ntok; i++) {
		const struct ptx_tok *k = &m->toks[i];
		if (i > t && k->space)
			ptx_buf_append(b, " ", 1);
		ptx_buf_append(b, m->text + k->off, k->len);
	}
}

void ptx_parse_print_stmt(const struct ptx_module *m, const struct ptx_stmt *s,
			  struct ptx_buf *b)
{
	if (s->depth && s->kind != PTX_STMT_LABEL)
		ptx_buf_append(b, "\t", 1);
	ptx_parse_print_toks(m, s->tok, s->ntok, b);
	ptx_buf_append(b, "\n", 1);
}

int ptx_print(const struct ptx_module *m, char **out, size_t *out_len, struct err *e)
{
	struct ptx_buf b = {0};

	for (size_t i = 0; i < m->nstmt; i++)
		ptx_parse_print_stmt(m, &m->stmts[i], &b);
	*out = ptx_buf_take(&b, out_len);
	if (!*out)
		return err_set(e, ENOMEM, "out of memory printing PTX");
	return 0;
}
