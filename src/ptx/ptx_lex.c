/* SPDX-License-Identifier: MIT */
/*
 * ptx_lex.c - PTX text into tokens.
 *
 * Names take '.' and "::" inside them, so that an opcode with its
 * modifiers (`ld.global.L1::evict_last.v4.f32`) and a special register
 * (`%tid.x`) are one token each.  Comments (// and block comments) are
 * dropped but count as whitespace, which the printer keeps as one space.
 */
#include "ptx_parse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int ptx_lex_name_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' ||
	       c == '.' || c == '%';
}

static int ptx_lex_name_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$' || c == '.';
}

static int ptx_lex_punct(int c)
{
	return c && strchr(",;:{}()[]+-@!<>=|*/&^~?", c) != NULL;
}

int ptx_lex(const char *text, size_t len, struct ptx_tok **out, size_t *cnt, struct err *e)
{
	struct ptx_tok *toks = NULL;
	size_t n = 0, cap = 0, i = 0;
	uint32_t line = 1;
	int space = 1, line_start = 1;

	*out = NULL;
	*cnt = 0;
	if (len > UINT32_MAX / 2)
		return err_set(e, EFBIG, "PTX text of %zu bytes is too large", len);
	while (i < len) {
		unsigned char c = (unsigned char)text[i];
		if (c == '\n') {
			line++;
			i++;
			space = line_start = 1;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
			i++;
			space = 1;
			continue;
		}
		if (c == '/' && i + 1 < len && text[i + 1] == '/') {
			while (i < len && text[i] != '\n')
				i++;
			space = 1;
			continue;
		}
		if (c == '/' && i + 1 < len && text[i + 1] == '*') {
			uint32_t start = line;
			i += 2;
			while (i + 1 < len && !(text[i] == '*' && text[i + 1] == '/')) {
				if (text[i] == '\n') {
					line++;
					line_start = 1;
				}
				i++;
			}
			if (i + 1 >= len) {
				free(toks);
				return err_set(e, EINVAL, "line %u: unterminated comment", start);
			}
			i += 2;
			space = 1;
			continue;
		}
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 1024;
			struct ptx_tok *t = realloc(toks, ncap * sizeof(*t));
			if (!t) {
				free(toks);
				return err_set(e, ENOMEM, "out of memory lexing PTX");
			}
			toks = t;
			cap = ncap;
		}
		struct ptx_tok *t = &toks[n];
		size_t start = i;
		t->line = line;
		t->space = (uint8_t)space;
		t->line_start = (uint8_t)line_start;
		if (ptx_lex_name_start(c)) {
			t->kind = c == '.' ? PTX_TOK_DIRECTIVE : c == '%' ? PTX_TOK_REG : PTX_TOK_NAME;
			i++;
			for (;;) {
				if (i < len && ptx_lex_name_char((unsigned char)text[i]))
					i++;
				else if (i + 2 < len && text[i] == ':' && text[i + 1] == ':' &&
					 ptx_lex_name_char((unsigned char)text[i + 2]))
					i += 2;
				else
					break;
			}
		} else if (c >= '0' && c <= '9') {
			t->kind = PTX_TOK_NUMBER;
			while (i < len && ptx_lex_name_char((unsigned char)text[i]))
				i++;
		} else if (c == '"') {
			t->kind = PTX_TOK_STRING;
			i++;
			/* a string ends on its line; an escape never takes a
			 * newline or a NUL into it */
			while (i < len && text[i] != '"' && text[i] != '\n' && text[i] != '\0')
				i += text[i] == '\\' && i + 1 < len && text[i + 1] != '\n' &&
					     text[i + 1] != '\0' ? 2 : 1;
			if (i >= len || text[i] != '"') {
				free(toks);
				return err_set(e, EINVAL, "line %u: unterminated string", line);
			}
			i++;
		} else if (ptx_lex_punct(c)) {
			t->kind = PTX_TOK_PUNCT;
			i++;
		} else {
			free(toks);
			if (c >= 0x20 && c < 0x7f)
				return err_set(e, EINVAL, "line %u: unexpected character '%c'", line, c);
			return err_set(e, EINVAL, "line %u: unexpected byte 0x%02x", line, c);
		}
		t->off = (uint32_t)start;
		t->len = (uint32_t)(i - start);
		n++;
		space = line_start = 0;
	}
	*out = toks;
	*cnt = n;
	return 0;
}
