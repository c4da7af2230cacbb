/* SPDX-License-Identifier: MIT */
/*
 * The loader's view of every test program (tests/progs/NAME.bpf.c), compiled
 * by clang (build/bpf) and, where installed, clang-19 (build/bpf-clang19):
 * programs, sections, types, targets, maps with their definitions, license,
 * relocations, bpf-to-bpf call layout and BTF line info.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/btf.h"
#include "bpf/object.h"

static const char *const obj_dirs[] = {TEST_BPF_DIR "/tests/progs",
				       "build/bpf-clang19/tests/progs"};

struct want_prog {
	const char *name, *section, *type, *target;
	size_t insns_clang14; /* exact count from Debian 12's clang 14 */
};

struct want_map {
	const char *name;
	uint32_t type, key, value, max, flags;
};

struct want_obj {
	const char *file, *license;
	struct want_prog progs[4];
	struct want_map maps[4];
};

static const struct want_obj want[] = {
	{"array_count", "GPL",
	 {{"count_launch", "uprobe/cuLaunchKernel", "uprobe", "cuLaunchKernel", 16}},
	 {{"launches", MAP_TYPE_ARRAY, 4, 8, 8, 0}}},
	{"percpu_array", "GPL",
	 {{"kernel_time", "cupti/kernel", "cupti_kernel", NULL, 22}},
	 {{"ktime", MAP_TYPE_PERCPU_ARRAY, 4, 16, 1, 0}}},
	{"hash_count", "GPL",
	 {{"count_alloc", "uprobe/cuMemAlloc_v2", "uprobe", "cuMemAlloc_v2", 25}},
	 {{"alloc_sizes", MAP_TYPE_HASH, 8, 8, 64, 0}}},
	{"percpu_hash", "GPL",
	 {{"memcpy_bytes", "cupti/memcpy", "cupti_memcpy", NULL, 33}},
	 {{"bytes_by_kind", MAP_TYPE_PERCPU_HASH, 4, 8, 16, 0}}},
	{"lru_hash", "GPL",
	 {{"count_fault", "cupti/uvm", "cupti_uvm", NULL, 24}},
	 {{"faults", MAP_TYPE_LRU_HASH, 8, 4, 4, 0}}},
	{"ringbuf", "GPL",
	 {{"memcpy_ret", "uretprobe/cuMemcpyHtoD_v2", "uretprobe", "cuMemcpyHtoD_v2", 46}},
	 {{"events", MAP_TYPE_RINGBUF, 0, 0, 4096, 0}, {".bss", MAP_TYPE_ARRAY, 4, 8, 1, 0}}},
	{"legacy_maps", "Dual MIT/GPL",
	 {{"record_free", "uprobe/cuMemFree_v2", "uprobe", "cuMemFree_v2", 27}},
	 {{"freed", MAP_TYPE_HASH, 8, 4, 32, 0}, {"free_total", MAP_TYPE_ARRAY, 4, 8, 1, 0}}},
	{"global_data", "GPL",
	 {{"on_entry", "gpu/entry/vecadd*", "gpu_entry", "vecadd*", 24}},
	 {{".rodata", MAP_TYPE_ARRAY, 4, 16, 1, MAP_F_RDONLY_PROG},
	  {".data", MAP_TYPE_ARRAY, 4, 8, 1, 0},
	  {".bss", MAP_TYPE_ARRAY, 4, 24, 1, 0}}},
	{"strings", "GPL",
	 {{"on_init", "uprobe/libcuda.so.1:cuInit", "uprobe_path", "libcuda.so.1:cuInit", 26}},
	 {{".rodata.str1.1", MAP_TYPE_ARRAY, 4, 7, 1, MAP_F_RDONLY_PROG},
	  {".bss", MAP_TYPE_ARRAY, 4, 80, 1, 0},
	  {".rodata", MAP_TYPE_ARRAY, 4, 35, 1, MAP_F_RDONLY_PROG}}},
	{"subprogs", "GPL",
	 {{"on_mem", "gpu/mem/matmul", "gpu_mem", "matmul", 27},
	  {"on_exit", "gpu/exit/matmul", "gpu_exit", "matmul", 16}},
	 {{NULL, 0, 0, 0, 0, 0}}},
	{"loops", "GPL",
	 {{"hash_bytes", "kprobe/reduce_kernel", "gpu_entry", "reduce_kernel", 68}},
	 {{".bss", MAP_TYPE_ARRAY, 4, 8, 1, 0}}},
	{"atomics", "GPL",
	 {{"atomic_ops", "struct_ops/evict_prepare", "struct_ops", "evict_prepare", 36}},
	 {{"ctrs", MAP_TYPE_ARRAY, 4, 64, 1, 0}, {".bss", MAP_TYPE_ARRAY, 4, 8, 1, 0}}},
	{"btf_maps", "GPL",
	 {{"copy_name", "raw/copy", "raw", NULL, 130}},
	 {{"by_len", MAP_TYPE_HASH, 8, 16, 8, MAP_F_NO_PREALLOC},
	  {"names", MAP_TYPE_ARRAY, 4, 24, 4, 0},
	  {"slots", MAP_TYPE_PERCPU_ARRAY, 4, 32, 2, 0}}},
	{"core_read", "GPL",
	 {{"core_read", "uprobe/cuInit", "uprobe", "cuInit", 0}},
	 {{NULL, 0, 0, 0, 0, 0}}},
	{"multi", "GPL",
	 {{"sync_enter_a", "uprobe/cuStreamSynchronize", "uprobe", "cuStreamSynchronize", 15},
	  {"sync_enter_b", "uprobe/cuStreamSynchronize", "uprobe", "cuStreamSynchronize", 15},
	  {"sync_exit", "uretprobe/cuStreamSynchronize", "uretprobe", "cuStreamSynchronize", 15}},
	 {{"calls", MAP_TYPE_ARRAY, 4, 8, 2, 0}}},
};

/* Open dir/file.bpf.o; NULL (and skip) when that compiler's build is absent. */
static struct object *open_obj(const char *dir, const char *file, int *is_clang14)
{
	char path[256];
	struct err e = {{0}};
	struct object *obj = NULL;
	size_t len;

	snprintf(path, sizeof(path), "%s/%s.bpf.o", dir, file);
	if (access(path, R_OK))
		return NULL;
	char *bytes = test_read_file(path, &len);
	assert_non_null(bytes);
	/* clang records itself in .comment: exact counts hold for clang 14. */
	*is_clang14 = memmem(bytes, len, "clang version 14.", 17) != NULL;
	free(bytes);
	if (object_open(path, &obj, &e))
		fail_msg("%s: %s", path, e.msg);
	return obj;
}

static void check_obj(const struct want_obj *w, const char *dir)
{
	int clang14 = 0;
	struct object *obj = open_obj(dir, w->file, &clang14);
	size_t np = 0, nm = 0;

	if (!obj) {
		assert_string_not_equal(dir, obj_dirs[0]); /* the default build must exist */
		return;
	}
	assert_string_equal(obj->license, w->license);
	while (np < 4 && w->progs[np].name)
		np++;
	while (nm < 4 && w->maps[nm].name)
		nm++;
	assert_int_equal(obj->prog_cnt, np);
	assert_int_equal(obj->map_cnt, nm);
	for (size_t i = 0; i < np; i++) {
		const struct prog *p = obj->progs[i];
		assert_string_equal(p->name, w->progs[i].name);
		assert_string_equal(p->section, w->progs[i].section);
		assert_string_equal(prog_type_name(p->type), w->progs[i].type);
		if (w->progs[i].target)
			assert_string_equal(p->target, w->progs[i].target);
		else
			assert_null(p->target);
		if (clang14 && w->progs[i].insns_clang14)
			assert_int_equal(p->insn_cnt, w->progs[i].insns_clang14);
		/* Every function ends in exit; the program's last insn too. */
		assert_int_equal(p->insns[p->insn_cnt - 1].code, ISA_OPC_JMP_EXIT);
		assert_int_equal(p->map_cnt, nm);
		assert_true(p->line_cnt > 0);
		for (size_t l = 1; l < p->line_cnt; l++)
			assert_true(p->lines[l - 1].insn <= p->lines[l].insn);
		assert_ptr_equal(object_find_prog(obj, p->name), p);
	}
	for (size_t i = 0; i < nm; i++) {
		const struct map_def *d = &obj->maps[i].def;
		assert_string_equal(d->name, w->maps[i].name);
		assert_int_equal(d->type, w->maps[i].type);
		assert_int_equal(d->key_size, w->maps[i].key);
		assert_int_equal(d->value_size, w->maps[i].value);
		assert_int_equal(d->max_entries, w->maps[i].max);
		assert_int_equal(d->flags, w->maps[i].flags);
		assert_ptr_equal(object_find_map(obj, d->name), &obj->maps[i]);
	}
	/* Every pseudo LD_IMM64 names a map of the object, in range. */
	for (size_t i = 0; i < obj->prog_cnt; i++) {
		const struct prog *p = obj->progs[i];
		for (size_t k = 0; k < p->insn_cnt; k++) {
			const struct isa_insn *in = &p->insns[k];
			if (in->code != ISA_OPC_LD_IMM64)
				continue;
			assert_true(k + 1 < p->insn_cnt);
			if (in->src == ISA_PSEUDO_NONE) { /* a 64-bit constant */
				k++;
				continue;
			}
			assert_true(in->src == ISA_PSEUDO_MAP_FD || in->src == ISA_PSEUDO_MAP_VALUE);
			assert_in_range(in->imm, 0, nm - 1);
			if (in->src == ISA_PSEUDO_MAP_VALUE)
				assert_in_range((uint32_t)in[1].imm, 0,
						obj->maps[in->imm].def.value_size - 1);
			else
				assert_true(strcmp(obj->maps[in->imm].def.name, ".bss"));
			k++;
		}
	}
	object_free(obj);
}

static void test_every_program_as_loaded(void **state)
{
	for (size_t d = 0; d < 2; d++)
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
			check_obj(&want[i], obj_dirs[d]);
}

/* Index of the k-th (0-based) local call in p, or -1. */
static long nth_local_call(const struct prog *p, int k)
{
	for (size_t i = 0; i < p->insn_cnt; i++)
		if (p->insns[i].code == ISA_OPC_JMP_CALL && p->insns[i].src == ISA_CALL_LOCAL &&
		    k-- == 0)
			return (long)i;
	return -1;
}

/* The source line (from BTF) that starts the function at insn. */
static const char *line_text(const struct prog *p, size_t insn)
{
	const struct prog_line *l = prog_line_of(p, insn);
	return l && l->text ? l->text : "";
}

static void test_subprograms_appended_and_calls_fixed(void **state)
{
	for (size_t d = 0; d < 2; d++) {
		int clang14;
		struct object *obj = open_obj(obj_dirs[d], "subprogs", &clang14);
		if (!obj)
			continue;
		struct prog *mem = object_find_prog(obj, "gpu/mem/matmul");
		struct prog *ex = object_find_prog(obj, "on_exit");
		assert_non_null(mem);
		assert_non_null(ex);
		/* on_mem -> sum_squares -> square -> twice, each appended once. */
		long c0 = nth_local_call(mem, 0), c1 = nth_local_call(mem, 1),
		     c2 = nth_local_call(mem, 2);
		assert_true(c0 >= 0 && c1 >= 0 && c2 >= 0);
		assert_int_equal(nth_local_call(mem, 3), -1);
		size_t t0 = c0 + 1 + mem->insns[c0].imm, t1 = c1 + 1 + mem->insns[c1].imm,
		       t2 = c2 + 1 + mem->insns[c2].imm;
		assert_non_null(strstr(line_text(mem, t0), "sum_squares("));
		assert_true(t0 < t1 && t1 < t2 && t2 < mem->insn_cnt);
		assert_non_null(strstr(line_text(mem, t2), "twice("));
		assert_int_equal(mem->insns[t0 - 1].code, ISA_OPC_JMP_EXIT);
		assert_int_equal(mem->insns[t2 - 1].code, ISA_OPC_JMP_EXIT);
		/* on_exit: .text's twice and its own section's clamp. */
		long e0 = nth_local_call(ex, 0), e1 = nth_local_call(ex, 1);
		assert_true(e0 >= 0 && e1 >= 0);
		assert_non_null(strstr(line_text(ex, e0 + 1 + ex->insns[e0].imm), "twice("));
		assert_non_null(strstr(line_text(ex, e1 + 1 + ex->insns[e1].imm), "clamp("));
		const struct prog_line *l = prog_line_of(ex, 0);
		assert_non_null(l);
		assert_non_null(strstr(l->file, "subprogs.bpf.c"));
		assert_int_equal(l->line, 44);
		object_free(obj);
	}
}

static void test_global_data_relocations(void **state)
{
	for (size_t d = 0; d < 2; d++) {
		int clang14;
		struct object *obj = open_obj(obj_dirs[d], "strings", &clang14);
		if (!obj)
			continue;
		const struct prog *p = obj->progs[0];
		int fmt_offsets = 0, str_refs = 0;
		for (size_t k = 0; k + 1 < p->insn_cnt; k++) {
			const struct isa_insn *in = &p->insns[k];
			if (in->code != ISA_OPC_LD_IMM64)
				continue;
			const struct object_map *m = &obj->maps[in->imm];
			/* The address must point at the right string of the section. */
			const char *at = (const char *)m->init + in[1].imm;
			if (!strcmp(m->def.name, ".rodata")) {
				assert_true(!strcmp(at, "cuInit flags=%ld") ||
					    !strcmp(at, "flags=%ld name=%s"));
				fmt_offsets |= 1 << !strcmp(at, "flags=%ld name=%s");
			} else if (!strcmp(m->def.name, ".rodata.str1.1")) {
				assert_string_equal(at, "gpuext");
				str_refs++;
			} else {
				assert_string_equal(m->def.name, ".bss");
				assert_null(m->init);
				/* name at 0, msg at 16 */
				assert_true(in[1].imm == 0 || in[1].imm == 16);
			}
			k++;
		}
		assert_int_equal(fmt_offsets, 3);
		assert_int_equal(str_refs, 1);
		object_free(obj);

		obj = open_obj(obj_dirs[d], "global_data", &clang14);
		assert_non_null(obj);
		const struct object_map *ro = object_find_map(obj, ".rodata");
		const struct object_map *data = object_find_map(obj, ".data");
		uint64_t calls, bias;
		uint32_t scale;
		assert_int_equal(ro->init_len, 16);
		memcpy(&bias, ro->init, 8);
		memcpy(&scale, (const char *)ro->init + 8, 4);
		assert_true((bias == 100 && scale == 3) || (bias == 3));
		memcpy(&calls, data->init, 8);
		assert_int_equal(calls, 5);
		assert_null(object_find_map(obj, ".bss")->init);
		object_free(obj);
	}
}

static void test_btf_map_definitions(void **state)
{
	int clang14;
	struct object *obj = open_obj(obj_dirs[0], "atomics", &clang14);
	struct map_def def;
	struct err e = {{0}};
	uint64_t size;

	assert_non_null(obj);
	assert_non_null(obj->btf);
	uint32_t ds = btf_find_datasec(obj->btf, ".maps");
	assert_true(ds > 0);
	const struct btf_type *t = btf_type_by_id(obj->btf, ds);
	assert_int_equal(BTF_INFO_VLEN(t->info), 1);
	const struct btf_var_secinfo *vi = (const void *)(t + 1);
	assert_int_equal(btf_map_def(obj->btf, vi->type, &def, &e), 0);
	assert_string_equal(def.name, "ctrs");
	assert_int_equal(def.value_size, 64);
	/* struct counters: 7 u64 + 2 u32 */
	uint32_t id = 0;
	for (uint32_t i = 1; i < btf_type_cnt(obj->btf); i++)
		if (!strcmp(btf_type_name(obj->btf, i), "counters"))
			id = i;
	assert_true(id > 0);
	assert_int_equal(btf_type_size(obj->btf, id, &size, &e), 0);
	assert_int_equal(size, 64);
	assert_int_not_equal(btf_type_size(obj->btf, 0, &size, &e), 0);
	assert_non_null(strstr(e.msg, "type id 0 (void) has no size"));
	object_free(obj);
}

/* func_info of .BTF.ext: the functions of each section, named through BTF. */
static void test_btf_function_names(void **state)
{
	int clang14;
	struct object *obj = open_obj(obj_dirs[0], "subprogs", &clang14);
	const struct btf_func *funcs;
	size_t cnt;
	char names[128] = "";

	assert_non_null(obj);
	btf_ext_funcs(obj->btf, ".text", &funcs, &cnt);
	assert_int_equal(cnt, 3);
	for (size_t i = 0; i < cnt; i++) {
		strcat(names, btf_type_name(obj->btf, funcs[i].type_id));
		strcat(names, " ");
		if (i)
			assert_true(funcs[i - 1].insn < funcs[i].insn);
	}
	/* In .text order: sum_squares is global and comes first. */
	assert_string_equal(names, "sum_squares square twice ");
	assert_int_equal(funcs[0].insn, 0);
	btf_ext_funcs(obj->btf, "gpu/exit/matmul", &funcs, &cnt);
	assert_int_equal(cnt, 2);
	assert_string_equal(btf_type_name(obj->btf, funcs[0].type_id), "on_exit");
	assert_string_equal(btf_type_name(obj->btf, funcs[1].type_id), "clamp");
	btf_ext_funcs(obj->btf, "no/such/section", &funcs, &cnt);
	assert_int_equal(cnt, 0);
	object_free(obj);
}

/* CO-RE records are counted (and left as compiled); other objects have none. */
static void test_core_relocations_counted(void **state)
{
	for (size_t d = 0; d < 2; d++) {
		int clang14;
		struct object *obj = open_obj(obj_dirs[d], "core_read", &clang14);
		if (!obj)
			continue;
		assert_int_equal(btf_ext_core_relo_cnt(obj->btf), 3);
		object_free(obj);
		obj = open_obj(obj_dirs[d], "array_count", &clang14);
		assert_int_equal(btf_ext_core_relo_cnt(obj->btf), 0);
		object_free(obj);
	}
}

static void test_find_by_section_and_missing(void **state)
{
	int clang14;
	struct object *obj = open_obj(obj_dirs[0], "multi", &clang14);

	assert_non_null(obj);
	/* A section with two programs finds the first. */
	assert_string_equal(object_find_prog(obj, "uprobe/cuStreamSynchronize")->name,
			    "sync_enter_a");
	assert_string_equal(object_find_prog(obj, "sync_enter_b")->name, "sync_enter_b");
	assert_null(object_find_prog(obj, "nope"));
	assert_null(object_find_map(obj, "nope"));
	object_free(obj);
}

static void test_open_missing_file(void **state)
{
	struct object *obj = (void *)1;
	struct err e = {{0}};

	assert_int_not_equal(object_open("build/no/such.o", &obj, &e), 0);
	assert_null(obj);
	assert_non_null(strstr(e.msg, "build/no/such.o: No such file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_program_as_loaded),
		cmocka_unit_test(test_subprograms_appended_and_calls_fixed),
		cmocka_unit_test(test_global_data_relocations),
		cmocka_unit_test(test_btf_map_definitions),
		cmocka_unit_test(test_btf_function_names),
		cmocka_unit_test(test_core_relocations_counted),
		cmocka_unit_test(test_find_by_section_and_missing),
		cmocka_unit_test(test_open_missing_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
