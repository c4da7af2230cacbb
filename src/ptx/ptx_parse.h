/* SPDX-License-Identifier: MIT */
/*
 * ptx_parse.h - the tree ptx_parse() builds (internal to src/ptx).
 *
 * The module keeps its own copy of the text; tokens point into it.  Every
 * statement of the module is one struct ptx_stmt, in order, so printing the
 * statements gives back the module (comments dropped, whitespace between
 * tokens kept as one space or none).  Functions are ranges of statements:
 * the header (everything up to `{`), the body statements, the closing `}`.
 *
 * Invariant: statement token ranges are disjoint and in text order; every
 * token of the module belongs to exactly one statement.
 */
#ifndef GPUEXT_PTX_PARSE_H
#define GPUEXT_PTX_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/err.h"
#include "ptx_inject.h"

enum ptx_tok_kind {
	PTX_TOK_DIRECTIVE, /* .reg .global .b32 (a name starting with '.') */
	PTX_TOK_REG,       /* %r1 %tid.x */
	PTX_TOK_NAME,      /* ld.global.u32 $L__BB0_1 _Z3fooPf */
	PTX_TOK_NUMBER,    /* 16 0x1F 0f3F800000 */
	PTX_TOK_STRING,    /* "file.cu" */
	PTX_TOK_PUNCT,     /* one character: , ; : { } ( ) [ ] + - @ ! < > = | ... */
};

struct ptx_tok {
	uint32_t off, len;  /* in ptx_module.text */
	uint32_t line;      /* 1-based */
	uint8_t kind;       /* enum ptx_tok_kind */
	uint8_t space;      /* whitespace or a comment came before it */
	uint8_t line_start; /* first token of its line */
};

/* Lex text into tokens (malloc'd array).  Errors name the line. */
int ptx_lex(const char *text, size_t len, struct ptx_tok **out, size_t *cnt, struct err *e);

enum ptx_stmt_kind {
	PTX_STMT_DIRECTIVE, /* module-level: .version, .target, variables, .extern ... */
	PTX_STMT_SECTION,   /* .section NAME { ... } kept whole */
	PTX_STMT_FUNC_DECL, /* .func / .entry prototype ending in ';' */
	PTX_STMT_FUNC_HEAD, /* .func / .entry header up to (without) '{' */
	PTX_STMT_FUNC_END,  /* the body's closing '}' */
	PTX_STMT_OPEN,      /* '{' of a nested scope */
	PTX_STMT_CLOSE,     /* '}' of a nested scope */
	PTX_STMT_LABEL,     /* NAME ':' */
	PTX_STMT_DECL,      /* in a body: .reg .local .shared .param .pragma .loc ... */
	PTX_STMT_INSN,      /* [@[!]pred] opcode operands ';' */
};

enum ptx_opnd_kind {
	PTX_OPND_ADDR,  /* [ ... ] */
	PTX_OPND_VEC,   /* { ... } */
	PTX_OPND_LIST,  /* ( ... ) of call */
	PTX_OPND_OTHER, /* register, immediate, name, expression */
};

struct ptx_opnd {
	uint32_t tok, ntok; /* brackets included */
	uint8_t kind;       /* enum ptx_opnd_kind */
};

struct ptx_stmt {
	uint32_t tok, ntok; /* terminator (';' or ':') included */
	uint32_t line;
	uint8_t kind;  /* enum ptx_stmt_kind */
	uint8_t depth; /* scope depth in a body: 1 = the body's own scope */
	/* PTX_STMT_INSN */
	int32_t guard;  /* token of the predicate register, -1: none */
	uint8_t negate; /* @!%p */
	uint32_t opcode;           /* token */
	uint32_t opnd, nopnd;      /* in ptx_module.opnds */
};

struct ptx_func {
	size_t head, end; /* statements: FUNC_HEAD and FUNC_END */
	uint32_t name;    /* token */
	int entry;        /* .entry */
};

struct ptx_module {
	char *text;
	size_t len;
	struct ptx_tok *toks;
	size_t ntok;
	struct ptx_stmt *stmts;
	size_t nstmt;
	struct ptx_opnd *opnds;
	size_t nopnd;
	struct ptx_func *funcs; /* definitions only */
	size_t nfunc;
	char target[32];
	unsigned ver_major, ver_minor;
	int version_stmt; /* statement of .version, -1: none */
	char **kernel_names;
	size_t nkernel;
};

/* printf's "%.*s" arguments for token t of module m. */
#define TOKF(m, t) (int)(m)->toks[t].len, (m)->text + (m)->toks[t].off

/* Does token t spell s? */
int ptx_parse_tok_is(const struct ptx_module *m, uint32_t t, const char *s);

/* Append statement s as text: its tokens, one space where the source had
 * whitespace, then a newline. */
struct ptx_buf;
void ptx_parse_print_stmt(const struct ptx_module *m, const struct ptx_stmt *s,
			  struct ptx_buf *b);
/* Append tokens [t, t + n) the same way, without the newline. */
void ptx_parse_print_toks(const struct ptx_module *m, uint32_t t, uint32_t n,
			  struct ptx_buf *b);

#endif /* GPUEXT_PTX_PARSE_H */
