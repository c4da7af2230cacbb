/* SPDX-License-Identifier: MIT */
/*
 * test_fatbin_elf.c - finding cudart's fatbin wrappers in an ELF file
 * (src/cuda/fatbin_elf.h): the section of a program laid out like an
 * nvcc-built one (tests/fakecuda/rtapp) and of a real nvcc build (when
 * there is one), none in an object without it, and a clear error naming the
 * file for what is not a readable ELF64 file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda/fatbin_elf.h"
#include "testutil.h"

#define RTAPP "build/fakecuda/rtapp"
#define NVCC_APP "build/examples/vecadd"

static void test_found(void **state)
{
	uint64_t addr, size;
	struct err e = {{0}};
	assert_int_equal(fatbin_elf_segment(RTAPP, &addr, &size, &e), 0);
	assert_int_equal(size, FATBIN_ELF_WRAPPER_SIZE); /* one wrapper */
	assert_true(addr != 0);
	if (access(NVCC_APP, R_OK))
		return; /* no nvcc here */
	assert_int_equal(fatbin_elf_segment(NVCC_APP, &addr, &size, &e), 0);
	assert_true(size >= FATBIN_ELF_WRAPPER_SIZE && size % FATBIN_ELF_WRAPPER_SIZE == 0);
}

static void test_none(void **state)
{
	uint64_t addr = 1, size = 1;
	struct err e = {{0}};
	assert_int_equal(fatbin_elf_segment("build/fakecuda/libcuda.so.1", &addr, &size, &e), 0);
	assert_int_equal(size, 0);
	assert_int_equal(addr, 0);
}

/* path's error contains want */
static void bad(const char *path, const char *want)
{
	uint64_t addr, size = 1;
	struct err e = {{0}};
	assert_true(fatbin_elf_segment(path, &addr, &size, &e) < 0);
	assert_int_equal(size, 0);
	if (!strstr(e.msg, path) || !strstr(e.msg, want))
		fail_msg("%s: expected '%s' in '%s'", path, want, e.msg);
}

static void test_bad_files(void **state)
{
	char dir[] = "/tmp/gpuext-fatbin-elf-XXXXXX", path[128], cmd[512];
	assert_non_null(mkdtemp(dir));
	bad("tests/ptx_corpus/checked.compute_75.ptx", "not an ELF file");
	bad(dir, "not a regular file");
	snprintf(path, sizeof(path), "%s/missing", dir);
	bad(path, "No such file");
	/* the headers cut off: the section table lies past the end */
	snprintf(path, sizeof(path), "%s/short", dir);
	snprintf(cmd, sizeof(cmd), "head -c 100 %s > %s", RTAPP, path);
	free(test_run_cmd(cmd, NULL));
	bad(path, "section header table");
	/* a 32-bit ELF header */
	snprintf(path, sizeof(path), "%s/elf32", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s && printf '\\001' | dd of=%s bs=1 seek=4 conv=notrunc "
		 "2>/dev/null", RTAPP, path, path);
	free(test_run_cmd(cmd, NULL));
	bad(path, "not a 64-bit little-endian ELF file");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	free(test_run_cmd(cmd, NULL));
}

int main(void)
{
	if (access(RTAPP, R_OK)) {
		fprintf(stderr, "test_fatbin_elf: %s not built\n", RTAPP);
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_found),
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_bad_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
