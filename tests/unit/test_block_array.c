/* SPDX-License-Identifier: MIT */
/*
 * The block-local array (MAP_TYPE_GPU_BLOCK_ARRAY, docs/device-maps.md):
 *   - the host side: definitions checked (size limit named), no values for
 *     the user side, one block's copy for device programs run on the host;
 *   - the loader reads the type from a clang-compiled object
 *     (examples/gpu_block_array.bpf.c) and the verifier accepts its device
 *     programs (the rejections are in tests/verifier/reject/block_array_*);
 *   - the emitter: inline lookups at the injector's .shared array, loads,
 *     stores and atomics through them in .shared space (generic ones with
 *     GPUEXT_PTX_BLOCK_GENERIC=1), updates inline, other helpers refused;
 *   - the injector: the arrays declared before the probes' code, zeroed by
 *     the block's threads before the entry barrier, fences around the exit
 *     count; ptxas accepts the module for sm_75 and sm_90 and its shared
 *     memory grows by the record and the arrays (ptxas -v).
 * On a GPU: tests/gpu/tools.sh (memtrace_block bytes = the analytic counts).
 */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/map.h"
#include "bpf/object.h"
#include "bpf/verifier.h"
#include "ptx/ptx_emit.h"
#include "ptx/ptx_inject.h"
#include "ptx/ptx_wrap.h"

#define OBJ TEST_BPF_DIR "/examples/gpu_block_array.bpf.o"
#define PTXAS "/usr/local/cuda/bin/ptxas"

static size_t count_str(const char *text, const char *s)
{
	size_t n = 0;
	for (const char *p = text; (p = strstr(p, s)); p += strlen(s))
		n++;
	return n;
}

static void test_map_host_side(void **state)
{
	struct map_def d = {.type = MAP_TYPE_GPU_BLOCK_ARRAY, .key_size = 4, .value_size = 12,
			    .max_entries = 4, .name = "blk"};
	struct map *m;
	struct err e = {{0}};
	uint32_t k = 2, next;
	unsigned char v[16] = {1};

	assert_int_equal(map_create(&d, &m, &e), 0);
	/* the user side sees no values */
	assert_int_equal(map_lookup_copy(m, &k, v), -EOPNOTSUPP);
	assert_int_equal(map_update_all_cpus(m, &k, v, 0), -EOPNOTSUPP);
	assert_int_equal(map_get_next_key(m, NULL, &next), -ENOENT);
	/* a device program run on the host: one block's copy, an array's rules */
	assert_int_equal(map_update(m, &k, v, 0), 0);
	assert_int_equal(*(unsigned char *)map_lookup(m, &k), 1);
	k = 4;
	assert_null(map_lookup(m, &k));
	assert_int_equal(map_update(m, &k, v, 0), -E2BIG);
	assert_int_equal(map_delete(m, &k), -EINVAL);
	map_free(m);

	d.max_entries = 5000;
	d.value_size = 8;
	assert_int_equal(map_def_check(&d, &e), -E2BIG);
	assert_string_equal(e.msg, "map 'blk': block-local array of 5000 x 8 bytes needs 40000 "
				   "bytes of each block's shared memory, over the limit of 32768");
	d.max_entries = 4;
	d.key_size = 8;
	assert_int_equal(map_def_check(&d, &e), -EINVAL);
	assert_string_equal(e.msg, "map 'blk': array key_size must be 4, not 8");
}

/* The object, verified, with the map references the agent would pass
 * (geometry only: the emitter addresses block arrays by name). */
static struct object *open_verified(struct ptx_map_ref *refs)
{
	struct object *obj;
	struct err e = {{0}};
	if (object_open(OBJ, &obj, &e) || object_create_maps(obj, &e))
		fail_msg("%s: %s", OBJ, e.msg);
	for (size_t i = 0; i < obj->prog_cnt; i++) {
		struct vfy_opts vo = {.profile = VFY_PROFILE_AUTO};
		if (verifier_check(obj->progs[i], &vo, NULL, &e))
			fail_msg("%s: %s", obj->progs[i]->name, e.msg);
	}
	assert_int_equal(obj->map_cnt, 2);
	for (size_t k = 0; k < obj->map_cnt; k++) {
		const struct map_def *d = &obj->maps[k].def;
		refs[k] = (struct ptx_map_ref){.map = 0x7000000000 + 0x1000 * k,
					       .value = 0x7000000080 + 0x1000 * k,
					       .type = d->type, .max_entries = d->max_entries,
					       .value_stride = (d->value_size + 7) & ~7u,
					       .value_size = d->value_size, .nr_sms = 1};
	}
	assert_int_equal(refs[0].type, MAP_TYPE_GPU_BLOCK_ARRAY); /* blk, from BTF */
	return obj;
}

/* The mem probe of ba_access and the block_exit site of ba_flush. */
static void emit(struct object *obj, const struct ptx_map_ref *refs, struct ptx_buf *code,
		 struct ptx_buf *site, char *mem_sym)
{
	struct ptx_emit_opts o = {.maps = refs};
	struct err e = {{0}};
	if (ptx_emit_mem_probe(code, code, NULL, object_find_prog(obj, "ba_access"), &o, mem_sym,
			       NULL, &e) ||
	    ptx_emit_probe_inline(code, site, object_find_prog(obj, "ba_flush"), &o,
				  PTX_PROBE_BLOCK_EXIT, &e))
		fail_msg("emit: %s", e.msg);
	strcat(mem_sym, "_probe");
}

static void test_emit_shared_space(void **state)
{
	struct ptx_map_ref refs[2];
	struct object *obj = open_verified(refs);
	struct ptx_buf code = {0}, site = {0};
	char sym[160];

	emit(obj, refs, &code, &site, sym);
	/* the lookup: the injector's array by name, no map header, no call;
	 * the generic address (for NULL tests) and the shared-window one */
	assert_true(count_str(code.text, "mov.u64 %t2, gx_block_map0;\n\tcvta.shared.u64") >= 1);
	assert_true(count_str(code.text, "mov.u32 %sa0, gx_block_map0;") >= 1);
	assert_null(strstr(code.text, "gx_rt_map_lookup"));
	/* the counters: shared reductions; the tag: a shared compare-and-swap,
	 * all at the shared-window address (no cvta back from the generic one) */
	assert_int_equal(count_str(code.text, "red.shared.add.u32 [%sa"), 2);
	assert_int_equal(count_str(code.text, "atom.shared.cas.b64 %t2, [%sa"), 1);
	assert_null(strstr(code.text, "\tred.add.u32"));
	assert_null(strstr(code.text, "cvta.to.shared"));
	/* the flush: loads from shared memory, the update inline into it */
	assert_true(count_str(site.text, "ld.shared.u32") >= 4);
	assert_true(count_str(site.text, "map_update_elem, inline: array of 4 x 16 bytes") == 1);
	ptx_buf_free(&code);
	ptx_buf_free(&site);

	/* the same by generic addresses, to compare on a GPU */
	setenv("GPUEXT_PTX_BLOCK_GENERIC", "1", 1);
	emit(obj, refs, &code, &site, sym);
	unsetenv("GPUEXT_PTX_BLOCK_GENERIC");
	assert_int_equal(count_str(code.text, "\tred.add.u32"), 2);
	assert_int_equal(count_str(code.text, "\tatom.cas.b64"), 1);
	assert_null(strstr(code.text, "red.shared"));
	ptx_buf_free(&code);
	ptx_buf_free(&site);
	object_free(obj);
}

/* Helpers the emitter cannot write inline on a block-local array. */
static void test_emit_refuses(void **state)
{
	/* r1 = map 0; r2 = fp - 8 (key), r3 = fp - 200 (value); update */
	struct isa_insn insns[] = {
		{ISA_OPC_ST_W, ISA_REG_FP, 0, -8, 0},
		{ISA_OPC_LD_IMM64, 1, ISA_PSEUDO_MAP_FD, 0, 0}, {0, 0, 0, 0, 0},
		{ISA_OPC_ALU64_MOV_X, 2, ISA_REG_FP, 0, 0},
		{ISA_OPC_ALU64_ADD_K, 2, 0, 0, -8},
		{ISA_OPC_ALU64_MOV_X, 3, ISA_REG_FP, 0, 0},
		{ISA_OPC_ALU64_ADD_K, 3, 0, 0, -200},
		{ISA_OPC_ALU64_MOV_K, 4, 0, 0, 0},
		{ISA_OPC_JMP_CALL, 0, ISA_CALL_HELPER, 0, 2},
		{ISA_OPC_JMP_EXIT, 0, 0, 0, 0},
	};
	struct map_def d = {.type = MAP_TYPE_GPU_BLOCK_ARRAY, .key_size = 4, .value_size = 136,
			    .max_entries = 2, .name = "big"};
	struct map *m;
	struct err e = {{0}};
	assert_int_equal(map_create(&d, &m, &e), 0);
	struct prog p = {.name = "upd", .insns = insns, .insn_cnt = 10, .maps = &m, .map_cnt = 1,
			 .type = PROG_TYPE_GPU_EXIT};
	struct ptx_map_ref ref = {.type = MAP_TYPE_GPU_BLOCK_ARRAY, .max_entries = 2,
				  .value_stride = 136, .value_size = 136};
	struct ptx_emit_opts o = {.maps = &ref};
	struct ptx_buf b = {0};
	assert_int_equal(ptx_emit_prog(&b, &p, &o, NULL, &e), -ENOTSUP);
	assert_string_equal(e.msg, "program 'upd': insn 8: helper 2 on block-local array map 0: only lookups "
				   "and updates of values up to 128 bytes work on the GPU");
	ptx_buf_free(&b);
	map_free(m);
}

/* A kernel with 64 bytes of static shared memory and a dynamic array. */
static const char kernel[] =
	".version 7.8\n.target sm_75\n.address_size 64\n"
	".extern .shared .align 16 .b8 dyn[];\n"
	".visible .entry blk(.param .u64 blk_p0)\n{\n"
	"\t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n"
	"\t.shared .align 4 .b8 st[64];\n"
	"\tmov.u32 %r1, %tid.x;\n\tst.shared.u32 [st], %r1;\n\tst.shared.u32 [dyn], %r1;\n"
	"\tbar.sync 0;\n\tsetp.gt.u32 %p1, %r1, 63;\n\t@%p1 ret;\n"
	"\tld.shared.u32 %r2, [dyn+4];\n"
	"\tld.param.u64 %rd1, [blk_p0];\n\tcvta.to.global.u64 %rd1, %rd1;\n"
	"\tst.global.u32 [%rd1], %r2;\n\tret;\n}\n";

static char *ptxas_v(const char *text, const char *arch, int *st)
{
	char path[] = "/tmp/gpuext-blockarray-XXXXXX", cmd[256];
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	snprintf(cmd, sizeof(cmd), PTXAS " -v -arch=%s -o /dev/null %s 2>&1", arch, path);
	char *out = test_run_cmd(cmd, st);
	unlink(path);
	return out;
}

static void test_inject(void **state)
{
	struct ptx_map_ref refs[2];
	struct object *obj = open_verified(refs);
	struct ptx_buf code = {0}, site = {0}, rt = {0};
	char sym[160], bsym[PTX_BLOCK_ARRAY_SYM_LEN];

	if (access(PTXAS, X_OK))
		skip();
	emit(obj, refs, &code, &site, sym);
	const char *texts[2] = {code.text, site.text};
	ptx_emit_runtime_used(&rt, texts, 2);
	ptx_buf_append(&rt, code.text, code.len);
	char *extra = ptx_buf_take(&rt, NULL);
	ptx_block_array_sym(0, bsym, sizeof(bsym));
	struct ptx_block_array arr = {bsym, 4 * 16};
	struct ptx_inject_opts o = {.kernel = "blk", .mem_sym = sym,
				    .block_exit_code = site.text, .block_arrays = &arr,
				    .n_block_arrays = 1, .extra = extra,
				    .min_version_major = 7, .min_version_minor = 8};
	struct ptx_module *m;
	struct err e = {{0}};
	char *out;
	size_t len;
	assert_int_equal(ptx_parse(kernel, strlen(kernel), &m, &e), 0);
	if (ptx_inject(m, &o, &out, &len, &e))
		fail_msg("inject: %s", e.msg);
	/* declared once, before the probes that name it */
	const char *decl = strstr(out, ".shared .align 16 .b8 gx_block_map0[64];\n");
	assert_non_null(decl);
	assert_int_equal(count_str(out, ".b8 gx_block_map0["), 1);
	assert_true(decl < strstr(out, sym));
	/* zeroed by the threads of row 0, 16 bytes a store, then the entry
	 * barrier */
	const char *zero = strstr(out, "GXZ_0:"), *meet = strstr(out, "GXB_MEET:\n\tbar.sync 0;");
	assert_true(zero && meet && zero < meet);
	assert_int_equal(count_str(out, "st.shared.v2.u64 [%gxz_a], {%gxz_z, %gxz_z};"), 1);
	/* a release before each warp's exit count, an acquire before the flush */
	assert_int_equal(count_str(out, "fence.acq_rel.cta;"), 2);
	int st;
	for (int a = 0; a < 2; a++) {
		char *v = ptxas_v(out, a ? "sm_90" : "sm_75", &st);
		if (st)
			fail_msg("ptxas: %s", v);
		/* 64 of the kernel's, 48 of the block record, 64 of the array */
		if (!strstr(v, "176 bytes smem"))
			fail_msg("ptxas -v, want 176 bytes smem: %s", v);
		free(v);
	}
	free(out);
	/* no block program: the arrays still get the record, zeroing and barrier */
	o.block_exit_code = NULL;
	assert_int_equal(ptx_inject(m, &o, &out, &len, &e), 0);
	assert_non_null(strstr(out, "GXZ_0:"));
	assert_non_null(strstr(out, "bar.sync 0;"));
	assert_int_equal(count_str(out, "fence.acq_rel.cta;"), 0);
	free(out);
	ptx_module_free(m);
	free(extra);
	ptx_buf_free(&code);
	ptx_buf_free(&site);
	object_free(obj);
}

/*
 * Fail-open: memtrace_block's module for reduce_atomic fails to load (the fake
 * driver refuses it, as the driver refuses a kernel whose shared memory no
 * longer fits): the kernel runs unchanged, the notice names it and the
 * bytes the arrays added, the application succeeds.
 */
static void test_fail_open(void **state)
{
	char cmd[1024];
	int st;
	if (access("build/fakecuda/app", X_OK) || access("build/libgpuext-agent.so", R_OK))
		skip();
	snprintf(cmd, sizeof(cmd),
		 "FAKECUDA_FAIL=cuLinkComplete:2,cuModuleLoadDataEx:2 "
		 "GPUEXT_AGENT=build/libgpuext-agent.so %s run " TEST_BPF_DIR
		 "/tools/memtrace_block.bpf.o -- build/fakecuda/app "
		 "tests/ptx_corpus/checked.compute_75.ptx vec_add reduce_atomic 2>&1",
		 test_cli_path());
	char *out = test_run_cmd(cmd, &st);
	assert_non_null(out);
	if (st || !strstr(out, "app ok") ||
	    !strstr(out, "gpuext: kernel reduce_atomic runs unchanged: with 1 block-local "
			 "array(s) of 488 bytes and the block record's 48 added to its static "
			 "shared memory: "))
		fail_msg("status %d:\n%s", st, out);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_host_side),
		cmocka_unit_test(test_emit_shared_space),
		cmocka_unit_test(test_emit_refuses),
		cmocka_unit_test(test_inject),
		cmocka_unit_test(test_fail_open),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
