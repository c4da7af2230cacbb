/* SPDX-License-Identifier: MIT */
/*
 * conformance.c - parse shared/conformance case files and run them on a
 * backend.
 */
#include "conformance.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

enum conf_section { SEC_NONE, SEC_ASM, SEC_PROGRAM, SEC_MEM, SEC_RESULT };

/* Growable byte buffer for the hex sections and the asm text. */
struct conf_buf {
	uint8_t *data;
	size_t len, cap;
};

static int conf_buf_add(struct conf_buf *b, const void *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		uint8_t *d = realloc(b->data, cap);
		if (!d)
			return -ENOMEM;
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = 0; /* the asm text is used as a string */
	return 0;
}

/* "b7 01 00 00" -> bytes appended to b. */
static int conf_hex_line(const char *path, size_t lineno, const char *s, struct conf_buf *b,
			 struct err *e)
{
	while (*s) {
		if (isspace((unsigned char)*s)) {
			s++;
			continue;
		}
		if (!isxdigit((unsigned char)s[0]) || !isxdigit((unsigned char)s[1]) ||
		    (s[2] && !isspace((unsigned char)s[2])))
			return err_set(e, EINVAL, "%s: line %zu: expected hex bytes like 'b7 01', got '%.16s'",
				       path, lineno, s);
		char hex[3] = {s[0], s[1], 0};
		uint8_t byte = (uint8_t)strtoul(hex, NULL, 16);
		if (conf_buf_add(b, &byte, 1))
			return err_set(e, ENOMEM, "%s: out of memory", path);
		s += 2;
	}
	return 0;
}

static const char *conf_base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

int conf_case_parse(const char *path, const char *text, struct conf_case *c, struct err *e)
{
	struct conf_buf asm_buf = {0}, prog = {0}, mem = {0};
	enum conf_section sec = SEC_NONE;
	int have_prog = 0, have_result = 0, ret = 0;
	size_t lineno = 0;
	const char *line = text;

	memset(c, 0, sizeof(*c));
	while (*line && !ret) {
		size_t len = strcspn(line, "\n");
		char buf[512];
		lineno++;
		if (len >= sizeof(buf)) {
			ret = err_set(e, EINVAL, "%s: line %zu: line too long", path, lineno);
			break;
		}
		memcpy(buf, line, len);
		buf[len] = '\0';
		if (len && buf[len - 1] == '\r')
			buf[len - 1] = '\0';
		line += len + (line[len] == '\n');

		if (!strncmp(buf, "-- ", 3)) {
			const char *name = buf + 3;
			if (!strcmp(name, "asm")) {
				sec = SEC_ASM;
				c->asm_line = lineno + 1;
			} else if (!strcmp(name, "program")) {
				sec = SEC_PROGRAM;
				have_prog = 1;
			} else if (!strcmp(name, "mem")) {
				sec = SEC_MEM;
			} else if (!strcmp(name, "result")) {
				sec = SEC_RESULT;
			} else {
				ret = err_set(e, EINVAL, "%s: line %zu: unknown section '%s'", path,
					      lineno, name);
			}
			continue;
		}
		switch (sec) {
		case SEC_NONE:
			break; /* the header comments */
		case SEC_ASM:
			if (conf_buf_add(&asm_buf, buf, strlen(buf)) || conf_buf_add(&asm_buf, "\n", 1))
				ret = err_set(e, ENOMEM, "%s: out of memory", path);
			break;
		case SEC_PROGRAM:
		case SEC_MEM:
			if (buf[0] != '#')
				ret = conf_hex_line(path, lineno, buf, sec == SEC_MEM ? &mem : &prog, e);
			break;
		case SEC_RESULT: {
			char *s = buf, *end;
			while (isspace((unsigned char)*s))
				s++;
			if (!*s || *s == '#')
				break;
			if (have_result) {
				ret = err_set(e, EINVAL, "%s: line %zu: more than one result", path, lineno);
				break;
			}
			errno = 0;
			c->result = strtoull(s, &end, 0);
			while (isspace((unsigned char)*end))
				end++;
			if (errno || end == s || *end)
				ret = err_set(e, EINVAL, "%s: line %zu: invalid result '%s'", path, lineno, s);
			have_result = 1;
			break;
		}
		}
	}
	if (!ret && (!have_prog || prog.len == 0))
		ret = err_set(e, EINVAL, "%s: no '-- program' section", path);
	if (!ret && prog.len % sizeof(struct isa_insn))
		ret = err_set(e, EINVAL, "%s: program has %zu bytes, not a multiple of 8", path,
			      prog.len);
	if (!ret && !have_result)
		ret = err_set(e, EINVAL, "%s: no '-- result' section", path);
	if (!ret) {
		const char *base = conf_base_name(path);
		size_t n = strlen(base);
		if (n > 4 && !strcmp(base + n - 4, ".txt"))
			n -= 4;
		c->name = strndup(base, n);
		if (!c->name)
			ret = err_set(e, ENOMEM, "%s: out of memory", path);
	}
	if (ret) {
		free(asm_buf.data);
		free(prog.data);
		free(mem.data);
		conf_case_free(c);
		return ret;
	}
	c->asm_text = (char *)asm_buf.data;
	c->insns = (struct isa_insn *)prog.data;
	c->insn_cnt = prog.len / sizeof(struct isa_insn);
	c->mem = mem.data;
	c->mem_len = mem.len;
	return 0;
}

int conf_case_load(const char *path, struct conf_case *c, struct err *e)
{
	FILE *f = fopen(path, "rb");
	struct conf_buf text = {0};
	char chunk[4096];
	size_t n;
	int ret;

	if (!f)
		return err_set(e, errno, "%s: %s", path, strerror(errno));
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (conf_buf_add(&text, chunk, n)) {
			fclose(f);
			free(text.data);
			return err_set(e, ENOMEM, "%s: out of memory", path);
		}
	fclose(f);
	if (memchr(text.data, 0, text.len)) {
		free(text.data);
		return err_set(e, EINVAL, "%s: not a text file (contains NUL bytes)", path);
	}
	ret = conf_case_parse(path, text.data ? (char *)text.data : "", c, e);
	free(text.data);
	return ret;
}

void conf_case_free(struct conf_case *c)
{
	free(c->name);
	free(c->asm_text);
	free(c->insns);
	free(c->mem);
	memset(c, 0, sizeof(*c));
}

int conf_case_uses_callx(const struct conf_case *c)
{
	for (size_t i = 0; i < c->insn_cnt; i++) {
		if (c->insns[i].code == ISA_OPC_JMP_CALLX)
			return 1;
		if (c->insns[i].code == ISA_OPC_LD_IMM64)
			i++;
	}
	return 0;
}

/* bpf_conformance's helper 5: returns its first argument. */
static uint64_t conf_helper_identity(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				     uint64_t r5)
{
	return r1;
}

const struct helper_table *conf_helpers(void)
{
	static const struct helper_table table = {.fn = {[5] = conf_helper_identity}};
	return &table;
}

enum conf_outcome conf_case_run(const struct conf_case *c, const struct conf_backend *b,
				char *why, size_t why_len)
{
	struct isa_error ierr;
	struct err e = {{0}};
	struct prog *p = NULL;
	uint8_t *mem = NULL;
	uint64_t r0 = 0;
	enum conf_outcome out = CONF_FAIL;

	if (conf_case_uses_callx(c) && !b->supports_callx) {
		snprintf(why, why_len, "uses callx, which backend '%s' does not support", b->name);
		return CONF_SKIP;
	}
	if (isa_decode(c->insns, c->insn_cnt, b->supports_callx, &ierr)) {
		snprintf(why, why_len, "insn %zu: %s", ierr.index, ierr.msg);
		return CONF_FAIL;
	}
	if (prog_from_insns(c->name, c->insns, c->insn_cnt, &p, &e)) {
		snprintf(why, why_len, "%s", e.msg);
		return CONF_FAIL;
	}
	/* The program may write its memory: give it a copy (never empty, so
	 * the pointer is a real allocation even for mem_len 0). */
	mem = malloc(c->mem_len ? c->mem_len : 1);
	if (!mem) {
		snprintf(why, why_len, "out of memory");
		prog_free(p);
		return CONF_FAIL;
	}
	if (c->mem_len)
		memcpy(mem, c->mem, c->mem_len);
	struct prog_run_opts opts = {
		.args = {c->mem_len ? (uint64_t)(uintptr_t)mem : 0, c->mem_len},
		.helpers = conf_helpers(),
		.bounds_check = 1,
		.mem = mem,
		.mem_len = c->mem_len,
	};
	if (b->run(p, &opts, &r0, &e))
		snprintf(why, why_len, "%s", e.msg);
	else if (r0 != c->result)
		snprintf(why, why_len, "r0 = 0x%" PRIx64 ", expected 0x%" PRIx64, r0, c->result);
	else
		out = CONF_PASS;
	free(mem);
	prog_free(p);
	return out;
}
