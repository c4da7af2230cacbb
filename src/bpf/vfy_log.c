/* SPDX-License-Identifier: MIT */
/*
 * vfy_log.c - the verifier's log and its error messages.
 *
 * The log is the caller's buffer; when logging is off nothing is formatted.
 * At VFY_LOG_PATH the main loop cuts the log back whenever it abandons a
 * path, so what remains at an error is the failing path alone.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "disasm.h"
#include "vfy.h"

static void log_vappend(struct vfy_env *env, const char *fmt, va_list ap)
{
	char *buf = env->opts.log_buf;
	size_t size = env->opts.log_size;

	if (env->log_len + 1 >= size) {
		env->log_len += (size_t)vsnprintf(NULL, 0, fmt, ap);
		return;
	}
	int n = vsnprintf(buf + env->log_len, size - env->log_len, fmt, ap);
	if (n > 0)
		env->log_len += (size_t)n;
}

void vfy_log(struct vfy_env *env, const char *fmt, ...)
{
	va_list ap;

	if (!vfy_log_on(env))
		return;
	va_start(ap, fmt);
	log_vappend(env, fmt, ap);
	va_end(ap);
}

void vfy_log_truncate(struct vfy_env *env, size_t len)
{
	if (!vfy_log_on(env) || len >= env->log_len)
		return;
	env->log_len = len;
	if (len < env->opts.log_size)
		env->opts.log_buf[len] = '\0';
}

void vfy_log_insn(struct vfy_env *env, uint32_t idx)
{
	char text[DISASM_BUF_SIZE];
	const struct prog_line *l = prog_line_of(env->p, idx);

	if (!vfy_log_on(env))
		return;
	if (l && l->insn == idx && l->line)
		vfy_log(env, "; %s:%u: %s\n", l->file ? l->file : "?", l->line,
			l->text ? l->text : "");
	disasm_insn(env->p->insns, env->p->insn_cnt, idx, 0, text, sizeof(text));
	vfy_log(env, "%u: %s\n", idx, text);
}

int vfy_reg_str(char *buf, size_t size, const struct vfy_reg *r)
{
	char b[200];
	const char *t = vfy_reg_type_name(r->type);

	switch (r->type) {
	case REG_NOT_INIT:
		return snprintf(buf, size, "%s", t);
	case REG_SCALAR:
		vfy_bounds_str(b, sizeof(b), &r->b);
		return snprintf(buf, size, "%s", b);
	case REG_RELEASED:
		return snprintf(buf, size, "%s(at insn %u)", t, r->insn);
	default:
		break;
	}
	vfy_bounds_str(b, sizeof(b), &r->b);
	int n = snprintf(buf, size, "%s(", t);
#define ADD(...)                                                               \
	do {                                                                   \
		if (n >= 0 && (size_t)n < size)                                \
			n += snprintf(buf + n, size - (size_t)n, __VA_ARGS__); \
	} while (0)
	if (r->type == REG_PTR_STACK)
		ADD("frame %u, ", r->frameno);
	if (r->type == REG_CONST_MAP || r->type == REG_PTR_MAP_VALUE ||
	    r->type == REG_PTR_MAP_VALUE_OR_NULL)
		ADD("map %u, ", r->map);
	if (r->size)
		ADD("size %u, ", r->size);
	if (r->id)
		ADD("id %u, ", r->id);
	ADD("off %d", r->off);
	if (!tnum_equals_const(r->b.var, 0))
		ADD(", var %s", b);
	ADD(")");
#undef ADD
	return n;
}

void vfy_log_state(struct vfy_env *env, const struct vfy_state *s)
{
	char b[320];

	if (!vfy_log_on(env))
		return;
	for (uint32_t f = 0; f <= s->curframe; f++) {
		const struct vfy_frame *fr = s->frames[f];
		vfy_log(env, "  frame %u:", f);
		for (int i = 0; i < ISA_NR_REGS; i++) {
			if (fr->regs[i].type == REG_NOT_INIT)
				continue;
			vfy_reg_str(b, sizeof(b), &fr->regs[i]);
			vfy_log(env, " R%d=%s", i, b);
		}
		for (int i = 0; i < VFY_SLOTS; i++) {
			const uint8_t *st = &fr->stype[i * 8];
			if (st[0] == SLOT_SPILL) {
				vfy_reg_str(b, sizeof(b), &fr->spill[i]);
				vfy_log(env, " fp%d=%s", i * 8 - ISA_STACK_SIZE, b);
				continue;
			}
			char m[9];
			bool any = false;
			for (int j = 0; j < 8; j++) {
				m[j] = st[j] == SLOT_MISC ? 'm' : st[j] == SLOT_SPILL32 ? 's' : '?';
				any |= st[j] != SLOT_INVALID;
			}
			m[8] = '\0';
			if (any)
				vfy_log(env, " fp%d=%s", i * 8 - ISA_STACK_SIZE, m);
		}
		vfy_log(env, "\n");
	}
	for (uint32_t i = 0; i < s->nrefs; i++)
		vfy_log(env, "  reference %u acquired at insn %u\n", s->refs[i].id, s->refs[i].insn);
}

static int vreject_at(struct vfy_env *env, uint32_t idx, int errnum, const char *fmt,
		      va_list ap)
{
	char what[320], text[DISASM_BUF_SIZE] = "";
	const struct prog_line *l = NULL;

	vsnprintf(what, sizeof(what), fmt, ap);
	if (idx < env->p->insn_cnt) {
		disasm_insn(env->p->insns, env->p->insn_cnt, idx, 0, text, sizeof(text));
		l = prog_line_of(env->p, idx);
		if (l && !l->line) /* compiler-generated code has no line */
			l = NULL;
	}
	if (l)
		err_set(env->e, errnum, "insn %u: `%s`: %s (%s:%u%s%s)", idx, text, what,
			l->file ? l->file : "?", l->line, l->text ? ": " : "",
			l->text ? l->text : "");
	else
		err_set(env->e, errnum, "insn %u: `%s`: %s", idx, text, what);
	vfy_log(env, "error: %s\n", what);
	if (env->cur && env->opts.log_level != VFY_LOG_OFF)
		vfy_log_state(env, env->cur);
	return -errnum;
}

int vfy_reject_at(struct vfy_env *env, uint32_t idx, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vreject_at(env, idx, errnum, fmt, ap);
	va_end(ap);
	return r;
}

int vfy_reject(struct vfy_env *env, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vreject_at(env, env->insn_idx, errnum, fmt, ap);
	va_end(ap);
	return r;
}

int vfy_bug(struct vfy_env *env, const char *fmt, ...)
{
	char what[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return err_set(env->e, EFAULT, "internal verifier error at insn %u: %s", env->insn_idx,
		       what);
}
