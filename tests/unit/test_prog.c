/* SPDX-License-Identifier: MIT */
/* prog.c: section names, type names, line lookup, construction. */
#include "testutil.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/prog.h"

static void test_sections(void **state)
{
	static const struct {
		const char *section;
		enum prog_type type;
		const char *target;
	} cases[] = {
		{"uprobe/cuLaunchKernel", PROG_TYPE_UPROBE, "cuLaunchKernel"},
		{"uretprobe/cuMemAlloc_v2", PROG_TYPE_URETPROBE, "cuMemAlloc_v2"},
		{"uprobe//usr/lib/libcuda.so:cuInit", PROG_TYPE_UPROBE_PATH, "/usr/lib/libcuda.so:cuInit"},
		{"uprobe/libc.so.6:malloc", PROG_TYPE_UPROBE_PATH, "libc.so.6:malloc"},
		{"gpu/entry/vec*", PROG_TYPE_GPU_ENTRY, "vec*"},
		{"gpu/exit/_Z6kernelPf", PROG_TYPE_GPU_EXIT, "_Z6kernelPf"},
		{"gpu/mem/matmul", PROG_TYPE_GPU_MEM, "matmul"},
		{"gpu/block_entry/*", PROG_TYPE_GPU_BLOCK_ENTRY, "*"},
		{"gpu/block_exit/vec*", PROG_TYPE_GPU_BLOCK_EXIT, "vec*"},
		{"kprobe/vecAdd", PROG_TYPE_GPU_ENTRY, "vecAdd"},
		{"kretprobe/vecAdd", PROG_TYPE_GPU_EXIT, "vecAdd"},
		{"cupti/kernel", PROG_TYPE_CUPTI_KERNEL, NULL},
		{"cupti/memcpy", PROG_TYPE_CUPTI_MEMCPY, NULL},
		{"cupti/uvm", PROG_TYPE_CUPTI_UVM, NULL},
		{"struct_ops/prefetch", PROG_TYPE_STRUCT_OPS, "prefetch"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum prog_type t;
		const char *target = "unset";
		assert_int_equal(prog_type_from_section(cases[i].section, &t, &target), 0);
		assert_int_equal(t, cases[i].type);
		if (cases[i].target)
			assert_string_equal(target, cases[i].target);
		else
			assert_null(target);
	}
	enum prog_type t;
	const char *target;
	assert_int_equal(prog_type_from_section("xdp", &t, &target), -ENOENT);
	assert_int_equal(prog_type_from_section("cupti/kernelx", &t, &target), -ENOENT);
	assert_int_equal(prog_type_from_section("uprobe/", &t, &target), -EINVAL);
	assert_string_equal(prog_type_name(PROG_TYPE_GPU_MEM), "gpu_mem");
	assert_string_equal(prog_type_name(PROG_TYPE_UPROBE_PATH), "uprobe_path");
	assert_string_equal(prog_type_name(PROG_TYPE_GPU_BLOCK_EXIT), "gpu_block_exit");
	assert_true(prog_type_is_gpu(PROG_TYPE_GPU_BLOCK_ENTRY));
	assert_int_equal(prog_type_from_section("gpu/block_exit/", &t, &target), -EINVAL);
}

static void test_line_of(void **state)
{
	struct isa_insn insns[6] = {{.code = 0x95}};
	struct prog *p;
	struct err e = {{0}};
	assert_int_equal(prog_from_insns("t", insns, 6, &p, &e), 0);
	assert_null(prog_line_of(p, 3));
	p->lines = calloc(3, sizeof(*p->lines));
	p->line_cnt = 3;
	p->lines[0] = (struct prog_line){.insn = 1, .line = 10};
	p->lines[1] = (struct prog_line){.insn = 3, .line = 11};
	p->lines[2] = (struct prog_line){.insn = 4, .line = 12};
	assert_null(prog_line_of(p, 0));
	assert_int_equal(prog_line_of(p, 1)->line, 10);
	assert_int_equal(prog_line_of(p, 2)->line, 10);
	assert_int_equal(prog_line_of(p, 3)->line, 11);
	assert_int_equal(prog_line_of(p, 5)->line, 12);
	struct prog *none = NULL;
	assert_int_equal(prog_from_insns("empty", insns, 0, &none, &e), -EINVAL);
	assert_null(none);
	assert_string_equal(e.msg, "prog 'empty': no instructions");
	prog_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sections),
		cmocka_unit_test(test_line_of),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
