/* SPDX-License-Identifier: MIT */
#include "btf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest chain of modifiers/typedefs/arrays/vars followed (as the kernel). */
enum { BTF_MAX_CHAIN = 32 };

/* The .BTF.ext header (libbpf's struct btf_ext_header; not in linux/btf.h). */
struct btf_ext_header {
	uint16_t magic;
	uint8_t version;
	uint8_t flags;
	uint32_t hdr_len;
	uint32_t func_info_off;
	uint32_t func_info_len;
	uint32_t line_info_off;
	uint32_t line_info_len;
};

struct btf_ext_sec {
	const char *name; /* points into the string section */
	struct btf_line *lines;
	size_t line_cnt;
	struct btf_func *funcs;
	size_t func_cnt;
	size_t core_cnt;  /* CO-RE relocation records (checked, not applied) */
};

struct btf {
	const char *name;     /* file name for messages, not owned */
	uint32_t *data;       /* copy of the section, 4-byte aligned */
	size_t len;
	const char *strs;
	uint32_t str_len;
	const uint8_t *types; /* start of the type section */
	uint32_t *type_off;   /* byte offset in types of each id (0 unused) */
	uint32_t type_cnt;    /* including void */
	struct btf_ext_sec *ext;
	size_t ext_cnt;
};

static int btf_range_ok(uint64_t off, uint64_t size, uint64_t len)
{
	return off <= len && size <= len - off;
}

/* Bytes that follow the common struct btf_type for a record of kind k. */
static int btf_extra_size(const struct btf_type *t, size_t *extra)
{
	uint32_t vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT: *extra = sizeof(uint32_t); return 0;
	case BTF_KIND_PTR: case BTF_KIND_FWD: case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE: case BTF_KIND_CONST: case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC: case BTF_KIND_FLOAT: case BTF_KIND_TYPE_TAG:
		*extra = 0;
		return 0;
	case BTF_KIND_ARRAY: *extra = sizeof(struct btf_array); return 0;
	case BTF_KIND_STRUCT: case BTF_KIND_UNION:
		*extra = (size_t)vlen * sizeof(struct btf_member);
		return 0;
	case BTF_KIND_ENUM: *extra = (size_t)vlen * sizeof(struct btf_enum); return 0;
	case BTF_KIND_ENUM64: *extra = (size_t)vlen * sizeof(struct btf_enum64); return 0;
	case BTF_KIND_FUNC_PROTO: *extra = (size_t)vlen * sizeof(struct btf_param); return 0;
	case BTF_KIND_VAR: *extra = sizeof(struct btf_var); return 0;
	case BTF_KIND_DATASEC:
		*extra = (size_t)vlen * sizeof(struct btf_var_secinfo);
		return 0;
	case BTF_KIND_DECL_TAG: *extra = sizeof(struct btf_decl_tag); return 0;
	default: return -1;
	}
}

static int btf_check_ref(const struct btf *btf, uint32_t id, uint32_t ref,
			 const char *what, struct err *e)
{
	if (ref < btf->type_cnt)
		return 0;
	return err_set(e, EINVAL,
		       "%s: .BTF: type id %u (offset %u): %s refers to type id %u out of "
		       "range (%u types)",
		       btf->name, id, btf->type_off[id], what, ref, btf->type_cnt - 1);
}

static int btf_check_name(const struct btf *btf, uint32_t id, uint32_t off,
			  struct err *e)
{
	if (off < btf->str_len)
		return 0;
	return err_set(e, EINVAL,
		       "%s: .BTF: type id %u (offset %u): name offset %u out of range of "
		       "the string section (%u bytes)",
		       btf->name, id, btf->type_off[id], off, btf->str_len);
}

/* The type a modifier, typedef, array or var leads to (0: none). */
static uint32_t btf_chain_next(const struct btf *btf, const struct btf_type *t)
{
	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_TYPEDEF: case BTF_KIND_VOLATILE: case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT: case BTF_KIND_TYPE_TAG: case BTF_KIND_VAR:
		return t->type;
	case BTF_KIND_ARRAY: {
		struct btf_array a;
		memcpy(&a, t + 1, sizeof(a));
		return a.type;
	}
	default:
		return 0;
	}
}

/* Every reference and name of type id inside the BTF. */
static int btf_check_type(const struct btf *btf, uint32_t id, struct err *e)
{
	const struct btf_type *t = btf_type_by_id(btf, id);
	uint32_t vlen = BTF_INFO_VLEN(t->info);
	int err = btf_check_name(btf, id, t->name_off, e);

	if (err)
		return err;
	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
		if (t->size == 0 || t->size > 16)
			return err_set(e, EINVAL, "%s: .BTF: type id %u (offset %u): bad int size %u",
				       btf->name, id, btf->type_off[id], t->size);
		return 0;
	case BTF_KIND_PTR: case BTF_KIND_TYPEDEF: case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST: case BTF_KIND_RESTRICT: case BTF_KIND_TYPE_TAG:
	case BTF_KIND_VAR: case BTF_KIND_DECL_TAG:
		return btf_check_ref(btf, id, t->type, "type", e);
	case BTF_KIND_FUNC:
		err = btf_check_ref(btf, id, t->type, "prototype", e);
		if (!err && BTF_INFO_KIND(btf_type_by_id(btf, t->type) ?
					  btf_type_by_id(btf, t->type)->info : 0) !=
				    BTF_KIND_FUNC_PROTO)
			err = err_set(e, EINVAL,
				      "%s: .BTF: type id %u (offset %u): function's type %u is "
				      "not a prototype",
				      btf->name, id, btf->type_off[id], t->type);
		return err;
	case BTF_KIND_ARRAY: {
		struct btf_array a;
		memcpy(&a, t + 1, sizeof(a));
		err = btf_check_ref(btf, id, a.type, "array element", e);
		return err ? err : btf_check_ref(btf, id, a.index_type, "array index", e);
	}
	case BTF_KIND_STRUCT: case BTF_KIND_UNION:
		for (uint32_t i = 0; i < vlen && !err; i++) {
			struct btf_member m;
			memcpy(&m, (const struct btf_member *)(t + 1) + i, sizeof(m));
			err = btf_check_name(btf, id, m.name_off, e);
			err = err ? err : btf_check_ref(btf, id, m.type, "member", e);
		}
		return err;
	case BTF_KIND_ENUM:
		for (uint32_t i = 0; i < vlen && !err; i++) {
			struct btf_enum v;
			memcpy(&v, (const struct btf_enum *)(t + 1) + i, sizeof(v));
			err = btf_check_name(btf, id, v.name_off, e);
		}
		return err;
	case BTF_KIND_ENUM64:
		for (uint32_t i = 0; i < vlen && !err; i++) {
			struct btf_enum64 v;
			memcpy(&v, (const struct btf_enum64 *)(t + 1) + i, sizeof(v));
			err = btf_check_name(btf, id, v.name_off, e);
		}
		return err;
	case BTF_KIND_FUNC_PROTO:
		err = btf_check_ref(btf, id, t->type, "return type", e);
		for (uint32_t i = 0; i < vlen && !err; i++) {
			struct btf_param p;
			memcpy(&p, (const struct btf_param *)(t + 1) + i, sizeof(p));
			err = btf_check_name(btf, id, p.name_off, e);
			err = err ? err : btf_check_ref(btf, id, p.type, "parameter", e);
		}
		return err;
	case BTF_KIND_DATASEC:
		for (uint32_t i = 0; i < vlen && !err; i++) {
			struct btf_var_secinfo v;
			memcpy(&v, (const struct btf_var_secinfo *)(t + 1) + i, sizeof(v));
			err = btf_check_ref(btf, id, v.type, "variable", e);
		}
		return err;
	default: /* FWD, FLOAT */
		return 0;
	}
}

/* A chain of modifiers/typedefs/arrays/vars from id must end. */
static int btf_check_chain(const struct btf *btf, uint32_t id, struct err *e)
{
	uint32_t cur = id;

	for (int depth = 0; depth <= BTF_MAX_CHAIN; depth++) {
		const struct btf_type *t = btf_type_by_id(btf, cur);
		if (!t)
			return 0;
		uint32_t next = btf_chain_next(btf, t);
		if (!next)
			return 0;
		cur = next;
	}
	return err_set(e, ELOOP,
		       "%s: .BTF: type id %u (offset %u): type chain loops or is deeper "
		       "than %d (reached type id %u)",
		       btf->name, id, btf->type_off[id], BTF_MAX_CHAIN, cur);
}

static int btf_parse_header(struct btf *btf, struct btf_header *h, struct err *e)
{
	if (btf->len < sizeof(*h))
		return err_set(e, EINVAL, "%s: .BTF: section too short for a header (%zu bytes)",
			       btf->name, btf->len);
	memcpy(h, btf->data, sizeof(*h));
	if (h->magic != BTF_MAGIC)
		return err_set(e, EINVAL, "%s: .BTF: bad magic 0x%04x, expected 0x%04x",
			       btf->name, h->magic, BTF_MAGIC);
	if (h->version != BTF_VERSION)
		return err_set(e, EINVAL, "%s: .BTF: unsupported version %u", btf->name,
			       h->version);
	if (h->hdr_len < sizeof(*h) || h->hdr_len > btf->len)
		return err_set(e, EINVAL,
			       "%s: .BTF: bad header length %u (minimum %zu, section %zu bytes)",
			       btf->name, h->hdr_len, sizeof(*h), btf->len);
	uint64_t body = btf->len - h->hdr_len;
	if (!btf_range_ok(h->type_off, h->type_len, body) || h->type_off % 4 || h->hdr_len % 4)
		return err_set(e, EINVAL,
			       "%s: .BTF: type section (offset %u + %u) outside the section "
			       "(%llu bytes after the header) or misaligned",
			       btf->name, h->type_off, h->type_len, (unsigned long long)body);
	if (!btf_range_ok(h->str_off, h->str_len, body))
		return err_set(e, EINVAL,
			       "%s: .BTF: string section (offset %u + %u) outside the section "
			       "(%llu bytes after the header)",
			       btf->name, h->str_off, h->str_len, (unsigned long long)body);
	const char *strs = (const char *)btf->data + h->hdr_len + h->str_off;
	if (h->str_len == 0 || strs[0] != '\0' || strs[h->str_len - 1] != '\0')
		return err_set(e, EINVAL,
			       "%s: .BTF: string section must start and end with a NUL byte",
			       btf->name);
	btf->strs = strs;
	btf->str_len = h->str_len;
	btf->types = (const uint8_t *)btf->data + h->hdr_len + h->type_off;
	return 0;
}

/* Walk the records once to number them; then check each. */
static int btf_index_types(struct btf *btf, uint32_t type_len, struct err *e)
{
	size_t cap = 64, off = 0;

	btf->type_cnt = 1;
	btf->type_off = calloc(cap, sizeof(*btf->type_off));
	if (!btf->type_off)
		return err_set(e, ENOMEM, "%s: .BTF: out of memory", btf->name);
	while (off < type_len) {
		struct btf_type t;
		size_t extra;
		uint32_t id = btf->type_cnt;

		if (type_len - off < sizeof(t))
			return err_set(e, EINVAL,
				       "%s: .BTF: type id %u (offset %zu): record truncated "
				       "(%zu bytes left)",
				       btf->name, id, off, type_len - off);
		memcpy(&t, btf->types + off, sizeof(t));
		if (btf_extra_size(&t, &extra))
			return err_set(e, EINVAL, "%s: .BTF: type id %u (offset %zu): unknown kind %u",
				       btf->name, id, off, BTF_INFO_KIND(t.info));
		if (extra > type_len - off - sizeof(t))
			return err_set(e, EINVAL,
				       "%s: .BTF: type id %u (offset %zu): record of %zu bytes "
				       "extends past the type section (%u bytes)",
				       btf->name, id, off, sizeof(t) + extra, type_len);
		if (btf->type_cnt == cap) {
			uint32_t *n = realloc(btf->type_off, 2 * cap * sizeof(*n));
			if (!n)
				return err_set(e, ENOMEM, "%s: .BTF: out of memory", btf->name);
			btf->type_off = n;
			cap *= 2;
		}
		btf->type_off[btf->type_cnt++] = (uint32_t)off;
		off += sizeof(t) + extra;
	}
	return 0;
}

int btf_parse(const void *data, size_t len, const char *name, struct btf **out,
	      struct err *e)
{
	struct btf_header h = {0};
	struct btf *btf = calloc(1, sizeof(*btf));
	int err;

	*out = NULL;
	if (!btf)
		return err_set(e, ENOMEM, "%s: .BTF: out of memory", name);
	btf->name = name;
	btf->len = len;
	/* A copy at 4-byte alignment lets the records be read in place. */
	btf->data = malloc(len + 4);
	if (!btf->data) {
		free(btf);
		return err_set(e, ENOMEM, "%s: .BTF: out of memory", name);
	}
	memcpy(btf->data, data, len);
	err = btf_parse_header(btf, &h, e);
	err = err ? err : btf_index_types(btf, h.type_len, e);
	for (uint32_t id = 1; !err && id < btf->type_cnt; id++)
		err = btf_check_type(btf, id, e);
	for (uint32_t id = 1; !err && id < btf->type_cnt; id++)
		err = btf_check_chain(btf, id, e);
	if (err) {
		btf_free(btf);
		return err;
	}
	*out = btf;
	return 0;
}

void btf_free(struct btf *btf)
{
	if (!btf)
		return;
	for (size_t i = 0; i < btf->ext_cnt; i++) {
		free(btf->ext[i].lines);
		free(btf->ext[i].funcs);
	}
	free(btf->ext);
	free(btf->type_off);
	free(btf->data);
	free(btf);
}

uint32_t btf_type_cnt(const struct btf *btf)
{
	return btf->type_cnt;
}

const struct btf_type *btf_type_by_id(const struct btf *btf, uint32_t id)
{
	if (id == 0 || id >= btf->type_cnt)
		return NULL;
	return (const struct btf_type *)(btf->types + btf->type_off[id]);
}

const char *btf_str(const struct btf *btf, uint32_t off)
{
	return off < btf->str_len ? btf->strs + off : NULL;
}

const char *btf_type_name(const struct btf *btf, uint32_t id)
{
	const struct btf_type *t = btf_type_by_id(btf, id);
	return t ? btf_str(btf, t->name_off) : "";
}

uint32_t btf_skip_modifiers(const struct btf *btf, uint32_t id)
{
	/* btf_parse bounded every such chain. */
	for (;;) {
		const struct btf_type *t = btf_type_by_id(btf, id);
		if (!t)
			return id;
		switch (BTF_INFO_KIND(t->info)) {
		case BTF_KIND_TYPEDEF: case BTF_KIND_VOLATILE: case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT: case BTF_KIND_TYPE_TAG:
			id = t->type;
			break;
		default:
			return id;
		}
	}
}

int btf_type_size(const struct btf *btf, uint32_t id, uint64_t *size, struct err *e)
{
	uint64_t mult = 1;

	/* Arrays multiply; modifiers pass through; the chain is bounded. */
	for (;;) {
		const struct btf_type *t = btf_type_by_id(btf, id);
		if (!t)
			return err_set(e, EINVAL, "%s: .BTF: type id %u (void) has no size",
				       btf->name, id);
		switch (BTF_INFO_KIND(t->info)) {
		case BTF_KIND_INT: case BTF_KIND_STRUCT: case BTF_KIND_UNION:
		case BTF_KIND_ENUM: case BTF_KIND_ENUM64: case BTF_KIND_FLOAT:
		case BTF_KIND_DATASEC:
			if (t->size && mult > UINT64_MAX / t->size)
				goto overflow;
			*size = mult * t->size;
			return 0;
		case BTF_KIND_PTR:
			if (mult > UINT64_MAX / 8)
				goto overflow;
			*size = mult * 8;
			return 0;
		case BTF_KIND_ARRAY: {
			struct btf_array a;
			memcpy(&a, t + 1, sizeof(a));
			if (a.nelems && mult > UINT64_MAX / a.nelems)
				goto overflow;
			mult *= a.nelems;
			id = a.type;
			break;
		}
		case BTF_KIND_TYPEDEF: case BTF_KIND_VOLATILE: case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT: case BTF_KIND_TYPE_TAG: case BTF_KIND_VAR:
			id = t->type;
			break;
		default:
			return err_set(e, EINVAL, "%s: .BTF: type id %u (kind %u) has no size",
				       btf->name, id, BTF_INFO_KIND(t->info));
		}
	}
overflow:
	return err_set(e, EOVERFLOW, "%s: .BTF: size of type id %u overflows", btf->name, id);
}

uint32_t btf_find_datasec(const struct btf *btf, const char *name)
{
	for (uint32_t id = 1; id < btf->type_cnt; id++) {
		const struct btf_type *t = btf_type_by_id(btf, id);
		if (BTF_INFO_KIND(t->info) == BTF_KIND_DATASEC &&
		    !strcmp(btf_str(btf, t->name_off), name))
			return id;
	}
	return 0;
}

/* __uint(name, val) is `int (*name)[val]`: val is the array's length. */
static int btf_map_uint(const struct btf *btf, const char *map, const char *attr,
			uint32_t type, uint32_t *val, struct err *e)
{
	const struct btf_type *p = btf_type_by_id(btf, btf_skip_modifiers(btf, type));
	const struct btf_type *a =
		p && BTF_INFO_KIND(p->info) == BTF_KIND_PTR
			? btf_type_by_id(btf, btf_skip_modifiers(btf, p->type))
			: NULL;

	if (!a || BTF_INFO_KIND(a->info) != BTF_KIND_ARRAY)
		return err_set(e, EINVAL,
			       "%s: map '%s': attribute '%s' is not __uint() (a pointer to "
			       "an array)",
			       btf->name, map, attr);
	struct btf_array arr;
	memcpy(&arr, a + 1, sizeof(arr));
	*val = arr.nelems;
	return 0;
}

/* __type(name, T) is `typeof(T) *name`: the size of T. */
static int btf_map_type_size(const struct btf *btf, const char *map, const char *attr,
			     uint32_t type, uint32_t *val, struct err *e)
{
	const struct btf_type *p = btf_type_by_id(btf, btf_skip_modifiers(btf, type));
	uint64_t size;

	if (!p || BTF_INFO_KIND(p->info) != BTF_KIND_PTR)
		return err_set(e, EINVAL, "%s: map '%s': attribute '%s' is not __type() (a pointer)",
			       btf->name, map, attr);
	int err = btf_type_size(btf, p->type, &size, e);
	if (err) {
		err_prefix(e, "%s: map '%s': attribute '%s': ", btf->name, map, attr);
		return err;
	}
	if (size > UINT32_MAX)
		return err_set(e, E2BIG, "%s: map '%s': %s of %llu bytes is too large",
			       btf->name, map, attr, (unsigned long long)size);
	*val = (uint32_t)size;
	return 0;
}

int btf_map_def(const struct btf *btf, uint32_t var_id, struct map_def *def,
		struct err *e)
{
	const struct btf_type *var = btf_type_by_id(btf, var_id);
	const char *name = btf_type_name(btf, var_id);
	uint32_t key_type_size = 0, value_type_size = 0, ignored;
	int err = 0;

	memset(def, 0, sizeof(*def));
	if (!var || BTF_INFO_KIND(var->info) != BTF_KIND_VAR)
		return err_set(e, EINVAL, "%s: .maps: type id %u is not a variable", btf->name,
			       var_id);
	snprintf(def->name, sizeof(def->name), "%s", name);
	const struct btf_type *st = btf_type_by_id(btf, btf_skip_modifiers(btf, var->type));
	if (!st || BTF_INFO_KIND(st->info) != BTF_KIND_STRUCT)
		return err_set(e, EINVAL, "%s: map '%s': definition is not a struct", btf->name,
			       name);
	for (uint32_t i = 0; i < BTF_INFO_VLEN(st->info) && !err; i++) {
		struct btf_member m;
		memcpy(&m, (const struct btf_member *)(st + 1) + i, sizeof(m));
		const char *attr = btf_str(btf, m.name_off);
		if (!strcmp(attr, "type"))
			err = btf_map_uint(btf, name, attr, m.type, &def->type, e);
		else if (!strcmp(attr, "max_entries"))
			err = btf_map_uint(btf, name, attr, m.type, &def->max_entries, e);
		else if (!strcmp(attr, "map_flags"))
			err = btf_map_uint(btf, name, attr, m.type, &def->flags, e);
		else if (!strcmp(attr, "key_size"))
			err = btf_map_uint(btf, name, attr, m.type, &def->key_size, e);
		else if (!strcmp(attr, "value_size"))
			err = btf_map_uint(btf, name, attr, m.type, &def->value_size, e);
		else if (!strcmp(attr, "key"))
			err = btf_map_type_size(btf, name, attr, m.type, &key_type_size, e);
		else if (!strcmp(attr, "value"))
			err = btf_map_type_size(btf, name, attr, m.type, &value_type_size, e);
		else if (!strcmp(attr, "pinning") || !strcmp(attr, "numa_node") ||
			 !strcmp(attr, "map_extra"))
			/* Kernel placement hints: meaningless for gpuext's maps. */
			err = btf_map_uint(btf, name, attr, m.type, &ignored, e);
		else
			err = err_set(e, ENOTSUP, "%s: map '%s': unsupported attribute '%s'",
				      btf->name, name, attr);
	}
	if (err)
		return err;
	if (key_type_size && def->key_size && key_type_size != def->key_size)
		return err_set(e, EINVAL, "%s: map '%s': key type size %u != key_size %u",
			       btf->name, name, key_type_size, def->key_size);
	if (value_type_size && def->value_size && value_type_size != def->value_size)
		return err_set(e, EINVAL, "%s: map '%s': value type size %u != value_size %u",
			       btf->name, name, value_type_size, def->value_size);
	if (key_type_size)
		def->key_size = key_type_size;
	if (value_type_size)
		def->value_size = value_type_size;
	return 0;
}

static struct btf_ext_sec *btf_ext_sec_get(struct btf *btf, const char *name)
{
	for (size_t i = 0; i < btf->ext_cnt; i++)
		if (!strcmp(btf->ext[i].name, name))
			return &btf->ext[i];
	struct btf_ext_sec *n = realloc(btf->ext, (btf->ext_cnt + 1) * sizeof(*n));
	if (!n)
		return NULL;
	btf->ext = n;
	n = &btf->ext[btf->ext_cnt++];
	memset(n, 0, sizeof(*n));
	n->name = name;
	return n;
}

static int btf_line_cmp(const void *a, const void *b)
{
	const struct btf_line *x = a, *y = b;
	return (x->insn > y->insn) - (x->insn < y->insn);
}

static int btf_func_cmp(const void *a, const void *b)
{
	const struct btf_func *x = a, *y = b;
	return (x->insn > y->insn) - (x->insn < y->insn);
}

/* One record of func_info (is_line 0) or line_info (is_line 1). */
static int btf_ext_record(struct btf *btf, struct btf_ext_sec *sec, int is_line,
			  const uint8_t *rec, size_t off, struct err *e)
{
	uint32_t f[4];

	memcpy(f, rec, is_line ? 16 : 8);
	if (f[0] % 8)
		return err_set(e, EINVAL,
			       "%s: .BTF.ext: %s record at offset %zu: instruction offset %u "
			       "is not a multiple of 8",
			       btf->name, is_line ? "line_info" : "func_info", off, f[0]);
	if (!is_line) {
		const struct btf_type *t = btf_type_by_id(btf, f[1]);
		if (!t || BTF_INFO_KIND(t->info) != BTF_KIND_FUNC)
			return err_set(e, EINVAL,
				       "%s: .BTF.ext: func_info record at offset %zu: type id %u "
				       "is not a function",
				       btf->name, off, f[1]);
		sec->funcs[sec->func_cnt++] = (struct btf_func){f[0] / 8, f[1]};
		return 0;
	}
	const char *file = btf_str(btf, f[1]), *text = btf_str(btf, f[2]);
	if (!file || !text)
		return err_set(e, EINVAL,
			       "%s: .BTF.ext: line_info record at offset %zu: string offset %u "
			       "out of range (%u bytes)",
			       btf->name, off, file ? f[2] : f[1], btf->str_len);
	/* line_col packs the line in the high 22 bits, the column in the low 10. */
	sec->lines[sec->line_cnt++] = (struct btf_line){
		.insn = f[0] / 8,
		.file = file,
		.text = *text ? text : NULL,
		.line = f[3] >> 10,
		.col = f[3] & 0x3ff,
	};
	return 0;
}

/*
 * A func_info or line_info block: u32 record size, then per ELF section
 * {u32 section name offset, u32 count, count records}.
 */
static int btf_ext_block(struct btf *btf, const uint8_t *p, uint32_t len, int is_line,
			 struct err *e)
{
	const char *what = is_line ? "line_info" : "func_info";
	uint32_t min_rec = is_line ? 16 : 8, rec_size, hdr[2];
	size_t off = 4;

	if (len == 0)
		return 0;
	if (len < 4)
		return err_set(e, EINVAL, "%s: .BTF.ext: %s block of %u bytes is truncated",
			       btf->name, what, len);
	memcpy(&rec_size, p, 4);
	if (rec_size < min_rec || rec_size > 1024)
		return err_set(e, EINVAL, "%s: .BTF.ext: %s record size %u out of range",
			       btf->name, what, rec_size);
	while (off < len) {
		if (len - off < 8)
			return err_set(e, EINVAL,
				       "%s: .BTF.ext: %s section header at offset %zu truncated",
				       btf->name, what, off);
		memcpy(hdr, p + off, 8);
		const char *name = btf_str(btf, hdr[0]);
		if (!name)
			return err_set(e, EINVAL,
				       "%s: .BTF.ext: %s at offset %zu: section name offset %u "
				       "out of range (%u bytes)",
				       btf->name, what, off, hdr[0], btf->str_len);
		off += 8;
		if ((uint64_t)hdr[1] * rec_size > len - off)
			return err_set(e, EINVAL,
				       "%s: .BTF.ext: %s of section '%s': %u records of %u bytes "
				       "extend past the block (%zu bytes left)",
				       btf->name, what, name, hdr[1], rec_size, len - off);
		struct btf_ext_sec *sec = btf_ext_sec_get(btf, name);
		if (!sec)
			return err_set(e, ENOMEM, "%s: .BTF.ext: out of memory", btf->name);
		size_t have = is_line ? sec->line_cnt : sec->func_cnt;
		void **arr = is_line ? (void **)&sec->lines : (void **)&sec->funcs;
		size_t esz = is_line ? sizeof(struct btf_line) : sizeof(struct btf_func);
		void *n = realloc(*arr, (have + hdr[1] + 1) * esz);
		if (!n)
			return err_set(e, ENOMEM, "%s: .BTF.ext: out of memory", btf->name);
		*arr = n;
		for (uint32_t i = 0; i < hdr[1]; i++, off += rec_size) {
			int err = btf_ext_record(btf, sec, is_line, p + off, off, e);
			if (err)
				return err;
		}
	}
	return 0;
}

/*
 * The CO-RE block: u32 record size, then per ELF section {u32 name offset,
 * u32 count, count records of {insn_off, type_id, access_str_off, kind}}.
 */
static int btf_ext_core_block(struct btf *btf, const uint8_t *p, uint32_t len,
			      struct err *e)
{
	uint32_t rec_size, hdr[2], rec[4];
	size_t off = 4;

	if (len == 0)
		return 0;
	if (len < 4)
		return err_set(e, EINVAL, "%s: .BTF.ext: CO-RE block of %u bytes is truncated",
			       btf->name, len);
	memcpy(&rec_size, p, 4);
	if (rec_size < sizeof(rec) || rec_size > 1024)
		return err_set(e, EINVAL, "%s: .BTF.ext: CO-RE record size %u out of range",
			       btf->name, rec_size);
	while (off < len) {
		if (len - off < 8)
			return err_set(e, EINVAL,
				       "%s: .BTF.ext: CO-RE section header at offset %zu truncated",
				       btf->name, off);
		memcpy(hdr, p + off, 8);
		const char *name = btf_str(btf, hdr[0]);
		if (!name)
			return err_set(e, EINVAL,
				       "%s: .BTF.ext: CO-RE at offset %zu: section name offset %u "
				       "out of range (%u bytes)",
				       btf->name, off, hdr[0], btf->str_len);
		off += 8;
		if ((uint64_t)hdr[1] * rec_size > len - off)
			return err_set(e, EINVAL,
				       "%s: .BTF.ext: CO-RE of section '%s': %u records of %u "
				       "bytes extend past the block (%zu bytes left)",
				       btf->name, name, hdr[1], rec_size, len - off);
		for (uint32_t i = 0; i < hdr[1]; i++, off += rec_size) {
			memcpy(rec, p + off, sizeof(rec));
			if (rec[0] % 8 || rec[1] >= btf->type_cnt || !btf_str(btf, rec[2]))
				return err_set(e, EINVAL,
					       "%s: .BTF.ext: CO-RE record at offset %zu: bad "
					       "instruction offset %u, type id %u or access "
					       "string offset %u",
					       btf->name, off, rec[0], rec[1], rec[2]);
			/* A flavour (pt_regs___mine) asks for another layout. */
			const char *tname = btf_type_name(btf, rec[1]);
			if (strstr(tname, "___"))
				return err_set(e, ENOTSUP,
					       "%s: section '%s': instruction %u: CO-RE relocation "
					       "against the flavoured type '%s' (gpuext applies no "
					       "CO-RE relocations: only the compiled layout exists)",
					       btf->name, name, rec[0] / 8, tname);
		}
		struct btf_ext_sec *sec = btf_ext_sec_get(btf, name);
		if (!sec)
			return err_set(e, ENOMEM, "%s: .BTF.ext: out of memory", btf->name);
		sec->core_cnt += hdr[1];
	}
	return 0;
}

int btf_ext_parse(struct btf *btf, const void *data, size_t len, struct err *e)
{
	struct btf_ext_header h;
	int err;

	if (len < sizeof(h))
		return err_set(e, EINVAL, "%s: .BTF.ext: section too short for a header (%zu bytes)",
			       btf->name, len);
	memcpy(&h, data, sizeof(h));
	if (h.magic != BTF_MAGIC)
		return err_set(e, EINVAL, "%s: .BTF.ext: bad magic 0x%04x, expected 0x%04x",
			       btf->name, h.magic, BTF_MAGIC);
	if (h.version != BTF_VERSION)
		return err_set(e, EINVAL, "%s: .BTF.ext: unsupported version %u", btf->name,
			       h.version);
	if (h.hdr_len < sizeof(h) || h.hdr_len > len)
		return err_set(e, EINVAL,
			       "%s: .BTF.ext: bad header length %u (minimum %zu, section %zu bytes)",
			       btf->name, h.hdr_len, sizeof(h), len);
	uint64_t body = len - h.hdr_len;
	const uint8_t *p = (const uint8_t *)data + h.hdr_len;
	if (!btf_range_ok(h.func_info_off, h.func_info_len, body) ||
	    !btf_range_ok(h.line_info_off, h.line_info_len, body))
		return err_set(e, EINVAL,
			       "%s: .BTF.ext: func_info (offset %u + %u) or line_info (offset "
			       "%u + %u) outside the section (%llu bytes after the header)",
			       btf->name, h.func_info_off, h.func_info_len, h.line_info_off,
			       h.line_info_len, (unsigned long long)body);
	err = btf_ext_block(btf, p + h.func_info_off, h.func_info_len, 0, e);
	err = err ? err : btf_ext_block(btf, p + h.line_info_off, h.line_info_len, 1, e);
	if (err)
		return err;
	/*
	 * A longer header adds CO-RE relocation records.  They are checked and
	 * counted, not applied: gpuext's contexts have one fixed layout, that
	 * of the headers the program was compiled with, so the compiled
	 * offsets stand -- except for a local "flavour" of a type, which
	 * declares a layout of its own and is refused.
	 */
	if (h.hdr_len >= sizeof(h) + 8) {
		uint32_t core[2];
		memcpy(core, (const uint8_t *)data + sizeof(h), sizeof(core));
		if (!btf_range_ok(core[0], core[1], body))
			return err_set(e, EINVAL,
				       "%s: .BTF.ext: CO-RE relocations (offset %u + %u) outside "
				       "the section (%llu bytes after the header)",
				       btf->name, core[0], core[1], (unsigned long long)body);
		if ((err = btf_ext_core_block(btf, p + core[0], core[1], e)))
			return err;
	}
	for (size_t i = 0; i < btf->ext_cnt; i++) {
		struct btf_ext_sec *s = &btf->ext[i];
		if (s->line_cnt)
			qsort(s->lines, s->line_cnt, sizeof(*s->lines), btf_line_cmp);
		if (s->func_cnt)
			qsort(s->funcs, s->func_cnt, sizeof(*s->funcs), btf_func_cmp);
	}
	return 0;
}

void btf_ext_lines(const struct btf *btf, const char *sec_name,
		   const struct btf_line **lines, size_t *cnt)
{
	*lines = NULL;
	*cnt = 0;
	for (size_t i = 0; btf && i < btf->ext_cnt; i++)
		if (!strcmp(btf->ext[i].name, sec_name)) {
			*lines = btf->ext[i].lines;
			*cnt = btf->ext[i].line_cnt;
		}
}

void btf_ext_funcs(const struct btf *btf, const char *sec_name,
		   const struct btf_func **funcs, size_t *cnt)
{
	*funcs = NULL;
	*cnt = 0;
	for (size_t i = 0; btf && i < btf->ext_cnt; i++)
		if (!strcmp(btf->ext[i].name, sec_name)) {
			*funcs = btf->ext[i].funcs;
			*cnt = btf->ext[i].func_cnt;
		}
}

size_t btf_ext_core_relo_cnt(const struct btf *btf)
{
	size_t n = 0;
	for (size_t i = 0; btf && i < btf->ext_cnt; i++)
		n += btf->ext[i].core_cnt;
	return n;
}
