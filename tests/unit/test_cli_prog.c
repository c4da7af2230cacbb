/* SPDX-License-Identifier: MIT */
/* `gpuext prog show|dump` and `gpuext test-run` on the test programs. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#define PROGS TEST_BPF_DIR "/tests/progs"

/* Run `gpuext ARGS`, check the exit status, return the output (malloc'd). */
static char *gpuext(int want_status, const char *args)
{
	char cmd[1024];
	int st;
	snprintf(cmd, sizeof(cmd), "%s %s", test_cli_path(), args);
	char *out = test_run_cmd(cmd, &st);
	assert_non_null(out);
	if (st != want_status)
		fail_msg("`%s` exited %d, expected %d; output:\n%s", cmd, st, want_status, out);
	return out;
}

static void expect(int status, const char *args, const char *needle)
{
	char *out = gpuext(status, args);
	if (!strstr(out, needle))
		fail_msg("`gpuext %s`: no \"%s\" in output:\n%s", args, needle, out);
	free(out);
}

static void test_prog_show(void **state)
{
	expect(0, "prog show " PROGS "/array_count.bpf.o", "count_launch");
	expect(0, "prog show " PROGS "/array_count.bpf.o", "uprobe/cuLaunchKernel");
	char *out = gpuext(0, "prog show " PROGS "/global_data.bpf.o");
	assert_non_null(strstr(out, "on_entry"));
	assert_non_null(strstr(out, "gpu_entry"));
	assert_non_null(strstr(out, ".rodata"));
	assert_non_null(strstr(out, "license \"GPL\""));
	free(out);
	out = gpuext(0, "-j prog show " PROGS "/legacy_maps.bpf.o");
	assert_non_null(strstr(out, "\"license\":\"Dual MIT/GPL\""));
	assert_non_null(strstr(out, "{\"name\":\"freed\",\"type\":\"hash\",\"key_size\":8,"
				    "\"value_size\":4,\"max_entries\":32,\"flags\":0}"));
	free(out);
}

static void test_prog_dump_interleaves_source(void **state)
{
	char *out = gpuext(0, "prog dump " PROGS "/subprogs.bpf.o on_mem");
	assert_non_null(strstr(out, "on_mem (section gpu/mem/matmul"));
	assert_non_null(strstr(out, "; \treturn sum_squares(*n);  ["));
	assert_non_null(strstr(out, "subprogs.bpf.c:38]"));
	assert_non_null(strstr(out, "call local"));
	assert_null(strstr(out, "on_exit"));
	free(out);
	expect(0, "prog dump " PROGS "/strings.bpf.o", "map_value");
	expect(0, "prog dump " PROGS "/strings.bpf.o", "; .rodata.str1.1");
}

static void test_prog_dump_jited(void **state)
{
	/* --jited: the x86-64 code, bytes then (objdump permitting) instructions;
	 * map references need the maps, which it creates. */
	char *out = gpuext(0, "prog dump --jited " PROGS "/array_count.bpf.o count_launch");
	assert_non_null(strstr(out, "count_launch (section uprobe/cuLaunchKernel"));
	assert_non_null(strstr(out, "x86-64 code, "));
	/* it uses r10 only: push rbp; mov rbp, rsp (the eBPF stack) */
	assert_non_null(strstr(out, "     0: 55 48 89 e5"));
	if (!system("objdump --version >/dev/null 2>&1"))
		assert_non_null(strstr(out, "push   rbp"));
	free(out);
	expect(0, "prog dump " PROGS "/subprogs.bpf.o --jited", "JIT-compiled:");
	expect(2, "prog dump --jited", "usage: gpuext prog dump [--jited] FILE");
}

static void test_prog_errors(void **state)
{
	expect(1, "prog dump " PROGS "/subprogs.bpf.o zzz", "no program named or in section 'zzz'");
	expect(1, "prog show build/none.o", "build/none.o: No such file or directory");
	expect(1, "prog show tests/bad_elf/cases.txt", "tests/bad_elf/cases.txt: not an ELF file");
	expect(2, "prog frob x", "unknown prog command 'frob'");
	expect(2, "prog show", "usage: gpuext prog show FILE");
	expect(0, "prog --help", "prog dump [--jited] FILE [SECTION|NAME]");
	expect(0, "prog show --help", "Usage: gpuext prog show FILE");
	expect(0, "test-run --help", "--repeat N");
	expect(2, "test-run x", "usage: gpuext test-run");
	expect(2, "test-run a b --repeat 0", "--repeat: '0' is not a count");
	expect(1, "-j prog show build/none.o", "{\"error\":\"build/none.o: No such file");
}

static void test_test_run(void **state)
{
	char data[] = "/tmp/gpuext-test-run-XXXXXX", args[512];
	uint64_t regs[21] = {0};
	int fd = mkstemp(data);

	assert_true(fd >= 0);
	regs[14] = 10; /* rdi: slot 10 & 7 = 2 */
	assert_int_equal(write(fd, regs, sizeof(regs)), sizeof(regs));
	close(fd);
	snprintf(args, sizeof(args), "test-run " PROGS "/array_count.bpf.o count_launch --data %s",
		 data);
	expect(0, args, "count_launch: r0 = 1 (0x1), 1 run");
	expect(0, args, "map launches (array):\n    key 02 00 00 00: 01 00 00 00 00 00 00 00\n");
	snprintf(args, sizeof(args),
		 "-j test-run " PROGS "/array_count.bpf.o uprobe/cuLaunchKernel --data %s --repeat 5",
		 data);
	expect(0, args, "\"r0\":5,\"runs\":5");
	expect(0, args, "{\"key\":\"02000000\",\"value\":\"0500000000000000\"}");
	snprintf(args, sizeof(args),
		 "test-run " PROGS "/array_count.bpf.o count_launch --data %s --repeat 7 --backend jit",
		 data);
	expect(0, args, "count_launch: r0 = 7 (0x7), 7 runs");
	expect(2, "test-run a b --backend gpu", "--backend: 'gpu' is not interp or jit");
	/* The ring buffer's records (rax = 4: two events and markers), .bss. */
	regs[14] = 0;
	regs[10] = 4;
	fd = open(data, O_WRONLY | O_TRUNC);
	assert_int_equal(write(fd, regs, sizeof(regs)), sizeof(regs));
	close(fd);
	snprintf(args, sizeof(args), "test-run " PROGS "/ringbuf.bpf.o memcpy_ret --data %s --repeat 2",
		 data);
	expect(0, args, "record 2 (16 bytes): 02 00 00 00 00 00 00 00 04 00");
	expect(0, args, "record 3 (4 bytes): 04 00 ed fe\n");
	expect(0, args, "map .bss (array):\n    key 00 00 00 00: 02 00 00 00 00 00 00 00");
	/* Per-CPU maps: the slots that hold something. */
	uint64_t rec[2] = {1000, 1};
	fd = open(data, O_WRONLY | O_TRUNC);
	assert_int_equal(write(fd, rec, sizeof(rec)), sizeof(rec));
	close(fd);
	snprintf(args, sizeof(args), "test-run " PROGS "/percpu_hash.bpf.o memcpy_bytes --data %s --repeat 3",
		 data);
	expect(0, args, "memcpy_bytes: r0 = 3000 (0xbb8), 3 runs");
	expect(0, args, "map bytes_by_kind (percpu_hash):\n    key 01 00 00 00:\n      cpu ");
	expect(0, args, ": b8 0b 00 00 00 00 00 00\n");
	unlink(data);
	/* Without data the ctx is empty: the interpreter finds reading a register
	 * out of bounds; the JIT (the default) reads the zero padding. */
	expect(1, "test-run " PROGS "/ringbuf.bpf.o memcpy_ret --backend interp",
	       "prog 'memcpy_ret': ");
	expect(0, "test-run " PROGS "/ringbuf.bpf.o memcpy_ret", "memcpy_ret: r0 = ");
	expect(1, "test-run " PROGS "/ringbuf.bpf.o nope", "no program named or in section 'nope'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prog_show),
		cmocka_unit_test(test_prog_dump_interleaves_source),
		cmocka_unit_test(test_prog_dump_jited),
		cmocka_unit_test(test_prog_errors),
		cmocka_unit_test(test_test_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
