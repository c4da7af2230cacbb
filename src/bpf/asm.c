/* SPDX-License-Identifier: MIT */
/*
 * asm.c - text to eBPF bytecode (syntax in asm.h).
 *
 * Mnemonics are not listed here one by one: they are split into an
 * operation (from ISA_ALU_OPS, ISA_JMP_OPS, ISA_ATOMIC_OPS), a width
 * suffix ("32") and a size letter, the opcode byte is composed from those,
 * and isa_opcode_valid() (ISA_OPCODES) decides whether it exists.
 * Two passes: the first emits slots and records labels and the jumps that
 * name them; the second patches the jumps.
 */
#include "asm.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ASM_NAME_MAX = 64, ASM_MAX_OPERANDS = 5 };

struct asm_label {
	char name[ASM_NAME_MAX];
	size_t slot;
};

/* A jump or local call whose target is a label, patched in pass 2. */
struct asm_fixup {
	char name[ASM_NAME_MAX];
	size_t slot;
	size_t line;
	int in_imm; /* the offset goes into imm (ja32, call local), else off */
};

struct asm_state {
	struct isa_insn *insns;
	size_t cnt, cap;
	struct asm_label *labels;
	size_t label_cnt, label_cap;
	struct asm_fixup *fixups;
	size_t fixup_cnt, fixup_cap;
	size_t line;
	struct err *e;
};

/* Grow *arr (of elem-byte items) to hold at least need items. */
static int asm_reserve(void **arr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 64;
	while (ncap < need)
		ncap *= 2;
	void *n = realloc(*arr, ncap * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

static int asm_emit(struct asm_state *st, struct isa_insn in)
{
	if (asm_reserve((void **)&st->insns, &st->cap, st->cnt + 1, sizeof(in)))
		return err_set(st->e, ENOMEM, "line %zu: out of memory", st->line);
	st->insns[st->cnt++] = in;
	return 0;
}

static char *asm_trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

static int asm_is_ident(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_' && *s != '.')
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.')
			return 0;
	return 1;
}

/* "%r3" or "r3" */
static int asm_reg(struct asm_state *st, const char *s, uint8_t *reg)
{
	const char *p = s;
	char *end;

	if (*p == '%')
		p++;
	if (*p != 'r' || !isdigit((unsigned char)p[1]))
		return err_set(st->e, EINVAL, "line %zu: expected a register, got '%s'", st->line, s);
	long n = strtol(p + 1, &end, 10);
	if (*end || n < 0 || n >= ISA_NR_REGS)
		return err_set(st->e, EINVAL, "line %zu: invalid register '%s' (r0..r10)", st->line, s);
	*reg = (uint8_t)n;
	return 0;
}

static int asm_is_reg(const char *s)
{
	return (s[0] == '%' && s[1] == 'r') || (s[0] == 'r' && isdigit((unsigned char)s[1]));
}

/* An integer in [min, max]: decimal or 0x hex, optional sign. */
static int asm_int(struct asm_state *st, const char *s, long long min,
		   unsigned long long max, long long *out, const char *what)
{
	const char *p = s;
	int neg = 0;
	char *end;

	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (!isdigit((unsigned char)*p))
		return err_set(st->e, EINVAL, "line %zu: expected %s, got '%s'", st->line, what, s);
	errno = 0;
	unsigned long long mag = strtoull(p, &end, 0);
	if (*end || errno)
		return err_set(st->e, EINVAL, "line %zu: invalid %s '%s'", st->line, what, s);
	if (neg ? mag > (unsigned long long)-(min + 1) + 1 : mag > max)
		return err_set(st->e, EINVAL, "line %zu: %s '%s' is out of range", st->line, what, s);
	*out = neg ? (long long)(0 - mag) : (long long)mag;
	return 0;
}

static int asm_imm32(struct asm_state *st, const char *s, int32_t *imm)
{
	long long v;
	int ret = asm_int(st, s, INT32_MIN, UINT32_MAX, &v, "an immediate");
	if (!ret)
		*imm = (int32_t)(uint32_t)v; /* 0xffffffff is -1 */
	return ret;
}

/* "[%r1]", "[%r1+8]", "[%r10-8]" */
static int asm_mem(struct asm_state *st, char *s, uint8_t *reg, int16_t *off)
{
	size_t n = strlen(s);
	long long v = 0;

	if (s[0] != '[' || s[n - 1] != ']')
		return err_set(st->e, EINVAL, "line %zu: expected a memory operand like [%%r1+8], got '%s'",
			       st->line, s);
	s[n - 1] = '\0';
	char *sign = strpbrk(s + 1, "+-");
	if (sign) {
		if (asm_int(st, asm_trim(sign), INT16_MIN, INT16_MAX, &v, "an offset"))
			return -EINVAL;
		*sign = '\0';
	}
	*off = (int16_t)v;
	return asm_reg(st, asm_trim(s + 1), reg);
}

/* A jump target: "+3"/"-2"/"7" (slots after the next one) or a label. */
static int asm_target(struct asm_state *st, const char *s, int in_imm, struct isa_insn *in)
{
	long long v;

	if (!asm_is_ident(s)) {
		if (asm_int(st, s, in_imm ? INT32_MIN : INT16_MIN,
			    in_imm ? INT32_MAX : INT16_MAX, &v, "a jump offset or label"))
			return -EINVAL;
		if (in_imm)
			in->imm = (int32_t)v;
		else
			in->off = (int16_t)v;
		return 0;
	}
	if (strlen(s) >= ASM_NAME_MAX)
		return err_set(st->e, EINVAL, "line %zu: label '%.20s...' is too long", st->line, s);
	if (asm_reserve((void **)&st->fixups, &st->fixup_cap, st->fixup_cnt + 1,
			sizeof(*st->fixups)))
		return err_set(st->e, ENOMEM, "line %zu: out of memory", st->line);
	struct asm_fixup *f = &st->fixups[st->fixup_cnt++];
	snprintf(f->name, sizeof(f->name), "%s", s);
	f->slot = st->cnt;
	f->line = st->line;
	f->in_imm = in_imm;
	return 0;
}

static int asm_nargs(struct asm_state *st, const char *mn, int have, int want)
{
	if (have == want)
		return 0;
	return err_set(st->e, EINVAL, "line %zu: '%s' takes %d operand%s, got %d", st->line, mn,
		       want, want == 1 ? "" : "s", have);
}

/* Size suffix of loads and stores: "b", "h", "w", "dw". */
static int asm_size(const char *s, uint8_t *size)
{
	static const struct {
		const char *name;
		uint8_t size;
	} sizes[] = {{"b", ISA_B}, {"h", ISA_H}, {"w", ISA_W}, {"dw", ISA_DW}};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (!strcmp(s, sizes[i].name)) {
			*size = sizes[i].size;
			return 1;
		}
	return 0;
}

/* Strip a trailing "32": the 32-bit form of ALU and JMP mnemonics. */
static int asm_strip32(char *base)
{
	size_t n = strlen(base);
	if (n > 2 && !strcmp(base + n - 2, "32")) {
		base[n - 2] = '\0';
		return 1;
	}
	return 0;
}

static int asm_unknown(struct asm_state *st, const char *mn)
{
	return err_set(st->e, EINVAL, "line %zu: unknown mnemonic '%s'", st->line, mn);
}

/* lock [fetch] OP[32] [mem], reg */
static int asm_atomic(struct asm_state *st, char *words, char **ops, int nops)
{
	char op[ASM_NAME_MAX];
	int fetch = 0, found = 0;
	struct isa_insn in = {0};

	if (!strncmp(words, "fetch ", 6)) {
		fetch = 1;
		words = asm_trim(words + 6);
	}
	snprintf(op, sizeof(op), "%s", words);
	int is32 = asm_strip32(op);
#define ATOMIC_MATCH(name, val, mn)                                            \
	if (!strcmp(op, mn)) {                                                 \
		in.imm = (val);                                                \
		found = 1;                                                     \
	}
	ISA_ATOMIC_OPS(ATOMIC_MATCH)
#undef ATOMIC_MATCH
	if (!found || (fetch && (in.imm & ISA_FETCH)))
		return err_set(st->e, EINVAL, "line %zu: unknown atomic operation 'lock %s%s'",
			       st->line, fetch ? "fetch " : "", words);
	if (fetch)
		in.imm |= ISA_FETCH;
	in.code = is32 ? ISA_OPC_ATOMIC_W : ISA_OPC_ATOMIC_DW;
	uint8_t dst, src;
	if (asm_nargs(st, "lock", nops, 2) || asm_mem(st, ops[0], &dst, &in.off) ||
	    asm_reg(st, ops[1], &src))
		return -EINVAL;
	in.dst = dst;
	in.src = src;
	return asm_emit(st, in);
}

/* lddw %rN, IMM64 | map[I] | map_value[I]+OFF */
static int asm_lddw(struct asm_state *st, char **ops, int nops)
{
	struct isa_insn in = {.code = ISA_OPC_LD_IMM64}, hi = {0};
	uint8_t dst;
	long long v;
	char *arg;

	if (asm_nargs(st, "lddw", nops, 2) || asm_reg(st, ops[0], &dst))
		return -EINVAL;
	in.dst = dst;
	arg = ops[1];
	if (!strncmp(arg, "map[", 4) || !strncmp(arg, "map_value[", 10)) {
		int value = arg[3] == '_';
		char *idx = strchr(arg, '[') + 1, *close = strchr(idx, ']');
		if (!close)
			return err_set(st->e, EINVAL, "line %zu: missing ']' in '%s'", st->line, arg);
		*close = '\0';
		if (asm_int(st, asm_trim(idx), 0, INT32_MAX, &v, "a map index"))
			return -EINVAL;
		in.src = value ? ISA_PSEUDO_MAP_VALUE : ISA_PSEUDO_MAP_FD;
		in.imm = (int32_t)v;
		char *rest = asm_trim(close + 1);
		if (value && *rest == '+') {
			if (asm_int(st, asm_trim(rest + 1), 0, UINT32_MAX, &v, "a value offset"))
				return -EINVAL;
			hi.imm = (int32_t)(uint32_t)v;
		} else if (*rest) {
			return err_set(st->e, EINVAL, "line %zu: unexpected '%s' after map reference",
				       st->line, rest);
		}
	} else {
		if (asm_int(st, arg, INT64_MIN, UINT64_MAX, &v, "a 64-bit immediate"))
			return -EINVAL;
		in.imm = (int32_t)(uint32_t)(uint64_t)v;
		hi.imm = (int32_t)(uint32_t)((uint64_t)v >> 32);
	}
	return asm_emit(st, in) ?: asm_emit(st, hi);
}

/* .insn CODE, DST, SRC, OFF, IMM: one raw slot */
static int asm_raw(struct asm_state *st, char **ops, int nops)
{
	long long v[5];
	static const long long lo[5] = {0, 0, 0, INT16_MIN, INT32_MIN};
	static const unsigned long long hi[5] = {255, 15, 15, INT16_MAX, UINT32_MAX};

	if (asm_nargs(st, ".insn", nops, 5))
		return -EINVAL;
	for (int i = 0; i < 5; i++)
		if (asm_int(st, ops[i], lo[i], hi[i], &v[i], "a field value"))
			return -EINVAL;
	struct isa_insn in = {.code = (uint8_t)v[0], .dst = (uint8_t)v[1], .src = (uint8_t)v[2],
			      .off = (int16_t)v[3], .imm = (int32_t)(uint32_t)v[4]};
	return asm_emit(st, in);
}

/* call N | call %rN | callx %rN | call local TARGET */
static int asm_call(struct asm_state *st, const char *mn, char *words, char **ops, int nops)
{
	struct isa_insn in = {.code = ISA_OPC_JMP_CALL};

	if (!strcmp(mn, "call") && !strcmp(words, "local")) {
		if (asm_nargs(st, "call local", nops, 1))
			return -EINVAL;
		in.src = ISA_CALL_LOCAL;
		return asm_target(st, ops[0], 1, &in) ?: asm_emit(st, in);
	}
	if (*words)
		return err_set(st->e, EINVAL, "line %zu: unexpected '%s' after '%s'", st->line,
			       words, mn);
	if (asm_nargs(st, mn, nops, 1))
		return -EINVAL;
	if (!strcmp(mn, "callx") || asm_is_reg(ops[0])) {
		uint8_t reg;
		in.code = ISA_OPC_JMP_CALLX;
		if (asm_reg(st, ops[0], &reg))
			return -EINVAL;
		in.dst = reg;
		return asm_emit(st, in);
	}
	return asm_imm32(st, ops[0], &in.imm) ?: asm_emit(st, in);
}

/* le16/be32/bswap64/swap16 %rN */
static int asm_end(struct asm_state *st, const char *mn, char **ops, int nops, int *done)
{
	static const struct {
		const char *prefix;
		uint8_t code;
	} ends[] = {{"le", ISA_OPC_ALU32_TO_LE},
		    {"be", ISA_OPC_ALU32_TO_BE},
		    {"bswap", ISA_OPC_ALU64_BSWAP},
		    {"swap", ISA_OPC_ALU64_BSWAP}};

	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		size_t n = strlen(ends[i].prefix);
		const char *w = mn + n;
		if (strncmp(mn, ends[i].prefix, n) ||
		    (strcmp(w, "16") && strcmp(w, "32") && strcmp(w, "64")))
			continue;
		struct isa_insn in = {.code = ends[i].code, .imm = atoi(w)};
		uint8_t dst;
		*done = 1;
		if (asm_nargs(st, mn, nops, 1) || asm_reg(st, ops[0], &dst))
			return -EINVAL;
		in.dst = dst;
		return asm_emit(st, in);
	}
	return 0;
}

/* Loads and stores: ldx*, ldxs*, st*, stx*. */
static int asm_ldst(struct asm_state *st, const char *mn, char **ops, int nops, int *done)
{
	uint8_t size, reg;
	struct isa_insn in = {0};

	if (!strncmp(mn, "ldxs", 4) && asm_size(mn + 4, &size) && size != ISA_DW) {
		in.code = ISA_LDX | ISA_MEMSX | size;
	} else if (!strncmp(mn, "ldx", 3) && asm_size(mn + 3, &size)) {
		in.code = ISA_LDX | ISA_MEM | size;
	} else if (!strncmp(mn, "stx", 3) && asm_size(mn + 3, &size)) {
		in.code = ISA_STX | ISA_MEM | size;
	} else if (!strncmp(mn, "st", 2) && asm_size(mn + 2, &size)) {
		in.code = ISA_ST | ISA_MEM | size;
	} else {
		return 0;
	}
	*done = 1;
	if (asm_nargs(st, mn, nops, 2))
		return -EINVAL;
	switch (ISA_CLASS(in.code)) {
	case ISA_LDX:
		if (asm_reg(st, ops[0], &reg) || asm_mem(st, ops[1], &size, &in.off))
			return -EINVAL;
		in.dst = reg;
		in.src = size;
		break;
	case ISA_STX:
		if (asm_mem(st, ops[0], &size, &in.off) || asm_reg(st, ops[1], &reg))
			return -EINVAL;
		in.dst = size;
		in.src = reg;
		break;
	default:
		if (asm_mem(st, ops[0], &size, &in.off) || asm_imm32(st, ops[1], &in.imm))
			return -EINVAL;
		in.dst = size;
	}
	return asm_emit(st, in);
}

/* movsx{8,16,32}{32,64} %rD, %rS: source width, then destination width */
static int asm_movsx(struct asm_state *st, const char *mn, char **ops, int nops, int *done)
{
	static const struct {
		const char *name;
		int16_t width;
		uint8_t code;
	} forms[] = {{"movsx832", 8, ISA_OPC_ALU32_MOV_X},   {"movsx1632", 16, ISA_OPC_ALU32_MOV_X},
		     {"movsx864", 8, ISA_OPC_ALU64_MOV_X},   {"movsx1664", 16, ISA_OPC_ALU64_MOV_X},
		     {"movsx3264", 32, ISA_OPC_ALU64_MOV_X}};
	uint8_t dst, src;

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		if (strcmp(mn, forms[i].name))
			continue;
		struct isa_insn in = {.code = forms[i].code, .off = forms[i].width};
		*done = 1;
		if (asm_nargs(st, mn, nops, 2) || asm_reg(st, ops[0], &dst) ||
		    asm_reg(st, ops[1], &src))
			return -EINVAL;
		in.dst = dst;
		in.src = src;
		return asm_emit(st, in);
	}
	return 0;
}

/* Arithmetic (add, sdiv32, neg, ...) and jumps (jeq, ja32, exit, ...). */
static int asm_alu_jmp(struct asm_state *st, const char *mn, char **ops, int nops)
{
	char base[ASM_NAME_MAX];
	int is32, found = -1, is_jmp = 0;
	struct isa_insn in = {0};
	uint8_t reg;

	snprintf(base, sizeof(base), "%s", mn);
	is32 = asm_strip32(base);
	char *op = base;
	if (!strcmp(base, "sdiv") || !strcmp(base, "smod")) {
		in.off = 1;
		op++;
	}
#define ALU_MATCH(name, val, m)                                                \
	if (ISA_ALU_##name != ISA_ALU_END && !strcmp(op, m))                   \
		found = (val);
#define JMP_MATCH(name, val, m)                                                \
	if (!strcmp(op, m)) {                                                  \
		found = (val);                                                 \
		is_jmp = 1;                                                    \
	}
	ISA_ALU_OPS(ALU_MATCH)
	ISA_JMP_OPS(JMP_MATCH)
#undef ALU_MATCH
#undef JMP_MATCH
	if (found < 0)
		return asm_unknown(st, mn);
	uint8_t cls = is_jmp ? (is32 ? ISA_JMP32 : ISA_JMP) : (is32 ? ISA_ALU : ISA_ALU64);
	in.code = cls | (uint8_t)found;

	/* Operand shapes: exit (none), ja (target), neg (reg), the rest. */
	if (is_jmp && found == ISA_JMP_EXIT) {
		if (!isa_opcode_valid(in.code))
			return asm_unknown(st, mn);
		return asm_nargs(st, mn, nops, 0) ?: asm_emit(st, in);
	}
	if (is_jmp && found == ISA_JMP_JA) {
		if (asm_nargs(st, mn, nops, 1))
			return -EINVAL;
		return asm_target(st, ops[0], is32, &in) ?: asm_emit(st, in);
	}
	if (is_jmp && found == ISA_JMP_CALL)
		return asm_unknown(st, mn);
	if (!is_jmp && found == ISA_ALU_NEG) {
		if (asm_nargs(st, mn, nops, 1) || asm_reg(st, ops[0], &reg))
			return -EINVAL;
		in.dst = reg;
		return asm_emit(st, in);
	}
	if (asm_nargs(st, mn, nops, is_jmp ? 3 : 2) || asm_reg(st, ops[0], &reg))
		return -EINVAL;
	in.dst = reg;
	if (asm_is_reg(ops[1])) {
		in.code |= ISA_X;
		if (asm_reg(st, ops[1], &reg))
			return -EINVAL;
		in.src = reg;
	} else if (asm_imm32(st, ops[1], &in.imm)) {
		return -EINVAL;
	}
	if (!isa_opcode_valid(in.code))
		return asm_unknown(st, mn);
	if (is_jmp && asm_target(st, ops[2], 0, &in))
		return -EINVAL;
	return asm_emit(st, in);
}

/* Split "OPERAND, OPERAND" on commas outside brackets. */
static int asm_split(char *s, char **ops)
{
	int n = 0;

	if (!*s)
		return 0;
	for (;;) {
		char *comma = strchr(s, ',');
		if (n == ASM_MAX_OPERANDS)
			return n + 1;
		if (comma)
			*comma = '\0';
		ops[n++] = asm_trim(s);
		if (!comma)
			return n;
		s = comma + 1;
	}
}

static int asm_define_label(struct asm_state *st, const char *name)
{
	if (strlen(name) >= ASM_NAME_MAX)
		return err_set(st->e, EINVAL, "line %zu: label '%.20s...' is too long", st->line, name);
	for (size_t i = 0; i < st->label_cnt; i++)
		if (!strcmp(st->labels[i].name, name))
			return err_set(st->e, EINVAL, "line %zu: label '%s' is defined twice",
				       st->line, name);
	if (asm_reserve((void **)&st->labels, &st->label_cap, st->label_cnt + 1,
			sizeof(*st->labels)))
		return err_set(st->e, ENOMEM, "line %zu: out of memory", st->line);
	struct asm_label *l = &st->labels[st->label_cnt++];
	snprintf(l->name, sizeof(l->name), "%s", name);
	l->slot = st->cnt;
	return 0;
}

static int asm_line(struct asm_state *st, char *line)
{
	char *ops[ASM_MAX_OPERANDS], *words, mn[ASM_NAME_MAX];
	int nops, done = 0, ret;

	for (char *c = line; *c; c++)
		if (*c == '#' || (c[0] == '/' && c[1] == '/')) {
			*c = '\0';
			break;
		}
	line = asm_trim(line);
	char *colon = strchr(line, ':');
	if (colon) {
		*colon = '\0';
		char *name = asm_trim(line);
		if (!asm_is_ident(name))
			return err_set(st->e, EINVAL, "line %zu: invalid label '%s'", st->line, name);
		if ((ret = asm_define_label(st, name)))
			return ret;
		line = asm_trim(colon + 1);
	}
	if (!*line)
		return 0;

	/* Mnemonic words ("lock fetch add", "call local"), then operands. */
	size_t mlen = strcspn(line, " \t");
	if (mlen >= sizeof(mn))
		return err_set(st->e, EINVAL, "line %zu: unknown mnemonic '%.20s...'", st->line, line);
	memcpy(mn, line, mlen);
	mn[mlen] = '\0';
	for (char *c = mn; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	char *rest = asm_trim(line + mlen);
	words = rest;
	if (!strcmp(mn, "lock")) {
		/* "lock fetch add32 [..], %r1": operands start at '[' */
		char *bracket = strchr(rest, '[');
		if (!bracket)
			return err_set(st->e, EINVAL, "line %zu: 'lock' needs a memory operand", st->line);
		bracket[-1] = '\0';
		words = asm_trim(rest);
		nops = asm_split(bracket, ops);
		return asm_atomic(st, words, ops, nops);
	}
	if (!strcmp(mn, "call") && !strncmp(rest, "local", 5) && isspace((unsigned char)rest[5])) {
		rest[5] = '\0';
		nops = asm_split(asm_trim(rest + 6), ops);
		return asm_call(st, mn, words, ops, nops);
	}
	nops = asm_split(rest, ops);
	if (nops > ASM_MAX_OPERANDS)
		return err_set(st->e, EINVAL, "line %zu: too many operands", st->line);
	if (!strcmp(mn, "call") || !strcmp(mn, "callx"))
		return asm_call(st, mn, "", ops, nops);
	if (!strcmp(mn, "lddw"))
		return asm_lddw(st, ops, nops);
	if (!strcmp(mn, ".insn"))
		return asm_raw(st, ops, nops);
	if ((ret = asm_end(st, mn, ops, nops, &done)) || done)
		return ret;
	if ((ret = asm_movsx(st, mn, ops, nops, &done)) || done)
		return ret;
	if ((ret = asm_ldst(st, mn, ops, nops, &done)) || done)
		return ret;
	return asm_alu_jmp(st, mn, ops, nops);
}

/* Pass 2: patch every jump that names a label. */
static int asm_resolve(struct asm_state *st)
{
	for (size_t i = 0; i < st->fixup_cnt; i++) {
		const struct asm_fixup *f = &st->fixups[i];
		int64_t target = -1;

		for (size_t l = 0; l < st->label_cnt; l++)
			if (!strcmp(st->labels[l].name, f->name))
				target = (int64_t)st->labels[l].slot;
		if (target < 0 && !strcmp(f->name, "exit")) {
			for (size_t s = 0; s < st->cnt && target < 0; s++)
				if (st->insns[s].code == ISA_OPC_JMP_EXIT)
					target = (int64_t)s;
		}
		if (target < 0)
			return err_set(st->e, EINVAL, "line %zu: undefined label '%s'", f->line, f->name);
		int64_t rel = target - (int64_t)f->slot - 1;
		if (f->in_imm) {
			st->insns[f->slot].imm = (int32_t)rel;
		} else {
			if (rel < INT16_MIN || rel > INT16_MAX)
				return err_set(st->e, EINVAL, "line %zu: label '%s' is too far for a 16-bit jump offset",
					       f->line, f->name);
			st->insns[f->slot].off = (int16_t)rel;
		}
	}
	return 0;
}

int asm_assemble(const char *text, struct isa_insn **out, size_t *cnt, struct err *e)
{
	struct asm_state st = {.e = e};
	char *copy = strdup(text), *line, *next;
	int ret = 0;

	if (!copy)
		return err_set(e, ENOMEM, "out of memory");
	for (line = copy; line && !ret; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		st.line++;
		ret = asm_line(&st, line);
	}
	ret = ret ?: asm_resolve(&st);
	if (!ret && st.cnt == 0)
		ret = err_set(e, EINVAL, "no instructions");
	free(copy);
	free(st.labels);
	free(st.fixups);
	if (ret) {
		free(st.insns);
		return ret;
	}
	*out = st.insns;
	*cnt = st.cnt;
	return 0;
}
