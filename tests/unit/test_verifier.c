/* SPDX-License-Identifier: MIT */
/*
 * test_verifier.c - the verifier's contract beyond the corpora: message
 * format (index, disassembly, source line from BTF), error classes, the
 * log (off, failing path only, everything), statistics, profiles, and a
 * real clang-compiled unsafe program.
 */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/asm.h"
#include "bpf/object.h"
#include "bpf/prog.h"
#include "bpf/verifier.h"

static struct prog *assemble(const char *text)
{
	struct isa_insn *insns;
	size_t cnt;
	struct prog *p;
	struct err e;
	assert_int_equal(asm_assemble(text, &insns, &cnt, &e), 0);
	assert_int_equal(prog_from_insns("t", insns, cnt, &p, &e), 0);
	free(insns);
	return p;
}

static int verify(struct prog *p, const struct vfy_opts *o, struct err *e)
{
	return verifier_check(p, o, NULL, e);
}

static void test_message_format(void **state)
{
	struct prog *p = assemble("mov %r0, 0\nldxdw %r0, [%r10-8]\nexit\n");
	struct err e;
	assert_int_equal(verify(p, NULL, &e), -EACCES);
	assert_string_equal(e.msg, "insn 1: `ldxdw %r0, [%r10-8]`: R10 reads uninitialized stack: "
				   "byte fp-8 was never written (access fp-8 size 8)");
	assert_false(p->verified);
	prog_free(p);
}

static void test_source_line_in_message(void **state)
{
	struct prog *p = assemble("mov %r0, 0\nldxdw %r0, [%r10-8]\nexit\n");
	struct prog_line lines[] = {{0, "prog.c", "int x = 0;", 3, 1},
				    {1, "prog.c", "return *(long *)buf;", 4, 2}};
	p->lines = malloc(sizeof(lines));
	memcpy(p->lines, lines, sizeof(lines));
	p->line_cnt = 2;
	struct err e;
	assert_int_equal(verify(p, NULL, &e), -EACCES);
	assert_non_null(strstr(e.msg, "(prog.c:4: return *(long *)buf;)"));
	prog_free(p);
}

static void test_error_classes(void **state)
{
	struct err e;
	struct prog *p = assemble("mov %r0, 0\nexit\nmov %r0, 1\nexit\n");
	assert_int_equal(verify(p, NULL, &e), -EINVAL); /* malformed control flow */
	prog_free(p);
	p = assemble("mov %r0, 0\nl:\nadd %r0, 1\njlt %r0, 100000, l\nexit\n");
	struct vfy_opts o = {.insn_limit = 1000};
	assert_int_equal(verify(p, &o, &e), -E2BIG); /* budget */
	assert_non_null(strstr(e.msg, "more than 1000 instructions processed"));
	assert_int_equal(verify(p, NULL, &e), 0); /* within the default budget */
	prog_free(p);
}

static void test_stats_and_stack_depth(void **state)
{
	struct prog *p = assemble("stdw [%r10-24], 0\nmov %r0, 0\nmov %r1, 0\nl:\nadd %r0, 1\n"
				  "add %r1, 1\njlt %r1, 10, l\nexit\n");
	struct vfy_stats st;
	struct err e;
	assert_int_equal(verifier_check(p, NULL, &st, &e), 0);
	assert_true(p->verified);
	assert_int_equal(p->stack_depth, 24);
	assert_int_equal(st.stack_depth, 24);
	assert_true(st.insns_processed >= 10 * 3);
	assert_true(st.states >= 10);
	assert_true(st.peak_states <= st.states);
	assert_true(st.time_ns > 0);
	prog_free(p);
}

/* The failing path is taken second; the log keeps it and drops the first. */
static const char *two_paths = "ldxb %r2, [%r1+0]\n"
			       "jeq %r2, 0, bad\n"
			       "mov %r3, 7\n"           /* insn 2: only on the good path */
			       "mov %r0, 0\n"
			       "exit\n"
			       "bad:\n"
			       "mov %r4, 9\n"           /* insn 5: only on the bad path */
			       "ldxdw %r0, [%r10-16]\n" /* insn 6: fails */
			       "exit\n";

static void test_log_failing_path(void **state)
{
	struct prog *p = assemble(two_paths);
	char log[8192];
	struct vfy_opts o = {.log_level = VFY_LOG_PATH, .log_buf = log, .log_size = sizeof(log),
			     .mem_size = 8};
	struct err e;
	assert_int_equal(verify(p, &o, &e), -EACCES);
	assert_non_null(strstr(log, "5: mov %r4, 9"));
	assert_non_null(strstr(log, "6: ldxdw %r0, [%r10-16]"));
	assert_null(strstr(log, "2: mov %r3, 7"));
	assert_non_null(strstr(log, "error: R10 reads uninitialized stack"));
	/* register states along the path */
	assert_non_null(strstr(log, "R1=mem(size 8, off 0)"));

	o.log_level = VFY_LOG_ALL;
	assert_int_equal(verify(p, &o, &e), -EACCES);
	assert_non_null(strstr(log, "2: mov %r3, 7"));
	assert_non_null(strstr(log, "5: mov %r4, 9"));

	/* Off: the buffer is cleared and nothing is written. */
	o.log_level = VFY_LOG_OFF;
	assert_int_equal(verify(p, &o, &e), -EACCES);
	assert_string_equal(log, "");

	/* A small buffer is truncated, never overrun. */
	char tiny[32];
	memset(tiny, 'x', sizeof(tiny));
	o = (struct vfy_opts){.log_level = VFY_LOG_ALL, .log_buf = tiny, .log_size = 16,
			      .mem_size = 8};
	assert_int_equal(verify(p, &o, &e), -EACCES);
	assert_int_equal(strlen(tiny), 15);
	assert_int_equal(tiny[16], 'x');
	prog_free(p);
}

static void test_gpu_profile(void **state)
{
	struct prog *p = assemble("call 14\nexit\n");
	struct err e;
	assert_int_equal(verify(p, NULL, &e), 0); /* host: get_current_pid_tgid is fine */
	p->type = PROG_TYPE_GPU_ENTRY;             /* auto: device profile */
	assert_int_equal(verify(p, NULL, &e), -EACCES);
	assert_non_null(strstr(e.msg, "not available on the GPU"));
	struct vfy_opts o = {.profile = VFY_PROFILE_HOST};
	assert_int_equal(verify(p, &o, &e), 0);
	prog_free(p);
}

/* A clang-compiled unsafe program: the message names the C source line. */
static void test_clang_program_source_line(void **state)
{
	char cmd[512];
	int st;
	snprintf(cmd, sizeof(cmd),
		 "clang -O2 -g -target bpf -I/usr/include/$(gcc -print-multiarch) -c "
		 "tests/verifier/bad_progs/null_deref.bpf.c -o build/null_deref.bpf.o 2>&1");
	char *out = test_run_cmd(cmd, &st);
	free(out);
	if (st != 0)
		skip();
	struct object *obj;
	struct err e;
	assert_int_equal(object_open("build/null_deref.bpf.o", &obj, &e), 0);
	assert_int_equal(object_create_maps(obj, &e), 0);
	assert_int_equal(verify(obj->progs[0], NULL, &e), -EACCES);
	assert_non_null(strstr(e.msg, "R0 is map_value_or_null: check it against NULL before the access"));
	assert_non_null(strstr(e.msg, "null_deref.bpf.c:18: \treturn *v;"));
	object_free(obj);

	/* The CLI prints the same, and the path with -v. */
	snprintf(cmd, sizeof(cmd), "%s -v verify build/null_deref.bpf.o 2>&1", test_cli_path());
	out = test_run_cmd(cmd, &st);
	assert_int_equal(st, 1);
	assert_non_null(strstr(out, "count_unchecked (uprobe/cuLaunchKernel): FAIL"));
	assert_non_null(strstr(out, "error: R0 is map_value_or_null"));
	assert_non_null(strstr(out, "processed"));
	free(out);
}

/* Must show 4: the corpora against the Linux verifier, where it can load programs. */
static void test_kernel_differential(void **state)
{
#ifdef __SANITIZE_ADDRESS__
	const char *bin = "build/san/tests/verifier_kernel_diff";
#else
	const char *bin = "build/tests/verifier_kernel_diff";
#endif
	char cmd[256];
	int st;
	snprintf(cmd, sizeof(cmd), "%s 2>&1", bin);
	char *out = test_run_cmd(cmd, &st);
	assert_non_null(out);
	if (st == 2) { /* not root, or no BPF here */
		printf("%s", out);
		free(out);
		skip();
	}
	const char *summary = strstr(out, " cases: ");
	if (st != 0 || !summary)
		fail_msg("%s", out);
	while (summary > out && summary[-1] != '\n')
		summary--;
	printf("kernel differential: %s", summary);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_message_format),
		cmocka_unit_test(test_source_line_in_message),
		cmocka_unit_test(test_error_classes),
		cmocka_unit_test(test_stats_and_stack_depth),
		cmocka_unit_test(test_log_failing_path),
		cmocka_unit_test(test_gpu_profile),
		cmocka_unit_test(test_clang_program_source_line),
		cmocka_unit_test(test_kernel_differential),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
