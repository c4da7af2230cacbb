/* SPDX-License-Identifier: MIT */
/*
 * vfy_state.c - the abstract state of one path: registers, stack bytes and
 * spilled registers of every frame, acquired references.  And the question
 * pruning rests on: does an explored state cover the current one?
 */
#include <stdlib.h>
#include <string.h>

#include "vfy.h"

const char *vfy_reg_type_name(enum vfy_reg_type t)
{
	static const char *const names[] = {
		[REG_NOT_INIT] = "uninitialized",
		[REG_SCALAR] = "scalar",
		[REG_PTR_CTX] = "ctx",
		[REG_PTR_STACK] = "fp",
		[REG_PTR_MAP_VALUE] = "map_value",
		[REG_PTR_MAP_VALUE_OR_NULL] = "map_value_or_null",
		[REG_CONST_MAP] = "map_ptr",
		[REG_PTR_RINGBUF_REC] = "ringbuf_record",
		[REG_PTR_RINGBUF_REC_OR_NULL] = "ringbuf_record_or_null",
		[REG_PTR_MEM] = "mem",
		[REG_RELEASED] = "released_record",
	};
	return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

void mark_reg_not_init(struct vfy_reg *r)
{
	memset(r, 0, sizeof(*r));
	r->type = REG_NOT_INIT;
	r->b = vfy_bounds_unknown();
}

void mark_reg_scalar(struct vfy_reg *r, struct vfy_bounds b)
{
	memset(r, 0, sizeof(*r));
	r->type = REG_SCALAR;
	r->b = b;
}

void mark_reg_unknown(struct vfy_reg *r)
{
	mark_reg_scalar(r, vfy_bounds_unknown());
}

void mark_reg_const(struct vfy_reg *r, uint64_t v)
{
	mark_reg_scalar(r, vfy_bounds_const(v));
}

struct vfy_frame *vfy_frame_new(uint32_t callsite, uint32_t subprog, uint32_t frameno)
{
	struct vfy_frame *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	for (int i = 0; i < ISA_NR_REGS; i++)
		mark_reg_not_init(&f->regs[i]);
	f->regs[ISA_REG_FP].type = REG_PTR_STACK;
	f->regs[ISA_REG_FP].frameno = (uint8_t)frameno;
	f->regs[ISA_REG_FP].b = vfy_bounds_const(0);
	f->callsite = callsite;
	f->subprog = subprog;
	return f;
}

struct vfy_state *vfy_state_new(void)
{
	return calloc(1, sizeof(struct vfy_state));
}

struct vfy_state *vfy_state_copy(const struct vfy_state *s)
{
	struct vfy_state *c = malloc(sizeof(*c));
	if (!c)
		return NULL;
	*c = *s;
	for (uint32_t i = 0; i <= s->curframe; i++) {
		c->frames[i] = malloc(sizeof(struct vfy_frame));
		if (!c->frames[i]) {
			c->curframe = i ? i - 1 : 0;
			if (!i)
				c->frames[0] = NULL;
			vfy_state_free(c);
			return NULL;
		}
		memcpy(c->frames[i], s->frames[i], sizeof(struct vfy_frame));
	}
	return c;
}

void vfy_state_free(struct vfy_state *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i <= s->curframe && i < ISA_MAX_CALL_DEPTH; i++)
		free(s->frames[i]);
	free(s);
}

void vfy_for_each_reg(struct vfy_state *s, void (*fn)(struct vfy_reg *r, void *arg), void *arg)
{
	for (uint32_t f = 0; f <= s->curframe; f++) {
		struct vfy_frame *fr = s->frames[f];
		for (int i = 0; i < ISA_NR_REGS; i++)
			fn(&fr->regs[i], arg);
		for (int i = 0; i < VFY_SLOTS; i++)
			if (fr->stype[i * 8] == SLOT_SPILL)
				fn(&fr->spill[i], arg);
	}
}

/*
 * Ids (null-check groups, references) are names local to a state: two
 * states are alike if a one-to-one renaming maps one's ids onto the other's.
 */
enum { IDMAP_SIZE = 64 };
struct idmap {
	uint32_t old[IDMAP_SIZE], cur[IDMAP_SIZE];
	unsigned n;
};

static bool check_ids(struct idmap *m, uint32_t old, uint32_t cur)
{
	if (!old || !cur)
		return old == cur;
	for (unsigned i = 0; i < m->n; i++) {
		if (m->old[i] == old)
			return m->cur[i] == cur;
		if (m->cur[i] == cur)
			return false;
	}
	if (m->n == IDMAP_SIZE)
		return false;
	m->old[m->n] = old;
	m->cur[m->n++] = cur;
	return true;
}

static bool regsafe(const struct vfy_reg *old, const struct vfy_reg *cur, struct idmap *m,
		    bool exact)
{
	/* A register the explored path never read (it would have failed). */
	if (!exact && (old->type == REG_NOT_INIT || old->type == REG_RELEASED))
		return true;
	if (old->type != cur->type)
		return false;
	switch (old->type) {
	case REG_NOT_INIT:
	case REG_RELEASED:
		return true;
	case REG_SCALAR:
		/* No path below old relied on its value (vfy_prec.c). */
		if (!exact && !old->precise)
			return true;
		/* A branch on one linked scalar bounds the others: same links. */
		if (!exact && old->id &&
		    (!check_ids(m, old->id, cur->id) || old->link != cur->link))
			return false;
		return exact ? vfy_bounds_equal(&old->b, &cur->b) : vfy_bounds_in(&old->b, &cur->b);
	default:
		break;
	}
	if (old->off != cur->off || old->map != cur->map || old->size != cur->size ||
	    old->frameno != cur->frameno)
		return false;
	if (exact ? !vfy_bounds_equal(&old->b, &cur->b) : !vfy_bounds_in(&old->b, &cur->b))
		return false;
	return check_ids(m, old->id, cur->id) && check_ids(m, old->ref_id, cur->ref_id);
}

static bool stacksafe(const struct vfy_frame *old, const struct vfy_frame *cur, struct idmap *m,
		      bool exact)
{
	static const uint64_t all_misc = 0x0101010101010101ull * SLOT_MISC;

	for (int i = 0; i < ISA_STACK_SIZE; i++) {
		/* Whole slots first: unwritten in old, or data in both. */
		if (i % 8 == 0) {
			uint64_t ow, cw;
			memcpy(&ow, &old->stype[i], 8);
			memcpy(&cw, &cur->stype[i], 8);
			if (exact && ow != cw)
				return false;
			if (ow == 0 || (ow == all_misc && cw == all_misc)) {
				i += 7;
				continue;
			}
		}
		uint8_t o = old->stype[i], c = cur->stype[i];
		if (exact && o != c)
			return false;
		switch (o) {
		case SLOT_INVALID:
			break;
		case SLOT_MISC:
			if (c == SLOT_MISC || c == SLOT_SPILL32)
				break;
			if (c == SLOT_SPILL && cur->spill[i / 8].type == REG_SCALAR)
				break;
			return false;
		case SLOT_SPILL32:
			if (c != SLOT_SPILL32)
				return false;
			if (i % 4 == 0 &&
			    (exact ? old->spill32_min[i / 4] != cur->spill32_min[i / 4] ||
					     old->spill32_max[i / 4] != cur->spill32_max[i / 4] :
				     old->spill32_min[i / 4] > cur->spill32_min[i / 4] ||
					     old->spill32_max[i / 4] < cur->spill32_max[i / 4]))
				return false;
			break;
		case SLOT_SPILL:
			if (c != SLOT_SPILL)
				return false;
			if (i % 8 == 0 && !regsafe(&old->spill[i / 8], &cur->spill[i / 8], m, exact))
				return false;
			break;
		}
	}
	return true;
}

bool vfy_states_equal(const struct vfy_env *env, const struct vfy_state *old,
		      const struct vfy_state *cur, bool exact)
{
	struct idmap m = {.n = 0};

	if (old->curframe != cur->curframe || old->nrefs != cur->nrefs)
		return false;
	for (uint32_t f = 0; f <= old->curframe; f++) {
		const struct vfy_frame *of = old->frames[f], *cf = cur->frames[f];
		if (of->callsite != cf->callsite)
			return false;
		/* A caller's registers matter as they do where the call returns. */
		uint32_t at = f == cur->curframe ? env->insn_idx : cur->frames[f + 1]->callsite + 1;
		uint16_t live = env->live[at], precise = env->precise[at];
		for (int i = 0; i < ISA_NR_REGS; i++) {
			const struct vfy_reg *o = &of->regs[i], *c = &cf->regs[i];
			if (i != ISA_REG_FP && !(live & (1u << i)))
				continue;
			if (i != ISA_REG_FP && !(precise & (1u << i)) && o->type == REG_SCALAR &&
			    c->type == REG_SCALAR)
				continue;
			if (!regsafe(o, c, &m, exact))
				return false;
		}
		if (!stacksafe(of, cf, &m, exact))
			return false;
	}
	for (uint32_t i = 0; i < old->nrefs; i++)
		if (!check_ids(&m, old->refs[i].id, cur->refs[i].id))
			return false;
	return true;
}

/* A multiplicative hash over words (and a tail of bytes); the state's
 * hash covers what regsafe(exact) compares (ids excluded). */
static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, c + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ c[i]) * 0x100000001b3ull;
	return h;
}

static uint64_t hash_reg(uint64_t h, const struct vfy_reg *r, bool value)
{
	h = hash_bytes(h, &r->type, sizeof(r->type));
	if (r->type == REG_NOT_INIT || r->type == REG_RELEASED || !value)
		return h;
	if (r->type != REG_SCALAR) {
		h = hash_bytes(h, &r->off, sizeof(r->off));
		h = hash_bytes(h, &r->map, sizeof(r->map));
		h = hash_bytes(h, &r->size, sizeof(r->size));
		h = hash_bytes(h, &r->frameno, sizeof(r->frameno));
	}
	return hash_bytes(h, &r->b, sizeof(r->b));
}

uint64_t vfy_state_hash(const struct vfy_env *env, const struct vfy_state *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	h = hash_bytes(h, &s->curframe, sizeof(s->curframe));
	h = hash_bytes(h, &s->nrefs, sizeof(s->nrefs));
	for (uint32_t f = 0; f <= s->curframe; f++) {
		const struct vfy_frame *fr = s->frames[f];
		uint32_t at = f == s->curframe ? env->insn_idx : s->frames[f + 1]->callsite + 1;
		uint16_t live = env->live[at], precise = env->precise[at];
		h = hash_bytes(h, &fr->callsite, sizeof(fr->callsite));
		for (int i = 0; i < ISA_NR_REGS; i++) {
			const struct vfy_reg *r = &fr->regs[i];
			if (i != ISA_REG_FP && !(live & (1u << i)))
				continue;
			bool value = i == ISA_REG_FP || (precise & (1u << i)) || r->type != REG_SCALAR;
			h = hash_reg(h, r, value);
		}
		h = hash_bytes(h, fr->stype, sizeof(fr->stype));
		for (int i = 0; i < VFY_SLOTS; i++)
			if (fr->stype[i * 8] == SLOT_SPILL)
				h = hash_reg(h, &fr->spill[i], true);
		for (int i = 0; i < ISA_STACK_SIZE / 4; i++)
			if (fr->stype[i * 4] == SLOT_SPILL32) {
				h = hash_bytes(h, &fr->spill32_min[i], 4);
				h = hash_bytes(h, &fr->spill32_max[i], 4);
			}
	}
	return h;
}
