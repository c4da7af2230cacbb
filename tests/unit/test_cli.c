/* SPDX-License-Identifier: MIT */
/*
 * The CLI's own contract: help, unknown commands, exit codes, and the
 * option conventions every command shares (src/cli/options.c, getopt_long):
 * errors name the bad option and the command's --help, long options take
 * --opt=value and unique prefixes, options may follow positional
 * arguments, `--` ends the options (for `run`: CMD's arguments after it
 * reach CMD untouched).
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_help_lists_commands(void **state)
{
	char cmd[256];
	int st;
	snprintf(cmd, sizeof(cmd), "%s --help", test_cli_path());
	char *out = test_run_cmd(cmd, &st);
	assert_non_null(out);
	assert_int_equal(st, 0);
	assert_non_null(strstr(out, "Usage: gpuext"));
	free(out);
}

static void test_unknown_command_fails_clearly(void **state)
{
	char cmd[256];
	int st;
	snprintf(cmd, sizeof(cmd), "%s frobnicate", test_cli_path());
	char *out = test_run_cmd(cmd, &st);
	assert_non_null(out);
	assert_int_equal(st, 2);
	assert_non_null(strstr(out, "unknown command 'frobnicate'"));
	free(out);
}

#define PROGS TEST_BPF_DIR "/tests/progs"

/* `gpuext ARGS` exits with status and prints want (stdout and stderr). */
static void expect(const char *args, int status, const char *want)
{
	char cmd[1024];
	int st;
	snprintf(cmd, sizeof(cmd), "GPUEXT_AGENT=build/libgpuext-agent.so %s %s </dev/null",
		 test_cli_path(), args);
	char *out = test_run_cmd(cmd, &st);
	assert_non_null(out);
	if (st != status || !strstr(out, want))
		fail_msg("`%s`: exit %d (want %d), output lacks \"%s\":\n%s", cmd, st, status,
			 want, out);
	free(out);
}

static void test_bad_options_named(void **state)
{
	/* unknown, long and short, also inside a cluster and with a value */
	expect("--frob tools", 2, "gpuext: unknown option '--frob' (see gpuext --help)");
	expect("run --frob=1 -- true", 2,
	       "run: unknown option '--frob' (see gpuext run --help)");
	expect("asm -x f", 2, "asm: unknown option '-x' (see gpuext asm --help)");
	expect("-jq tools", 2, "gpuext: unknown option '-q'");
	expect("prog show -q f", 2, "prog show: unknown option '-q' (see gpuext prog show --help)");
	/* a value where none is taken; a prefix of two options */
	expect("sim --json=1 --gen seq --oversub 2", 2, "sim: --json takes no value");
	expect("run --mem 1G -- true", 2, "run: ambiguous option '--mem' (see gpuext run --help)");
}

static void test_missing_values_named(void **state)
{
	expect("run --trace", 2, "run: --trace needs a value (see gpuext run --help)");
	expect("run --mem-b", 2, "run: --mem-budget needs a value");
	expect("attach " PROGS "/array_count.bpf.o -p", 2,
	       "attach: -p needs a value (see gpuext attach --help)");
	expect("test-run a b --repeat", 2, "test-run: --repeat needs a value");
	expect("conformance x --backend", 2, "conformance: --backend needs a value");
}

static void test_long_option_values(void **state)
{
	/* --opt=value and --opt value alike, prefixes too; values are checked */
	expect("ptx " PROGS "/global_data.bpf.o on_entry --target=sm_80", 0, ".target sm_80");
	expect("ptx --targ sm_86 " PROGS "/global_data.bpf.o on_entry", 0, ".target sm_86");
	expect("ptx --mode=lane " PROGS "/global_data.bpf.o on_entry", 2,
	       "ptx: --mode is warp or thread, not 'lane'");
	expect("run --mem-budget=12Q -- true", 2, "run: --mem-budget: '12Q' is not a size");
	expect("run --class=xx --session=s -- true", 2, "run: --class 'xx': lc or be");
	expect("sim --gen=seq --size=8M --oversub=2 --json", 0, "\"oversub\":2.000");
}

static void test_options_after_positional_args(void **state)
{
	/* options may follow FILE and SECTION; --help anywhere answers */
	expect("verify " PROGS "/kuprobe.bpf.o version_enter", 0, "version_enter (uprobe/cuDriverGetVersion): OK");
	expect("verify " PROGS "/kuprobe.bpf.o version_enter --gpu", 1,
	       "version_enter (uprobe/cuDriverGetVersion): FAIL: insn 0: `call 14`");
	expect("ptx " PROGS "/global_data.bpf.o --help", 0, "Usage: gpuext ptx FILE SECTION");
	expect("prog dump " PROGS "/subprogs.bpf.o on_mem --jited", 0, "JIT-compiled:");
	expect("asm f g", 2, "asm: more than one input file");
}

static void test_double_dash(void **state)
{
	/* run: options before `--` are run's, everything after is CMD's */
	expect("run " PROGS "/array_count.bpf.o --json -- "
	       "sh -c 'echo \"args: $*\"' x --json -o y --",
	       0, "args: --json -o y --\n{\"maps\":[]}");
	/* without `--` there is no CMD: a second word is a second object */
	expect("run " PROGS "/array_count.bpf.o sh", 2, "run: one object per run (got '");
	expect("run " PROGS "/array_count.bpf.o --", 2, "Usage: gpuext run");
	/* other commands: what follows `--` is positional, even with a dash */
	expect("asm -- --no-such-file", 1, "gpuext: --no-such-file: No such file or directory");
	/* the global options end at the command: its options are its own */
	expect("-j tools --json", 2, "tools: unknown option '--json'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help_lists_commands),
		cmocka_unit_test(test_unknown_command_fails_clearly),
		cmocka_unit_test(test_bad_options_named),
		cmocka_unit_test(test_missing_values_named),
		cmocka_unit_test(test_long_option_values),
		cmocka_unit_test(test_options_after_positional_args),
		cmocka_unit_test(test_double_dash),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
