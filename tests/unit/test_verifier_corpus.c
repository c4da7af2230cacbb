/* SPDX-License-Identifier: MIT */
/*
 * test_verifier_corpus.c - the verifier corpora: every program under
 * tests/verifier/reject/ must be rejected with its expected message, every
 * one under tests/verifier/accept/ accepted.  Also: every conformance case
 * (a valid program by construction) is accepted as a raw program, and
 * every compiled program of build/bpf/ is accepted.
 *
 * Case format (tests/verifier/README.md):
 *   -- asm         the program (asm.h syntax; `lddw %r1, map[0]` is map 0)
 *   -- prog-type   optional: a section name (uprobe/f, gpu/entry/k, ...); raw if absent
 *   -- mem-size    optional: bytes behind r1 of a raw program (default 64)
 *   -- maps        optional: one per line, `TYPE key=K value=V entries=N [rdonly]`,
 *                  TYPE one of hash array percpu_hash percpu_array lru_hash ringbuf
 *   -- opts        optional: `gpu` (device profile), `leaks` (allow_ptr_leaks),
 *                  `insn-limit=N`
 *   -- error       reject/ only: a substring of the expected message
 */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/asm.h"
#include "bpf/conformance.h"
#include "bpf/map.h"
#include "bpf/object.h"
#include "bpf/prog.h"
#include "bpf/verifier.h"
#include "ptx/ptx_helpers.h"

enum { MAX_MAPS = 8 };

struct vcase {
	char *asm_text, *prog_type, *maps, *opts, *error;
	uint32_t mem_size;
};

/* Split text into "-- name" sections (text is modified). */
static int parse_case(char *text, struct vcase *c)
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

static void free_case(struct vcase *c)
{
	free(c->asm_text);
	free(c->prog_type);
	free(c->maps);
	free(c->opts);
	free(c->error);
}

static int create_maps(char *spec, struct map **maps, size_t *n, char *why, size_t whylen)
{
	static const struct { const char *name; uint32_t type; } types[] = {
		{"hash", MAP_TYPE_HASH}, {"array", MAP_TYPE_ARRAY},
		{"percpu_hash", MAP_TYPE_PERCPU_HASH}, {"percpu_array", MAP_TYPE_PERCPU_ARRAY},
		{"lru_hash", MAP_TYPE_LRU_HASH}, {"ringbuf", MAP_TYPE_RINGBUF},
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
		struct err e;
		if (*n == MAX_MAPS || map_create(&d, &maps[*n], &e)) {
			snprintf(why, whylen, "map '%.60s': %.400s", line,
				 *n == MAX_MAPS ? "too many" : e.msg);
			return -1;
		}
		(*n)++;
	}
	return 0;
}

/* Verify one case; returns the verifier's result and its message in e. */
static int run_case(const char *path, int *verdict, struct err *e, char *expect, size_t elen)
{
	size_t len;
	char *text = test_read_file(path, &len);
	struct vcase c;
	struct map *maps[MAX_MAPS];
	size_t nmaps = 0;
	struct isa_insn *insns = NULL;
	size_t cnt = 0;
	struct prog *p = NULL;
	int rc = -1;

	if (!text || parse_case(text, &c)) {
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
	free_case(&c);
	free(text);
	return rc;
}

static int list_cases(const char *dir, char ***out)
{
	DIR *d = opendir(dir);
	size_t n = 0;
	char **names = NULL;
	struct dirent *de;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l < 5 || strcmp(de->d_name + l - 4, ".txt"))
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		names[n] = malloc(strlen(dir) + l + 2);
		sprintf(names[n++], "%s/%s", dir, de->d_name);
	}
	closedir(d);
	*out = names;
	return (int)n;
}

static void run_folder(const char *dir, int want_reject, int min_cases)
{
	char **names;
	int n = list_cases(dir, &names), bad = 0;

	for (int i = 0; i < n; i++) {
		struct err e = {""};
		char expect[256];
		int verdict = 0;
		if (run_case(names[i], &verdict, &e, expect, sizeof(expect))) {
			printf("%s: setup failed: %s\n", names[i], e.msg);
			bad++;
		} else if (want_reject && !verdict) {
			printf("%s: accepted, expected rejection with '%s'\n", names[i], expect);
			bad++;
		} else if (want_reject && (!expect[0] || !strstr(e.msg, expect))) {
			printf("%s: message\n    %s\n  does not contain '%s'\n", names[i], e.msg, expect);
			bad++;
		} else if (want_reject && verdict == -EFAULT) {
			printf("%s: internal error: %s\n", names[i], e.msg);
			bad++;
		} else if (!want_reject && verdict) {
			printf("%s: rejected: %s\n", names[i], e.msg);
			bad++;
		}
		if (getenv("VFY_CORPUS_TRACE"))
			printf("%s: %d: %s\n", names[i], verdict, e.msg);
		free(names[i]);
	}
	free(names);
	printf("%s: %d cases, %d wrong\n", dir, n, bad);
	assert_int_equal(bad, 0);
	assert_true(n >= min_cases);
}

static void test_reject_corpus(void **state)
{
	run_folder("tests/verifier/reject", 1, 150);
}

static void test_accept_corpus(void **state)
{
	run_folder("tests/verifier/accept", 0, 50);
}

/* Conformance programs are valid, terminating, memory-safe programs. */
static void test_conformance_accepted(void **state)
{
	char **names;
	int n = list_cases(TEST_CONFORMANCE_DIR, &names), bad = 0, rejected = 0;

	assert_true(n > 300);
	for (int i = 0; i < n; i++) {
		struct conf_case c;
		struct err e;
		struct prog *p = NULL;
		if (conf_case_load(names[i], &c, &e)) {
			printf("%s: %s\n", names[i], e.msg);
			bad++;
			free(names[i]);
			continue;
		}
		if (!conf_case_uses_callx(&c) && !prog_from_insns(names[i], c.insns, c.insn_cnt, &p, &e)) {
			struct vfy_opts o = {.mem_size = (uint32_t)c.mem_len};
			/* helper 5 of the conformance runner is an identity function */
			int r = verifier_check(p, &o, NULL, &e);
			if (r == -EFAULT) {
				printf("%s: internal error: %s\n", names[i], e.msg);
				bad++;
			} else if (r) {
				printf("%s: rejected: %s\n", names[i], e.msg);
				rejected++;
			}
		}
		prog_free(p);
		conf_case_free(&c);
		free(names[i]);
	}
	free(names);
	printf("conformance: %d cases, %d rejected, %d internal errors\n", n, rejected, bad);
	assert_int_equal(bad, 0);
}

static void verify_objects_in(const char *dir, int *count, int *bad)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[1024];
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		size_t l = strlen(de->d_name);
		if (de->d_type == DT_DIR) {
			/* bench/progs are benchmark kernels run unverified (like uBPF's):
			 * not shipped, not test programs. */
			if (strcmp(path, TEST_BPF_DIR "/bench"))
				verify_objects_in(path, count, bad);
			continue;
		}
		if (l < 6 || strcmp(de->d_name + l - 6, ".bpf.o"))
			continue;
		struct object *obj = NULL;
		struct err e;
		if (object_open(path, &obj, &e) || object_create_maps(obj, &e)) {
			printf("%s: %s\n", path, e.msg);
			(*bad)++;
			object_free(obj);
			continue;
		}
		for (size_t i = 0; i < obj->prog_cnt; i++) {
			(*count)++;
			/* Device programs see the device runtime's helpers, as in `gpuext verify`. */
			struct vfy_opts o = {.mem_size = 4096,
					     .helper_proto = prog_type_is_gpu(obj->progs[i]->type) ?
								     ptx_helper_proto_find : NULL};
			if (verifier_check(obj->progs[i], &o, NULL, &e)) {
				printf("%s: %s: %s\n", path, obj->progs[i]->name, e.msg);
				(*bad)++;
			}
		}
		object_free(obj);
	}
	closedir(d);
}

/* Must show 1: every program the project ships or tests with is accepted. */
static void test_shipped_programs_accepted(void **state)
{
	int count = 0, bad = 0;
	verify_objects_in(TEST_BPF_DIR, &count, &bad);
	printf("%d compiled programs, %d rejected\n", count, bad);
	assert_true(count > 0);
	assert_int_equal(bad, 0);
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reject_corpus),
		cmocka_unit_test(test_accept_corpus),
		cmocka_unit_test(test_conformance_accepted),
		cmocka_unit_test(test_shipped_programs_accepted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
