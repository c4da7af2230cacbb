/* SPDX-License-Identifier: MIT */
/*
 * Bad input never crashes the loader and is rejected with a message that
 * names the file and what is wrong.
 *
 * tests/bad_elf/cases.txt describes corrupt objects as patches of good ones
 * (its header gives the syntax); each is built here and must fail with the
 * exact message substring.  Besides, every test program is truncated at
 * every length and has every byte of its headers flipped: the loader must
 * either load it or fail with a message that starts with the file's name.
 * This file reads the good objects with its own <elf.h> walk, independent
 * of the loader's.
 */
#include "testutil.h"

#include <dirent.h>
#include <elf.h>
#include <linux/btf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/object.h"

#define CASES "tests/bad_elf/cases.txt"
#define PROGS TEST_BPF_DIR "/tests/progs"

struct image {
	uint8_t *buf;
	size_t len;
};

static const Elf64_Shdr *shdr_at(const struct image *im, size_t i)
{
	const Elf64_Ehdr *h = (const void *)im->buf;
	return (const void *)(im->buf + h->e_shoff + i * sizeof(Elf64_Shdr));
}

static size_t find_section(const struct image *im, const char *name)
{
	const Elf64_Ehdr *h = (const void *)im->buf;
	const char *names = (const char *)im->buf + shdr_at(im, h->e_shstrndx)->sh_offset;
	for (size_t i = 1; i < h->e_shnum; i++)
		if (!strcmp(names + shdr_at(im, i)->sh_name, name))
			return i;
	fail_msg("no section '%s' in the base object", name);
	return 0;
}

static size_t find_symbol(const struct image *im, const char *name, int want_index)
{
	const Elf64_Ehdr *h = (const void *)im->buf;
	for (size_t s = 1; s < h->e_shnum; s++) {
		const Elf64_Shdr *sh = shdr_at(im, s);
		if (sh->sh_type != SHT_SYMTAB)
			continue;
		const char *strs = (const char *)im->buf + shdr_at(im, sh->sh_link)->sh_offset;
		for (size_t i = 1; i < sh->sh_size / sizeof(Elf64_Sym); i++) {
			size_t off = sh->sh_offset + i * sizeof(Elf64_Sym);
			const Elf64_Sym *sym = (const void *)(im->buf + off);
			if (!strcmp(strs + sym->st_name, name))
				return want_index ? i : off;
		}
	}
	fail_msg("no symbol '%s' in the base object", name);
	return 0;
}

/* Bytes of a BTF type record after struct btf_type. */
static size_t btf_extra(const struct btf_type *t)
{
	size_t vlen = BTF_INFO_VLEN(t->info);
	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT: return 4;
	case BTF_KIND_ARRAY: return sizeof(struct btf_array);
	case BTF_KIND_STRUCT: case BTF_KIND_UNION: return vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM: return vlen * sizeof(struct btf_enum);
	case BTF_KIND_ENUM64: return vlen * sizeof(struct btf_enum64);
	case BTF_KIND_FUNC_PROTO: return vlen * sizeof(struct btf_param);
	case BTF_KIND_VAR: return sizeof(struct btf_var);
	case BTF_KIND_DATASEC: return vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_DECL_TAG: return sizeof(struct btf_decl_tag);
	default: return 0;
	}
}

/* File offset of BTF type `spec` (a number or first_KIND); *id gets its id. */
static size_t find_btf_type(const struct image *im, const char *spec, uint32_t *id)
{
	static const char *const kinds[] = {"", "int", "ptr", "array", "struct", "union",
					    "enum", "fwd", "typedef", "volatile", "const",
					    "restrict", "func", "func_proto", "var", "datasec"};
	const Elf64_Shdr *sh = shdr_at(im, find_section(im, ".BTF"));
	const struct btf_header *h = (const void *)(im->buf + sh->sh_offset);
	size_t base = sh->sh_offset + h->hdr_len + h->type_off, off = 0;
	uint32_t want = (uint32_t)strtoul(spec, NULL, 0);

	for (uint32_t i = 1; off < h->type_len; i++) {
		const struct btf_type *t = (const void *)(im->buf + base + off);
		unsigned k = BTF_INFO_KIND(t->info);
		if ((want && i == want) ||
		    (!strncmp(spec, "first_", 6) && k < 16 && !strcmp(spec + 6, kinds[k]))) {
			*id = i;
			return base + off;
		}
		off += sizeof(*t) + btf_extra(t);
	}
	fail_msg("no BTF type '%s' in the base object", spec);
	return 0;
}

struct field {
	const char *name;
	size_t off, size;
};

static int field_of(const struct field *fs, const char *name, size_t *off, size_t *size)
{
	for (; fs->name; fs++)
		if (!strcmp(fs->name, name)) {
			*off = fs->off;
			*size = fs->size;
			return 1;
		}
	return 0;
}

#define F(type, member, name) {name, offsetof(type, member), sizeof(((type *)0)->member)}
static const struct field ehdr_fields[] = {
	F(Elf64_Ehdr, e_type, "e_type"), F(Elf64_Ehdr, e_machine, "e_machine"),
	F(Elf64_Ehdr, e_version, "e_version"), F(Elf64_Ehdr, e_shoff, "e_shoff"),
	F(Elf64_Ehdr, e_shnum, "e_shnum"), F(Elf64_Ehdr, e_shstrndx, "e_shstrndx"),
	F(Elf64_Ehdr, e_shentsize, "e_shentsize"), {NULL, 0, 0}};
static const struct field shdr_fields[] = {
	F(Elf64_Shdr, sh_name, "sh_name"), F(Elf64_Shdr, sh_type, "sh_type"),
	F(Elf64_Shdr, sh_flags, "sh_flags"), F(Elf64_Shdr, sh_offset, "sh_offset"),
	F(Elf64_Shdr, sh_size, "sh_size"), F(Elf64_Shdr, sh_link, "sh_link"),
	F(Elf64_Shdr, sh_info, "sh_info"), F(Elf64_Shdr, sh_entsize, "sh_entsize"),
	{NULL, 0, 0}};
static const struct field sym_fields[] = {
	F(Elf64_Sym, st_name, "st_name"), F(Elf64_Sym, st_info, "st_info"),
	F(Elf64_Sym, st_shndx, "st_shndx"), F(Elf64_Sym, st_value, "st_value"),
	F(Elf64_Sym, st_size, "st_size"), {NULL, 0, 0}};
/* r_info is sym << 32 | type: the type is its low 4 bytes, the symbol the high. */
static const struct field rel_fields[] = {
	{"r_offset", 0, 8}, {"r_type", 8, 4}, {"r_sym", 12, 4}, {NULL, 0, 0}};
static const struct field insn_fields[] = {
	{"code", 0, 1}, {"regs", 1, 1}, {"off", 2, 2}, {"imm", 4, 4}, {NULL, 0, 0}};
static const struct field btf_fields[] = {
	F(struct btf_header, magic, "magic"), F(struct btf_header, version, "version"),
	F(struct btf_header, hdr_len, "hdr_len"), F(struct btf_header, type_off, "type_off"),
	F(struct btf_header, type_len, "type_len"), F(struct btf_header, str_off, "str_off"),
	F(struct btf_header, str_len, "str_len"), {NULL, 0, 0}};
static const struct field btftype_fields[] = {
	F(struct btf_type, name_off, "name_off"), F(struct btf_type, info, "info"),
	F(struct btf_type, type, "type"), {NULL, 0, 0}};
static const struct field btfext_fields[] = {
	{"magic", 0, 2}, {"version", 2, 1}, {"hdr_len", 4, 4}, {"func_info_off", 8, 4},
	{"func_info_len", 12, 4}, {"line_info_off", 16, 4}, {"line_info_len", 20, 4},
	{"core_relo_off", 24, 4}, {"core_relo_len", 28, 4}, {NULL, 0, 0}};
static const struct field data_fields[] = {{"u8", 0, 1}, {"u32", 0, 4}, {"u64", 0, 8},
					   {NULL, 0, 0}};

static uint64_t parse_value(const char *v, const struct image *im, uint32_t self)
{
	if (!strcmp(v, "self"))
		return self;
	if (!strncmp(v, "symidx:", 7))
		return find_symbol(im, v + 7, 1);
	if (!strncmp(v, "len", 3))
		return im->len + (v[3] ? strtoll(v + 3, NULL, 0) : 0);
	return strtoull(v, NULL, 0);
}

/* Apply one "TARGET FIELD VALUE" to out, locating TARGET in the base. */
static void apply_patch(const struct image *base, struct image *out, char *patch)
{
	char target[128], field[32], value[64], *parts[4] = {0};
	size_t off = 0, foff = 0, fsize = 0;
	uint32_t self = 0;
	int ok = 1;

	assert_int_equal(sscanf(patch, " %127s %31s %63s", target, field, value), 3);
	/* Split TARGET at ':' (section names contain '/', never ':' here). */
	char *save = NULL, *tok = strtok_r(target, ":", &save);
	for (int i = 0; tok && i < 4; i++, tok = strtok_r(NULL, ":", &save))
		parts[i] = tok;
	if (!strcmp(parts[0], "file") && !strcmp(field, "truncate")) {
		out->len = parse_value(value, base, 0);
		assert_true(out->len <= base->len);
		return;
	}
	if (!strcmp(parts[0], "ehdr")) {
		if (!strncmp(field, "e_ident", 7)) {
			foff = strtoul(field + 7, NULL, 10);
			fsize = 1;
		} else {
			ok = field_of(ehdr_fields, field, &foff, &fsize);
		}
	} else if (!strcmp(parts[0], "shdr")) {
		off = (const uint8_t *)shdr_at(base, find_section(base, parts[1])) - base->buf;
		ok = field_of(shdr_fields, field, &foff, &fsize);
	} else if (!strcmp(parts[0], "sym")) {
		off = find_symbol(base, parts[1], 0);
		ok = field_of(sym_fields, field, &foff, &fsize);
	} else if (!strcmp(parts[0], "rel")) {
		off = shdr_at(base, find_section(base, parts[1]))->sh_offset +
		      strtoul(parts[2], NULL, 0) * sizeof(Elf64_Rel);
		ok = field_of(rel_fields, field, &foff, &fsize);
	} else if (!strcmp(parts[0], "insn")) {
		/* insn:FUNC:I or insn:SECTION:I */
		const char *sec = parts[1];
		size_t base_off;
		if (strchr(sec, '/')) {
			base_off = shdr_at(base, find_section(base, sec))->sh_offset;
		} else {
			const Elf64_Sym *sym = (const void *)(base->buf + find_symbol(base, sec, 0));
			base_off = shdr_at(base, sym->st_shndx)->sh_offset + sym->st_value;
		}
		off = base_off + strtoul(parts[2], NULL, 0) * 8;
		ok = field_of(insn_fields, field, &foff, &fsize);
	} else if (!strcmp(parts[0], "data")) {
		off = shdr_at(base, find_section(base, parts[1]))->sh_offset +
		      strtoul(parts[2], NULL, 0);
		ok = field_of(data_fields, field, &foff, &fsize);
	} else if (!strcmp(parts[0], "btf")) {
		off = shdr_at(base, find_section(base, ".BTF"))->sh_offset;
		ok = field_of(btf_fields, field, &foff, &fsize);
	} else if (!strcmp(parts[0], "btftype")) {
		off = find_btf_type(base, parts[1], &self);
		ok = field_of(btftype_fields, field, &foff, &fsize);
	} else if (!strcmp(parts[0], "btfext")) {
		off = shdr_at(base, find_section(base, ".BTF.ext"))->sh_offset;
		ok = field_of(btfext_fields, field, &foff, &fsize);
	} else {
		ok = 0;
	}
	if (!ok)
		fail_msg("bad patch '%s'", patch);
	uint64_t v = parse_value(value, base, self);
	assert_true(off + foff + fsize <= out->len);
	memcpy(out->buf + off + foff, &v, fsize); /* little-endian: low bytes */
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n'))
		s[--n] = '\0';
	return s;
}

static int run_case(char *line, int lineno)
{
	char *bar1 = strchr(line, '|'), *bar2 = bar1 ? strchr(bar1 + 1, '|') : NULL;
	char name[64], basename[64], path[256];
	struct image base, out;
	struct object *obj = NULL;
	struct err e = {{0}};

	if (!bar2 || sscanf(line, "%63s %63s", name, basename) != 2)
		fail_msg("%s:%d: malformed case", CASES, lineno);
	*bar1 = *bar2 = '\0';
	char *expected = trim(bar2 + 1), *patches = bar1 + 1;
	snprintf(path, sizeof(path), PROGS "/%s.bpf.o", basename);
	base.buf = (uint8_t *)test_read_file(path, &base.len);
	assert_non_null(base.buf);
	out.len = base.len;
	out.buf = malloc(base.len + 1);
	memcpy(out.buf, base.buf, base.len);
	char *save = NULL;
	for (char *p = strtok_r(patches, ";", &save); p; p = strtok_r(NULL, ";", &save))
		apply_patch(&base, &out, p);
	int rc = object_open_mem(out.buf, out.len, name, &obj, &e);
	int ok = rc < 0 && !obj && !strncmp(e.msg, name, strlen(name)) &&
		 strstr(e.msg, expected);
	if (!ok)
		print_error("%s:%d: case %s: got rc %d, message \"%s\"\n    expected \"%s\"\n",
			    CASES, lineno, name, rc, e.msg, expected);
	object_free(obj);
	free(out.buf);
	free(base.buf);
	return ok;
}

static void test_corpus_cases(void **state)
{
	char *text = test_read_file(CASES, NULL), *save = NULL;
	int lineno = 0, cases = 0, failed = 0;

	assert_non_null(text);
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		if (*trim(line) == '\0' || line[0] == '#')
			continue;
		cases++;
		failed += !run_case(line, lineno);
	}
	free(text);
	assert_true(cases >= 60);
	assert_int_equal(failed, 0);
}

/* Load or fail clearly; never crash (ASan/UBSan watch the build). */
static void expect_clean(const uint8_t *buf, size_t len, const char *what)
{
	struct object *obj = NULL;
	struct err e = {{0}};

	if (object_open_mem(buf, len, "mutant.o", &obj, &e) == 0) {
		assert_non_null(obj);
		object_free(obj);
		return;
	}
	assert_null(obj);
	if (strncmp(e.msg, "mutant.o: ", 10))
		fail_msg("%s: message does not name the file: \"%s\"", what, e.msg);
}

static void test_truncations_and_byte_flips(void **state)
{
	DIR *d = opendir(PROGS);
	struct dirent *de;
	int files = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		char path[512], what[600];
		size_t len;
		if (!strstr(de->d_name, ".bpf.o"))
			continue;
		snprintf(path, sizeof(path), PROGS "/%s", de->d_name);
		uint8_t *good = (uint8_t *)test_read_file(path, &len);
		assert_non_null(good);
		files++;
		/* Every truncation: a fresh exact-size copy so ASan sees overreads. */
		for (size_t n = 0; n < len; n++) {
			uint8_t *cut = malloc(n ? n : 1);
			memcpy(cut, good, n);
			snprintf(what, sizeof(what), "%s truncated to %zu", path, n);
			expect_clean(cut, n, what);
			free(cut);
		}
		/* Headers, section headers, symbols: each byte set to 0xff and 0x80. */
		uint8_t *mut = malloc(len);
		const Elf64_Ehdr *h = (const void *)good;
		for (size_t i = 0; i < len; i++) {
			int in_hdrs = i < sizeof(*h) ||
				      (i >= h->e_shoff && i < h->e_shoff + h->e_shnum * sizeof(Elf64_Shdr));
			if (!in_hdrs && i % 7)
				continue; /* elsewhere: every 7th byte */
			for (int v = 0; v < 2; v++) {
				memcpy(mut, good, len);
				mut[i] = v ? 0x80 : 0xff;
				snprintf(what, sizeof(what), "%s byte %zu = 0x%02x", path, i, mut[i]);
				expect_clean(mut, len, what);
			}
		}
		free(mut);
		free(good);
	}
	closedir(d);
	assert_true(files >= 12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus_cases),
		cmocka_unit_test(test_truncations_and_byte_flips),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
