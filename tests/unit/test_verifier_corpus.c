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
 *                  gpu_block_array
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
#include "policy/mem.h"
#include "policy/sched.h"
#include "ptx/ptx_helpers.h"
#include "vfy_case.h"

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
		if (vcase_run(names[i], &verdict, &e, expect, sizeof(expect))) {
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
			/* Device programs see the device runtime's helpers, policy
			 * programs the policy helpers, as in `gpuext verify`. */
			enum prog_type type = obj->progs[i]->type;
			struct vfy_opts o = {.mem_size = 4096,
					     .helper_proto = prog_type_is_gpu(type) ? ptx_helper_proto_find
							     : type == PROG_TYPE_STRUCT_OPS
								     ? (sched_policy_ctx_size(obj->progs[i]->target)
										? sched_policy_helper_proto
										: mem_policy_helper_proto)
								     : NULL};
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
