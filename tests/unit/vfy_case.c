/* SPDX-License-Identifier: MIT */
/* vfy_case.c - verifier corpus cases (see vfy_case.h). */
#include "vfy_case.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/asm.h"
#include "bpf/prog.h"
#include "bpf/verifier.h"
#include "testutil.h"


/* Split text into "-- name" sections (text is modified). */
int vcase_parse(char *text, struct vcase *c)
{
	char *cur = NULL, **dst = NULL;
	memset(c, 0, sizeof(*c));
	c->mem_size = 64;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strncmp(line, "-- ", 3)) {
			char *name = line + 3;
			dst = !strcmp(name, "asm") ? &c->asm_text :
			      !strcmp(name, "prog-type") ? &c->prog_type :
			      !strcmp(name, "maps") ? &c->maps :
			      !strcmp(name, "opts") ? &c->opts :
			      !strcmp(name, "error") ? &c->error :
			      !strcmp(name, "mem-size") ? &cur : NULL;
			if (!dst)
				return -1;
			*dst = calloc(1, 1);
			continue;
		}
		if (!dst) /* header comments */
			continue;
		size_t old = strlen(*dst), n = strlen(line);
		char *grown = realloc(*dst, old + n + 2);
		if (!grown)
			return -1;
		memcpy(grown + old, line, n);
		grown[old + n] = '\n';
		grown[old + n + 1] = '\0';
		*dst = grown;
	}
	if (cur) {
		c->mem_size = (uint32_t)strtoul(cur, NULL, 0);
		free(cur);
	}
	if (c->error) /* one line, no newline */
		c->error[strcspn(c->error, "\n")] = '\0';
	return c->asm_text ? 0 : -1;
}

void vcase_free(struct vcase *c)
{
	free(c->asm_text);
	free(c->prog_type);
	free(c->maps);
	free(c->opts);
	free(c->error);
}

int vcase_map_defs(char *spec, struct map_def *defs, size_t *n, char *why, size_t whylen)
{
	static const struct { const char *name; uint32_t type; } types[] = {
		{"hash", MAP_TYPE_HASH}, {"array", MAP_TYPE_ARRAY},
		{"percpu_hash", MAP_TYPE_PERCPU_HASH}, {"percpu_array", MAP_TYPE_PERCPU_ARRAY},
		{"lru_hash", MAP_TYPE_LRU_HASH}, {"ringbuf", MAP_TYPE_RINGBUF},
		{"gpu_block_array", MAP_TYPE_GPU_BLOCK_ARRAY},
	};
	*n = 0;
	for (char *line = strtok(spec, "\n"); line; line = strtok(NULL, "\n")) {
		struct map_def d = {0};
		char tname[32];
		if (sscanf(line, "%31s", tname) != 1)
			continue;
		for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
			if (!strcmp(tname, types[t].name))
				d.type = types[t].type;
		const char *kv;
		if ((kv = strstr(line, "key=")))
			d.key_size = (uint32_t)strtoul(kv + 4, NULL, 0);
		if ((kv = strstr(line, "value=")))
			d.value_size = (uint32_t)strtoul(kv + 6, NULL, 0);
		if ((kv = strstr(line, "entries=")))
			d.max_entries = (uint32_t)strtoul(kv + 8, NULL, 0);
		if (strstr(line, "rdonly"))
			d.flags |= MAP_F_RDONLY_PROG;
		snprintf(d.name, sizeof(d.name), "m%zu", *n);
		if (!d.type || *n == VCASE_MAX_MAPS) {
			snprintf(why, whylen, "map '%.60s': %s", line,
				 d.type ? "too many maps" : "unknown type");
			return -1;
		}
		defs[(*n)++] = d;
	}
	return 0;
}

static int create_maps(char *spec, struct map **maps, size_t *n, char *why, size_t whylen)
{
	struct map_def defs[VCASE_MAX_MAPS];
	size_t nd;
	*n = 0;
	if (vcase_map_defs(spec, defs, &nd, why, whylen))
		return -1;
	for (; *n < nd; (*n)++) {
		struct err e;
		if (map_create(&defs[*n], &maps[*n], &e)) {
			snprintf(why, whylen, "map %zu: %.400s", *n, e.msg);
			return -1;
		}
	}
	return 0;
}

/* Verify one case; returns the verifier's result and its message in e. */
int vcase_run(const char *path, int *verdict, struct err *e, char *expect, size_t elen)
{
	size_t len;
	char *text = test_read_file(path, &len);
	struct vcase c;
	struct map *maps[VCASE_MAX_MAPS];
	size_t nmaps = 0;
	struct isa_insn *insns = NULL;
	size_t cnt = 0;
	struct prog *p = NULL;
	int rc = -1;

	if (!text || vcase_parse(text, &c)) {
		snprintf(e->msg, sizeof(e->msg), "cannot parse the case");
		free(text);
		return -1;
	}
	snprintf(expect, elen, "%s", c.error ? c.error : "");
	if (c.maps && create_maps(c.maps, maps, &nmaps, e->msg, sizeof(e->msg)))
		goto out;
	if (asm_assemble(c.asm_text, &insns, &cnt, e) || prog_from_insns(path, insns, cnt, &p, e))
		goto out;
	if (c.prog_type) {
		c.prog_type[strcspn(c.prog_type, "\n")] = '\0';
		const char *target;
		if (prog_type_from_section(c.prog_type, &p->type, &target)) {
			snprintf(e->msg, sizeof(e->msg), "unknown prog-type '%s'", c.prog_type);
			goto out;
		}
	}
	if (nmaps) {
		p->maps = calloc(nmaps, sizeof(*p->maps));
		memcpy(p->maps, maps, nmaps * sizeof(*maps));
		p->map_cnt = nmaps;
	}
	struct vfy_opts o = {.mem_size = c.mem_size};
	if (c.opts) {
		if (strstr(c.opts, "gpu"))
			o.profile = VFY_PROFILE_GPU;
		if (strstr(c.opts, "leaks"))
			o.allow_ptr_leaks = 1;
		const char *l = strstr(c.opts, "insn-limit=");
		if (l)
			o.insn_limit = (uint32_t)strtoul(l + 11, NULL, 0);
	}
	*verdict = verifier_check(p, &o, NULL, e);
	rc = 0;
out:
	prog_free(p);
	free(insns);
	for (size_t i = 0; i < nmaps; i++)
		map_free(maps[i]);
	vcase_free(&c);
	free(text);
	return rc;
}

