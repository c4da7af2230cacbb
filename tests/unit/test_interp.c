/* SPDX-License-Identifier: MIT */
/*
 * The interpreter: all 313 conformance cases in process (fast and
 * bounds-checking modes), and the edge cases the cases do not reach:
 * call depth limit, bounds violations, unknown helpers, RFC 9669 corner
 * semantics.
 */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/asm.h"
#include "bpf/conformance.h"
#include "bpf/helpers.h"
#include "bpf/interp.h"
#include "bpf/map.h"
#include "bpf/object.h"

static int run_fast(const struct prog *p, const struct prog_run_opts *opts, uint64_t *r0,
		    struct err *e)
{
	struct prog_run_opts o = *opts;
	o.bounds_check = 0;
	return interp_run(p, &o, r0, e);
}

static void run_all_cases(const struct conf_backend *b)
{
	DIR *d = opendir(TEST_CONFORMANCE_DIR);
	struct dirent *de;
	size_t pass = 0, fail = 0, skip = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		char path[512], why[512];
		struct conf_case c;
		struct err e = {{0}};
		if (!strstr(de->d_name, ".txt"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", TEST_CONFORMANCE_DIR, de->d_name);
		assert_int_equal(conf_case_load(path, &c, &e), 0);
		switch (conf_case_run(&c, b, why, sizeof(why))) {
		case CONF_PASS:
			pass++;
			break;
		case CONF_SKIP:
			skip++;
			break;
		case CONF_FAIL:
			fprintf(stderr, "%s: %s\n", c.name, why);
			fail++;
		}
		conf_case_free(&c);
	}
	closedir(d);
	fprintf(stderr, "%s: %zu passed, %zu failed, %zu skipped\n", b->name, pass, fail, skip);
	assert_int_equal(fail, 0);
	assert_int_equal(pass + skip, 313);
	assert_int_equal(pass, 313); /* the interpreter supports callx */
}

static void test_conformance_checked(void **state)
{
	const struct conf_backend b = {"interp", interp_run, 1};
	run_all_cases(&b);
}

static void test_conformance_fast(void **state)
{
	const struct conf_backend b = {"interp-fast", run_fast, 1};
	run_all_cases(&b);
}

/* Assemble and run text with memory; returns interp_run's result. */
static int run_text(const char *text, void *mem, size_t len, int checked, uint64_t *r0,
		    struct err *e)
{
	struct isa_insn *insns;
	size_t cnt;
	struct prog *p;
	struct isa_error ierr;

	if (asm_assemble(text, &insns, &cnt, e))
		fail_msg("%s", e->msg);
	if (isa_decode(insns, cnt, 1, &ierr))
		fail_msg("insn %zu: %s", ierr.index, ierr.msg);
	assert_int_equal(prog_from_insns("t", insns, cnt, &p, e), 0);
	free(insns);
	struct prog_run_opts o = {.args = {(uintptr_t)mem, len},
				  .helpers = conf_helpers(),
				  .bounds_check = checked,
				  .mem = mem,
				  .mem_len = len};
	int ret = interp_run(p, &o, r0, e);
	prog_free(p);
	return ret;
}

static void test_call_depth_limit(void **state)
{
	/* Recurses forever: each frame calls itself. */
	const char *text = "f:\ncall local f\nexit\n";
	uint64_t r0;
	struct err e = {{0}};
	assert_int_equal(run_text(text, NULL, 0, 0, &r0, &e), -E2BIG);
	assert_string_equal(e.msg, "prog 't': insn 0: call depth limit of 8 frames exceeded");

	/* Seven nested calls (eight frames) are fine. */
	const char *ok = "mov %r0, 0\ncall local a\nexit\n"
			 "a:\nadd %r0, 1\njge %r0, 7, done\ncall local a\ndone:\nexit\n";
	assert_int_equal(run_text(ok, NULL, 0, 0, &r0, &e), 0);
	assert_int_equal(r0, 7);
}

static void test_fresh_frame_per_call(void **state)
{
	/* The callee writes its own [r10-8]; the caller's slot is intact. */
	const char *text = "stdw [%r10-8], 7\ncall local f\nldxdw %r0, [%r10-8]\nexit\n"
			   "f:\nstdw [%r10-8], 99\nexit\n";
	uint64_t r0;
	struct err e = {{0}};
	assert_int_equal(run_text(text, NULL, 0, 1, &r0, &e), 0);
	assert_int_equal(r0, 7);
}

static void test_bounds_violations_reported(void **state)
{
	uint8_t mem[16] = {0};
	uint64_t r0;
	struct err e = {{0}};

	/* Reading past the end of mem. */
	assert_int_equal(run_text("ldxdw %r0, [%r1+12]\nexit", mem, sizeof(mem), 1, &r0, &e),
			 -EFAULT);
	assert_non_null(strstr(e.msg, "insn 0 (ldxdw %r0, [%r1+12]): read of 8 bytes at 0x"));
	/* Writing above the stack. */
	assert_int_equal(run_text("mov %r0, 0\nstxdw [%r10], %r0\nexit", NULL, 0, 1, &r0, &e),
			 -EFAULT);
	assert_non_null(strstr(e.msg, "insn 1 (stxdw [%r10], %r0): write of 8 bytes"));
	/* Below the deepest active frame. */
	assert_int_equal(run_text("stw [%r10-516], 1\nexit", NULL, 0, 1, &r0, &e), -EFAULT);
	assert_non_null(strstr(e.msg, "insn 0 (stw [%r10-516], 1): write of 4 bytes"));
	/* A null pointer. */
	assert_int_equal(run_text("mov %r1, 0\nlock add [%r1], %r0\nexit", mem, 16, 1, &r0, &e),
			 -EFAULT);
	assert_non_null(strstr(e.msg, "insn 1 (lock add [%r1], %r0): atomic access of 8 bytes at 0x0"));
	/* Misaligned atomic. */
	assert_int_equal(run_text("lock add32 [%r1+2], %r0\nexit", mem, 16, 1, &r0, &e), -EFAULT);
	assert_non_null(strstr(e.msg, "misaligned atomic access"));
	/* In bounds: the last byte of mem, a callee reading its caller's frame. */
	mem[15] = 0x5a;
	assert_int_equal(run_text("ldxb %r0, [%r1+15]\nexit", mem, 16, 1, &r0, &e), 0);
	assert_int_equal(r0, 0x5a);
	assert_int_equal(run_text("stdw [%r10-8], 3\nmov %r1, %r10\ncall local f\nexit\n"
				  "f:\nldxdw %r0, [%r1-8]\nexit",
				  NULL, 0, 1, &r0, &e),
			 0);
	assert_int_equal(r0, 3);
}

static void test_unknown_helper(void **state)
{
	uint64_t r0;
	struct err e = {{0}};
	assert_int_equal(run_text("call 77\nexit", NULL, 0, 0, &r0, &e), -ENOENT);
	assert_string_equal(e.msg, "prog 't': insn 0: unknown helper 77");
	assert_int_equal(run_text("mov %r2, 5000\ncallx %r2\nexit", NULL, 0, 0, &r0, &e), -ENOENT);
	assert_string_equal(e.msg, "prog 't': insn 1: callx: unknown helper 5000");
}

static void test_missing_helper_table(void **state)
{
	struct isa_insn exit_insn = {.code = 0x95};
	struct prog *p;
	struct err e = {{0}};
	uint64_t r0;
	struct prog_run_opts o = {0};
	assert_int_equal(prog_from_insns("t", &exit_insn, 1, &p, &e), 0);
	assert_int_equal(interp_run(p, &o, &r0, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "needs opts with a helper table"));
	prog_free(p);
}

/* RFC 9669 corner cases, each as (program, expected r0). */
static void test_rfc_semantics(void **state)
{
	static const struct {
		const char *text;
		uint64_t r0;
	} cases[] = {
		{"lddw %r0, 0x8000000000000000\nsdiv %r0, -1\nexit", 0x8000000000000000ull},
		{"lddw %r0, 0x8000000000000000\nsmod %r0, -1\nexit", 0},
		{"mov32 %r0, 0x80000000\nsdiv32 %r0, -1\nexit", 0x80000000ull},
		{"lddw %r0, 0x1234567890\nmov %r1, 0\nmod %r0, %r1\nexit", 0x1234567890ull},
		{"lddw %r0, 0x1234567890\nmov %r1, 0\nmod32 %r0, %r1\nexit", 0x34567890ull},
		{"mov %r0, 7\nmov %r1, 0\ndiv %r0, %r1\nexit", 0},
		{"mov %r0, -7\nsmod %r0, 2\nexit", (uint64_t)-1ll},
		{"mov %r0, 1\nmov %r1, 65\nlsh %r0, %r1\nexit", 2},
		{"mov32 %r0, 1\nmov %r1, 33\nlsh32 %r0, %r1\nexit", 2},
		{"mov %r0, -1\nadd32 %r0, 0\nexit", 0xffffffffull},
		{"mov %r1, 0x80\nmovsx864 %r0, %r1\nexit", 0xffffffffffffff80ull},
		{"mov %r1, 0x8000\nmovsx1632 %r0, %r1\nexit", 0xffff8000ull},
		{"lddw %r0, 0x1122334455667788\nbe16 %r0\nexit", 0x8877},
		{"lddw %r0, 0x1122334455667788\nle32 %r0\nexit", 0x55667788},
		{"mov %r0, 0\nja32 +1\nmov %r0, 1\nexit", 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t r0 = 0xdead;
		struct err e = {{0}};
		if (run_text(cases[i].text, NULL, 0, 1, &r0, &e))
			fail_msg("case %zu: %s", i, e.msg);
		if (r0 != cases[i].r0)
			fail_msg("case %zu: r0 = 0x%llx, expected 0x%llx\n%s", i,
				 (unsigned long long)r0, (unsigned long long)cases[i].r0,
				 cases[i].text);
	}
}

static void test_atomics_cmpxchg_fetch(void **state)
{
	uint64_t mem[2] = {5, 0};
	uint64_t r0;
	struct err e = {{0}};
	/* cmpxchg succeeds (r0 == [mem]) then fails; fetch returns old value. */
	const char *text = "mov %r0, 5\nmov %r2, 9\nlock cmpxchg [%r1], %r2\n"
			   "mov %r3, 1\nlock fetch add [%r1], %r3\n"
			   "mov %r0, %r3\nexit";
	assert_int_equal(run_text(text, mem, sizeof(mem), 1, &r0, &e), 0);
	assert_int_equal(r0, 9);
	assert_int_equal(mem[0], 10);
	const char *x32 = "mov %r2, -1\nlock xchg32 [%r1+8], %r2\nmov %r0, %r2\nexit";
	mem[1] = 0x1111111122222222ull;
	assert_int_equal(run_text(x32, mem, sizeof(mem), 1, &r0, &e), 0);
	assert_int_equal(r0, 0x22222222ull);
	assert_int_equal(mem[1], 0x11111111ffffffffull);
}

/* lddw map[0] and map_value[0]+off resolve to the handle and into the value. */
static void test_lddw_map_pseudo(void **state)
{
	struct map_def def = {.type = MAP_TYPE_ARRAY, .key_size = 4, .value_size = 16,
			      .max_entries = 1, .name = "data"};
	struct map *m;
	struct prog *p;
	struct isa_insn *insns;
	size_t cnt;
	struct err e = {{0}};
	uint64_t r0;

	assert_int_equal(map_create(&def, &m, &e), 0);
	uint8_t *value = map_array_base(m);
	value[8] = 42;
	assert_int_equal(asm_assemble("lddw %r1, map_value[0]+8\nldxb %r0, [%r1]\n"
				      "stb [%r1+7], 9\nexit", &insns, &cnt, &e), 0);
	assert_int_equal(prog_from_insns("t", insns, cnt, &p, &e), 0);
	free(insns);
	p->maps = calloc(1, sizeof(*p->maps));
	p->maps[0] = m;
	p->map_cnt = 1;
	struct prog_run_opts o = {.helpers = helper_table_default(), .bounds_check = 1};
	assert_int_equal(interp_run(p, &o, &r0, &e), 0);
	assert_int_equal(r0, 42);
	assert_int_equal(value[15], 9);
	prog_free(p);

	/* Past the value: a violation in checking mode. */
	assert_int_equal(asm_assemble("lddw %r1, map_value[0]+8\nldxdw %r0, [%r1+1]\nexit",
				      &insns, &cnt, &e), 0);
	assert_int_equal(prog_from_insns("t", insns, cnt, &p, &e), 0);
	free(insns);
	p->maps = calloc(1, sizeof(*p->maps));
	p->maps[0] = m;
	p->map_cnt = 1;
	assert_int_equal(interp_run(p, &o, &r0, &e), -EFAULT);
	assert_non_null(strstr(e.msg, "insn 2 (ldxdw %r0, [%r1+1]): read of 8 bytes"));
	prog_free(p);

	/* map[0] is the handle; a map index the program does not have is an error. */
	assert_int_equal(asm_assemble("lddw %r0, map[0]\nexit", &insns, &cnt, &e), 0);
	assert_int_equal(prog_from_insns("t", insns, cnt, &p, &e), 0);
	free(insns);
	assert_int_equal(interp_run(p, &o, &r0, &e), -EINVAL);
	assert_string_equal(e.msg, "prog 't': insn 0: map index 0 out of range (program has 0 maps)");
	p->maps = calloc(1, sizeof(*p->maps));
	p->maps[0] = m;
	p->map_cnt = 1;
	assert_int_equal(interp_run(p, &o, &r0, &e), 0);
	assert_int_equal(r0, (uintptr_t)m);
	prog_free(p);
	map_free(m);
}

static void discard_trace(void *arg, const char *line, size_t len)
{
}

/* Run every program of a fresh copy of obj_path; r0 of each into r0s. */
static size_t run_object(const char *obj_path, int checked, uint64_t *r0s, size_t max)
{
	struct object *obj;
	struct err e = {{0}};
	uint64_t ctx[64] = {0}; /* room for struct pt_regs and the record ctxs */

	if (object_open(obj_path, &obj, &e) || object_create_maps(obj, &e))
		fail_msg("%s", e.msg);
	assert_true(obj->prog_cnt <= max);
	for (size_t i = 0; i < obj->prog_cnt; i++) {
		struct prog_run_opts o = {.args = {(uintptr_t)ctx, sizeof(ctx)},
					  .helpers = helper_table_default(),
					  .bounds_check = checked,
					  .mem = ctx,
					  .mem_len = sizeof(ctx)};
		ctx[10] = 0x1234; /* pt_regs ax: the return value of uretprobes */
		if (interp_run(obj->progs[i], &o, &r0s[i], &e))
			fail_msg("%s (%s): %s", obj_path, checked ? "checked" : "fast", e.msg);
	}
	size_t n = obj->prog_cnt;
	object_free(obj);
	return n;
}

/*
 * The clang-compiled test programs (maps of every type, global data,
 * strings, subprograms, loops, atomics, ring buffer): in checking mode no
 * access of theirs is refused (the region registry knows map values and
 * records) and r0 is the same as on the fast path.
 */
static void test_compiled_programs_checked(void **state)
{
	DIR *d = opendir(TEST_BPF_DIR "/tests/progs");
	struct dirent *de;
	size_t objects = 0;
	const struct helper_trace_sink quiet = {.write = discard_trace};

	helper_set_trace_sink(&quiet); /* the programs' trace_printk lines */

	assert_non_null(d);
	while ((de = readdir(d))) {
		char path[512];
		uint64_t fast[32], checked[32];
		size_t n = strlen(de->d_name);
		if (n < 6 || strcmp(de->d_name + n - 6, ".bpf.o"))
			continue;
		snprintf(path, sizeof(path), "%s/tests/progs/%s", TEST_BPF_DIR, de->d_name);
		size_t cnt = run_object(path, 0, fast, 32);
		assert_int_equal(run_object(path, 1, checked, 32), cnt);
		for (size_t i = 0; i < cnt; i++)
			if (fast[i] != checked[i])
				fail_msg("%s: program %zu: r0 0x%llx fast, 0x%llx checked", path, i,
					 (unsigned long long)fast[i], (unsigned long long)checked[i]);
		objects++;
	}
	closedir(d);
	assert_true(objects >= 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conformance_checked),
		cmocka_unit_test(test_conformance_fast),
		cmocka_unit_test(test_call_depth_limit),
		cmocka_unit_test(test_fresh_frame_per_call),
		cmocka_unit_test(test_bounds_violations_reported),
		cmocka_unit_test(test_unknown_helper),
		cmocka_unit_test(test_missing_helper_table),
		cmocka_unit_test(test_rfc_semantics),
		cmocka_unit_test(test_atomics_cmpxchg_fetch),
		cmocka_unit_test(test_lddw_map_pseudo),
		cmocka_unit_test(test_compiled_programs_checked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
