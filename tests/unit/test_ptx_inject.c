/* SPDX-License-Identifier: MIT */
/*
 * Probe injection: every kernel of every corpus file instrumented with
 * entry, exit and mem probes (real translated eBPF programs, the device
 * runtime) is accepted by the real ptxas for sm_75 (where the module's
 * target allows) and sm_90; the number of probe calls equals what an
 * independent line scan of the original counts; predicates, sizes, kinds,
 * placement, fresh names and the .version are checked on small kernels.
 * Semantics on a GPU: tests/gpu/inject_check.c.
 */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/object.h"
#include "bpf/verifier.h"
#include "ptx/ptx_emit.h"
#include "ptx/ptx_wrap.h"
#include "ptx/ptx_inject.h"
#include "ptx_check.h"
#include "ptx_corpus.h"
#include "ptx_refs.h"

#define ENT "gx_ent_probe"
#define EXT "gx_ext_probe"
#define MEM "gx_mem_probe"

static size_t count_str(const char *text, const char *s)
{
	size_t n = 0;
	for (const char *p = text; (p = strstr(p, s)); p += strlen(s))
		n++;
	return n;
}

static char *inject(const char *text, const char *kernel, const char *extra, struct err *e,
		    int *rc)
{
	struct ptx_module *m;
	struct ptx_target t;
	char *out = NULL;
	size_t len;

	if ((*rc = ptx_parse(text, strlen(text), &m, e)))
		return NULL;
	struct ptx_inject_opts o = {.kernel = kernel, .entry_sym = ENT, .exit_sym = EXT,
				    .mem_sym = MEM, .extra = extra};
	if (!ptx_target_parse(ptx_module_target(m), &t, NULL)) {
		o.min_version_major = t.isa_major;
		o.min_version_minor = t.isa_minor;
	}
	*rc = ptx_inject(m, &o, &out, &len, e);
	if (!*rc)
		assert_int_equal(strlen(out), len);
	ptx_module_free(m);
	return out;
}

static char *inject_ok(const char *text, const char *kernel, const char *extra)
{
	struct err e = {{0}};
	int rc;
	char *out = inject(text, kernel, extra, &e, &rc);
	if (rc)
		fail_msg("inject %s: %s", kernel, e.msg);
	return out;
}

static void test_corpus_inject_ptxas(void **state)
{
	char **paths;
	size_t n = ptx_corpus_list(&paths), total_mem = 0, total_kernels = 0;

	assert_true(n >= 5);
	for (size_t i = 0; i < n; i++) {
		char *text;
		struct ptx_module *m = ptx_check_parse(paths[i], &text);
		char target[32];
		snprintf(target, sizeof(target), "%s", ptx_module_target(m));
		char *extra = ptx_corpus_probes(target, NULL);
		assert_non_null(extra);
		/* each kernel alone: probe calls equal the independent count */
		char *all = strdup(text);
		for (size_t k = 0; k < ptx_module_kernel_count(m); k++) {
			const char *name = ptx_module_kernel_name(m, k);
			size_t mem, exits;
			ptx_corpus_count(text, name, &mem, &exits);
			char *one = inject_ok(text, name, NULL);
			if (count_str(one, "call " MEM ",") != mem ||
			    count_str(one, "call " EXT ";") != exits ||
			    count_str(one, "call " ENT ";") != 1)
				fail_msg("%s: %s: %zu mem and %zu exit probes, expected %zu and %zu",
					 paths[i], name, count_str(one, "call " MEM ","),
					 count_str(one, "call " EXT ";"), mem, exits);
			assert_true(exits >= 1);
			total_mem += mem;
			free(one);
			/* every kernel of the module, one after the other, with the
			 * probe code added once */
			char *next = inject_ok(all, name, k == 0 ? extra : NULL);
			free(all);
			all = next;
			total_kernels++;
		}
		/* its own target, and sm_90 where that can run the module */
		struct ptx_target t;
		assert_int_equal(ptx_target_parse(target, &t, NULL), 0);
		const char *archs[2] = {target, t.sm < 90 ? "sm_90" : NULL};
		for (int a = 0; a < 2 && archs[a]; a++)
			ptx_corpus_ptxas_ok(all, archs[a], paths[i], "ptx-inject-failed.ptx");
		free(all);
		free(extra);
		free(text);
		ptx_module_free(m);
	}
	assert_true(total_kernels >= 20);
	assert_true(total_mem >= 50);
	ptx_corpus_free_list(paths, n);
}

static const char small[] =
	".version 7.0\n.target sm_75\n.address_size 64\n"
	"// gxi occurs in this comment: fresh names must avoid it\n"
	".global .align 4 .u32 gcount;\n"
	".visible .entry k(.param .u64 k_p0, .param .u32 k_p1)\n.maxntid 128, 1, 1\n{\n"
	"\t.reg .pred %p<3>;\n\t.reg .b32 %r<9>;\n\t.reg .b64 %rd<9>;\n\t.reg .f32 %f<5>;\n"
	"\t.shared .align 4 .b8 sm[64];\n"
	"$L__top:\n"
	"\tld.param.u64 %rd1, [k_p0];\n"
	"\tld.param.u32 %r1, [k_p1];\n"
	"\tsetp.eq.s32 %p1, %r1, 0;\n"
	"\t@%p1 ret;\n"
	"\tld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1+16];\n"
	"\t@!%p1 st.global.v2.u64 [%rd1+-8], {%rd2, %rd3};\n"
	"\tatom.global.cas.b32 %r2, [%rd1], %r3, %r4;\n"
	"\tred.global.add.u32 [%rd1+4], %r3;\n"
	"\tld.shared.u32 %r5, [sm];\n"
	"\tld.u8 %r6, [%rd2];\n"
	"\tatom.global.add.u32 %r8, [gcount+4], 1;\n"
	"\t{\n\t.reg .b64 inner;\n\tadd.s64 inner, %rd1, 8;\n\tldu.global.u32 %r2, [inner];\n\t}\n"
	"\tsetp.ne.s32 %p2, %r2, 0;\n\t@%p2 bra $L__top;\n"
	"\texit;\n}\n";

static void test_placement_and_forms(void **state)
{
	char *out = inject_ok(small, "k", "// EXTRA CODE\n");
	const char *body = strstr(out, ".entry k(");

	/* extra after the header, version raised, fresh prefix */
	assert_non_null(strstr(out, ".address_size 64\n\n// EXTRA CODE\n"));
	assert_true(!strncmp(out, ".version 7.8\n", 13));
	assert_null(strstr(out, "%gxi_"));
	assert_non_null(strstr(out, "\t.reg .b64 %gxix_a;\n"));
	/* entry after the declarations, before the loop label */
	assert_non_null(strstr(body, "\t.shared .align 4 .b8 sm[64];\n\tcall " ENT ";\n$L__top:\n"));
	assert_int_equal(count_str(out, "call " ENT ";"), 1);
	/* exits: the predicated one keeps its predicate */
	assert_non_null(strstr(out, "\t@%p1 call " EXT ";\n\t@%p1 ret;\n"));
	assert_non_null(strstr(out, "\tcall " EXT ";\n\texit;\n"));
	/* mem: address, size, kind, guard */
	assert_non_null(strstr(out, "mov.u64 %gxix_a, %rd1;\n\tadd.s64 %gxix_a, %gxix_a, 16;\n"
				    "\tst.param.b64 [gxix_a], %gxix_a;\n"
				    "\tst.param.b32 [gxix_s], 16;\n\tst.param.b32 [gxix_k], 0;\n"));
	assert_non_null(strstr(out, "@!%p1 mov.u64 %gxix_a, %rd1;\n\t@!%p1 sub.s64 %gxix_a, "
				    "%gxix_a, 8;\n"));
	assert_non_null(strstr(out, "st.param.b32 [gxix_s], 16;\n\tst.param.b32 [gxix_k], 1;\n"
				    "\t@!%p1 call " MEM ", (gxix_a, gxix_s, gxix_k);\n"));
	assert_non_null(strstr(out, "[gxix_s], 4;\n\tst.param.b32 [gxix_k], 2;\n\tcall " MEM
				    ", (gxix_a, gxix_s, gxix_k);\n\t}\n\tatom.global.cas.b32"));
	assert_non_null(strstr(out, "[gxix_k], 2;\n\tcall " MEM ", (gxix_a, gxix_s, gxix_k);"
				    "\n\t}\n\tred.global.add.u32"));
	/* a generic access */
	assert_non_null(strstr(out, "[gxix_s], 1;\n\tst.param.b32 [gxix_k], 0;\n"));
	/* a .global variable plus an offset; an inner scope's register */
	assert_non_null(strstr(out, "mov.u64 %gxix_a, gcount;\n\tadd.s64 %gxix_a, %gxix_a, 4;\n"));
	assert_non_null(strstr(out, "mov.u64 %gxix_a, inner;\n"));
	/* .param and .shared accesses are left alone: 7 mem probes */
	assert_int_equal(count_str(out, "call " MEM ","), 7);
	assert_int_equal(count_str(out, "call " EXT ";"), 2);
	free(out);

	/* only what is asked for */
	struct ptx_module *m;
	struct err e = {{0}};
	char *only;
	size_t len;
	assert_int_equal(ptx_parse(small, strlen(small), &m, &e), 0);
	struct ptx_inject_opts o = {.kernel = "k", .exit_sym = EXT};
	assert_int_equal(ptx_inject(m, &o, &only, &len, &e), 0);
	assert_int_equal(count_str(only, "call "), 2);
	assert_true(!strncmp(only, ".version 7.0\n", 13));
	free(only);
	ptx_module_free(m);
}

/* only_kernel: the other kernels go, unless something names them. */
static void test_only_kernel(void **state)
{
	static const char text[] =
		".version 8.0\n.target sm_90\n.address_size 64\n"
		".func (.param .b32 r) helper(.param .b32 a)\n{\n\t.reg .b32 %r<2>;\n"
		"\tld.param.b32 %r1, [a];\n\tst.param.b32 [r], %r1;\n\tret;\n}\n"
		".visible .entry gone()\n{\n\tret;\n}\n"
		".visible .entry named()\n{\n\tret;\n}\n"
		".visible .entry target(.param .u64 p)\n{\n\t.reg .b64 %rd<3>;\n"
		"\tmov.u64 %rd1, named;\n\tld.param.u64 %rd2, [p];\n"
		"\tst.global.u64 [%rd2], %rd1;\n\tret;\n}\n"
		".visible .entry also_gone()\n{\n\tret;\n}\n";
	struct ptx_module *m;
	struct err e = {{0}};
	char *out, *log;
	size_t len;

	assert_int_equal(ptx_parse(text, sizeof(text) - 1, &m, &e), 0);
	struct ptx_inject_opts o = {.kernel = "target", .only_kernel = 1};
	assert_int_equal(ptx_inject(m, &o, &out, &len, &e), 0);
	assert_null(strstr(out, "gone"));
	assert_non_null(strstr(out, ".entry named()"));
	assert_non_null(strstr(out, ".entry target("));
	assert_non_null(strstr(out, "helper"));
	int st = ptx_corpus_ptxas(out, len, "sm_90", &log);
	if (st > 0)
		fail_msg("ptxas:\n%s\n%s", log, out);
	free(log);
	free(out);
	ptx_module_free(m);

	/* a corpus module: one kernel left, with the .func it calls */
	char *ctext = test_read_file(PTX_CORPUS_DIR "/constructs.compute_90.ptx", NULL);
	char *extra = ptx_corpus_probes("sm_90", NULL);
	assert_non_null(ctext);
	assert_int_equal(ptx_parse(ctext, strlen(ctext), &m, &e), 0);
	struct ptx_inject_opts c = {.kernel = "calls", .only_kernel = 1, .extra = extra,
				    .entry_sym = ENT, .exit_sym = EXT, .mem_sym = MEM};
	assert_int_equal(ptx_inject(m, &c, &out, &len, &e), 0);
	assert_int_equal(count_str(out, ".entry "), 1);
	st = ptx_corpus_ptxas(out, len, "sm_90", &log);
	if (st > 0)
		fail_msg("ptxas:\n%s", log);
	free(log);
	free(out);
	free(extra);
	free(ctext);
	ptx_module_free(m);
}

static void test_small_kernel_ptxas(void **state)
{
	char *extra = ptx_corpus_probes("sm_75", NULL), *log;
	assert_non_null(extra);
	char *out = inject_ok(small, "k", extra);
	for (int i = 0; i < 2; i++) {
		const char *arch = i ? "sm_90" : "sm_75";
		int st = ptx_corpus_ptxas(out, strlen(out), arch, &log);
		if (st < 0)
			skip();
		if (st)
			fail_msg("ptxas -arch=%s:\n%.2000s\n%s", arch, log, strstr(out, ".entry k("));
		free(log);
	}
	free(out);
	free(extra);
}

static void expect_error(const char *text, const char *kernel, const char *msg)
{
	struct err e = {{0}};
	int rc;
	char *out = inject(text, kernel, NULL, &e, &rc);
	assert_null(out);
	assert_true(rc < 0);
	if (!strstr(e.msg, msg))
		fail_msg("expected '%s' in '%s'", msg, e.msg);
}

static void test_errors(void **state)
{
	expect_error(small, "nope", "kernel 'nope' is not defined in the module");
	expect_error(".entry k\n{\n\tld.global %r1, [%rd1];\n\tret;\n}\n", "k",
		     "line 3: memory instruction 'ld.global' without a type");
	expect_error(".entry k\n{\n\tld.global.u32 %r1, [%rd1+%rd2];\n\tret;\n}\n", "k",
		     "line 3: address operand of 'ld.global.u32' not understood");
	expect_error(".entry k\n{\n\tst.global.u32 %r1, 4;\n\tret;\n}\n", "k",
		     "line 3: 'st.global.u32' has no address operand");
	/* a .func is not a kernel */
	expect_error(".func f()\n{\n\tret;\n}\n", "f", "kernel 'f' is not defined");
}

/*
 * The GPU programs of clang-compiled objects (gpu/entry, gpu/exit, gpu/mem
 * sections: maps, global data, subprograms) as the probes of the corpus's
 * Triton-style and nvcc kernels, in warp and thread mode: ptxas accepts it.
 */
static void test_clang_programs_as_probes(void **state)
{
	static const char *const objs[] = {"build/bpf/examples/gpu_warp_count.bpf.o",
					   "build/bpf/tests/progs/global_data.bpf.o",
					   "build/bpf/tests/progs/subprogs.bpf.o"};
	static const char *const modules[] = {PTX_CORPUS_DIR "/triton_style.ptx",
					      PTX_CORPUS_DIR "/checked.compute_75.ptx"};
	char syms[3][160] = {"", "", ""};
	struct ptx_buf b = {0};
	int n = 0;

	ptx_emit_runtime(&b);
	for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
		struct object *obj;
		struct err e = {{0}};
		if (object_open(objs[i], &obj, &e))
			fail_msg("%s", e.msg);
		for (size_t k = 0; k < obj->prog_cnt; k++) {
			struct prog *p = obj->progs[k];
			if (!prog_type_is_gpu(p->type))
				continue;
			char sym[128], name[32];
			snprintf(name, sizeof(name), "gx_p%d", n++);
			struct ptx_emit_opts o = {.symbol = name};
			if (ptx_emit_prog(&b, p, &o, sym, &e))
				fail_msg("%s: %s", objs[i], e.msg);
			enum ptx_probe_kind kind = p->type == PROG_TYPE_GPU_MEM ? PTX_PROBE_MEM
						   : p->type == PROG_TYPE_GPU_EXIT ? PTX_PROBE_EXIT
										  : PTX_PROBE_ENTRY;
			ptx_emit_probe(&b, sym, kind, n % 2 ? PTX_MODE_WARP : PTX_MODE_THREAD);
			snprintf(syms[kind], sizeof(syms[kind]), "%s_probe", sym);
		}
		object_free(obj);
	}
	assert_true(n >= 4);
	for (int k = 0; k < 3; k++)
		assert_true(syms[k][0]);
	char *extra = ptx_buf_take(&b, NULL);
	assert_non_null(extra);
	for (size_t i = 0; i < sizeof(modules) / sizeof(modules[0]); i++) {
		char *text = test_read_file(modules[i], NULL), *log;
		struct ptx_module *m;
		struct err e = {{0}};
		assert_non_null(text);
		assert_int_equal(ptx_parse(text, strlen(text), &m, &e), 0);
		struct ptx_inject_opts o = {.kernel = ptx_module_kernel_name(m, 0),
					    .entry_sym = syms[PTX_PROBE_ENTRY],
					    .exit_sym = syms[PTX_PROBE_EXIT],
					    .mem_sym = syms[PTX_PROBE_MEM], .extra = extra,
					    .min_version_major = 7, .min_version_minor = 8};
		char *out;
		size_t len;
		if (ptx_inject(m, &o, &out, &len, &e))
			fail_msg("%s: %s", modules[i], e.msg);
		int st = ptx_corpus_ptxas(out, len, "sm_90a", &log);
		if (st < 0)
			skip();
		if (st)
			fail_msg("%s: ptxas:\n%.2000s", modules[i], log);
		free(log);
		free(out);
		free(text);
		ptx_module_free(m);
	}
	free(extra);
}

/* ptxas on out; fails the test with the log (skips without ptxas). */
static void ptxas_ok(const char *out, size_t len, const char *arch, const char *what)
{
	char *log;
	int st = ptx_corpus_ptxas(out, len, arch, &log);
	if (st < 0)
		skip();
	if (st)
		fail_msg("%s: ptxas %s:\n%.3000s", what, arch, log);
	free(log);
}

/*
 * Inline entry/exit probes (the agent's way): verified clang-compiled
 * programs (maps and helpers, a bpf-to-bpf callee, an empty one) pasted
 * into every kernel of the corpus modules, and a mem probe function with its
 * program's body inline (ptx_emit_mem_probe) called at each access.  Every ret/exit becomes a branch
 * to the one exit block; ptxas accepts the result for sm_90; only the
 * runtime functions the programs call are in the module; an empty program
 * leaves no frame (.local) behind.
 */
static void test_inline_probes(void **state)
{
	static const char *const objs[] = {"build/bpf/examples/gpu_warp_count.bpf.o",
					   "build/bpf/tests/progs/subprogs.bpf.o",
					   "build/bpf/examples/gpu_empty.bpf.o"};
	static const char *const modules[] = {"triton_style.ptx", "checked.compute_75.ptx",
					      "constructs.compute_90.ptx", "cupy_saxpy.ptx"};
	struct ptx_buf code = {0}, site[2] = {{0}, {0}}, rt = {0};
	struct object *ob[3];
	size_t n[2] = {0, 0};
	char mem_sym[160] = "";

	for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
		struct err e = {{0}};
		if (object_open(objs[i], &ob[i], &e) || object_create_maps(ob[i], &e))
			fail_msg("%s", e.msg);
		for (size_t k = 0; k < ob[i]->prog_cnt; k++) {
			struct prog *p = ob[i]->progs[k];
			if (!prog_type_is_gpu(p->type))
				continue;
			if (verifier_check(p, NULL, NULL, &e))
				fail_msg("%s: %s", objs[i], e.msg);
			if (p->type == PROG_TYPE_GPU_MEM) { /* subprogs': with a callee */
				char sym[128];
				struct ptx_emit_opts o = {0};
				if (ptx_emit_mem_probe(&code, &code, NULL, p, &o, sym, NULL, &e))
					fail_msg("%s: %s", objs[i], e.msg);
				snprintf(mem_sym, sizeof(mem_sym), "%s_probe", sym);
				continue;
			}
			int exit = p->type == PROG_TYPE_GPU_EXIT;
			struct ptx_emit_opts o = {0};
			if (ptx_emit_probe_inline(&code, &site[exit], p, &o,
						  exit ? PTX_PROBE_EXIT : PTX_PROBE_ENTRY, &e))
				fail_msg("%s: %s", objs[i], e.msg);
			n[exit]++;
			if (!strcmp(p->name, "empty_entry")) /* no stack: no frame */
				assert_null(strstr(strstr(site[0].text, "'empty_entry'"), ".local"));
		}
	}
	assert_true(n[0] >= 2 && n[1] >= 2 && mem_sym[0]);
	/* subprogs' callee is a .func of its own, declared before the kernel */
	assert_non_null(strstr(code.text, ".func (.param .b64 rv) gx_"));
	const char *texts[3] = {code.text, site[0].text, site[1].text};
	ptx_emit_runtime_used(&rt, texts, 3);
	assert_non_null(strstr(rt.text, "gx_rt_map_lookup("));
	assert_non_null(strstr(rt.text, "gx_rt_ringbuf_output("));
	assert_null(strstr(rt.text, "gx_rt_trace_printk("));
	assert_null(strstr(rt.text, "gx_rt_map_delete("));
	/* for linking: the map lookup declared; the SM id is read inline
	 * (ptx_intrin.c), no runtime function */
	struct ptx_buf decl = {0};
	assert_true(ptx_emit_runtime_decls(&decl, texts, 3) >= 1);
	assert_non_null(strstr(decl.text, ".extern .func  (.param .b64 func_retval0) "
					  "gx_rt_map_lookup("));
	assert_null(strstr(decl.text, "gx_rt_sm_id("));
	assert_true(strstr(site[0].text, "mov.u32 %h0, %smid;") ||
		    strstr(site[1].text, "mov.u32 %h0, %smid;"));
	assert_null(strstr(decl.text, "gx_rt_map_delete("));
	ptx_buf_free(&decl);
	ptx_buf_append(&rt, code.text, code.len);
	char *extra = ptx_buf_take(&rt, NULL), *entry = ptx_buf_take(&site[0], NULL),
	     *exit = ptx_buf_take(&site[1], NULL);
	ptx_buf_free(&code);
	for (size_t i = 0; i < sizeof(modules) / sizeof(modules[0]); i++) {
		char path[256];
		snprintf(path, sizeof(path), "%s/%s", PTX_CORPUS_DIR, modules[i]);
		char *text = test_read_file(path, NULL);
		struct ptx_module *m;
		struct err e = {{0}};
		assert_non_null(text);
		assert_int_equal(ptx_parse(text, strlen(text), &m, &e), 0);
		for (size_t k = 0; k < ptx_module_kernel_count(m); k++) {
			struct ptx_inject_opts o = {.kernel = ptx_module_kernel_name(m, k),
						    .entry_code = entry, .exit_code = exit,
						    .mem_sym = mem_sym,
						    .extra = extra, .only_kernel = 1,
						    .min_version_major = 7, .min_version_minor = 8};
			char *out;
			size_t len;
			if (ptx_inject(m, &o, &out, &len, &e))
				fail_msg("%s %s: %s", modules[i], o.kernel, e.msg);
			/* one exit block, reached by branches, and up to two
			 * copies of its code where warps fall into a ret; a
			 * ret after each */
			assert_int_equal(count_str(out, "_exit:\n"), 1);
			assert_true(count_str(out, "bra gxi") >= 1);
			const char *body = strstr(out, ".entry ");
			assert_non_null(body);
			int copies = count_str(body, "// the exit code, for the warps that fall into it");
			assert_true(copies <= 2);
			assert_int_equal(count_str(body, "\tret;"), 1 + copies);
			assert_int_equal(count_str(body, "activemask.b32 %gxp_m;"),
					 n[0] + n[1] * (1 + copies));
			ptxas_ok(out, len, "sm_90a", modules[i]);
			free(out);
		}
		ptx_module_free(m);
		free(text);
	}
	free(extra);
	free(entry);
	free(exit);
	for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++)
		object_free(ob[i]);
}

/* A kernel with static and dynamic shared memory, its own barriers (the
 * block's and a named one) and two exits. */
static const char blk_small[] =
	".version 7.8\n.target sm_75\n.address_size 64\n"
	".extern .shared .align 16 .b8 dyn[];\n"
	".visible .entry blk(.param .u64 blk_p0)\n{\n"
	"\t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n"
	"\t.shared .align 4 .b8 st[64];\n"
	"\tmov.u32 %r1, %tid.x;\n\tst.shared.u32 [st], %r1;\n\tst.shared.u32 [dyn], %r1;\n"
	"\tbar.sync 0;\n\tsetp.gt.u32 %p1, %r1, 63;\n\t@%p1 ret;\n"
	"\tbar.sync 1, 64;\n\tld.shared.u32 %r2, [dyn+4];\n"
	"\tld.param.u64 %rd1, [blk_p0];\n\tcvta.to.global.u64 %rd1, %rd1;\n"
	"\tst.global.u32 [%rd1], %r2;\n\tret;\n}\n";

/*
 * Which kernels get the barrier exit: a vector add does (it has neither
 * barrier nor warp sync); the same kernel calling a function that exits,
 * calling out of the module, with a barrier or a shuffle, or for a target
 * before sm_70 keeps the counter; `ret` in a function is fine.  ptxas takes
 * each for its target.
 */
static void test_block_exit_kinds(void **state)
{
	static const struct {
		const char *target, *func, *call, *insn;
		int by_barrier;
	} cases[] = {
		{"sm_75", "", "", "", 1},
		{"sm_90", ".func f()\n{\n\tret;\n}\n", "\tcall f, ();\n", "", 1},
		{"sm_75", ".func f()\n{\n\texit;\n}\n", "\tcall f, ();\n", "", 0},
		{"sm_75", ".extern .func f()\n;\n", "\tcall f, ();\n", "", 0},
		{"sm_75", "", "", "\tbar.sync 0;\n", 0},
		{"sm_75", "", "", "\tshfl.sync.bfly.b32 %r3, %r1, 1, 31, -1;\n", 0},
		{"sm_75", "", "", "\tbarrier.sync 3, 64;\n", 0},
		{"sm_60", "", "", "", 0},
	};
	const char *blk_exit = "\t// block_exit probe\n\tmov.u64 %gxb_u, %gxb_ctx;\n";

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char text[2048];
		snprintf(text, sizeof(text),
			 ".version 7.8\n.target %s\n.address_size 64\n%s"
			 ".visible .entry k(.param .u64 k_p0)\n{\n"
			 "\t.reg .pred %%p<2>;\n\t.reg .b32 %%r<4>;\n\t.reg .b64 %%rd<4>;\n"
			 "\tmov.u32 %%r1, %%tid.x;\n\tsetp.gt.u32 %%p1, %%r1, 63;\n\t@%%p1 ret;\n%s%s"
			 "\tld.param.u64 %%rd1, [k_p0];\n\tcvta.to.global.u64 %%rd1, %%rd1;\n"
			 "\tst.global.u32 [%%rd1], %%r1;\n\tret;\n}\n",
			 cases[c].target, cases[c].func, cases[c].call, cases[c].insn);
		struct ptx_module *m;
		struct err e = {{0}};
		char *out;
		size_t len;
		if (ptx_parse(text, strlen(text), &m, &e))
			fail_msg("case %zu: %s", c, e.msg);
		struct ptx_inject_opts o = {.kernel = "k", .block_exit_code = blk_exit,
					    .min_version_major = 7, .min_version_minor = 8};
		if (ptx_inject(m, &o, &out, &len, &e))
			fail_msg("case %zu: %s", c, e.msg);
		int by_barrier = count_str(out, "barrier.arrive 0, %gxb_o;") == 1;
		if (by_barrier != cases[c].by_barrier)
			fail_msg("case %zu: by_barrier %d, want %d:\n%s", c, by_barrier,
				 cases[c].by_barrier, out);
		assert_int_equal(count_str(out, "atom.shared.add.u32"), !by_barrier);
		assert_int_equal(count_str(out, "block_exit probe"), 1);
		/* (not the call out of the module: ptxas would want it linked) */
		if (strncmp(cases[c].func, ".extern", 7) && strcmp(cases[c].target, "sm_60"))
			ptxas_ok(out, len, cases[c].target, "block exit kinds");
		free(out);
		o.block_exit_counted = 1; /* forced */
		if (ptx_inject(m, &o, &out, &len, &e))
			fail_msg("case %zu: %s", c, e.msg);
		assert_int_equal(count_str(out, "barrier.arrive"), 0);
		assert_int_equal(count_str(out, "atom.shared.add.u32"), 1);
		free(out);
		ptx_module_free(m);
	}
}

/* The block probes and warp probes of objs, as the agent builds them:
 * site[ptx_probe_kind] inline code, code the callees and runtime. */
static void block_sites(const char *const *objs, size_t nobj, struct ptx_buf *code,
			struct ptx_buf *site, size_t *n)
{
	for (size_t i = 0; i < nobj; i++) {
		struct object *ob;
		struct err e = {{0}};
		if (object_open(objs[i], &ob, &e) || object_create_maps(ob, &e))
			fail_msg("%s", e.msg);
		for (size_t k = 0; k < ob->prog_cnt; k++) {
			struct prog *p = ob->progs[k];
			enum ptx_probe_kind kind = ptx_probe_kind_of(p->type);
			struct ptx_emit_opts o = {.launch_id = PTX_LAUNCH_ID_REG};
			if (!prog_type_is_gpu(p->type) || kind == PTX_PROBE_MEM)
				continue;
			if (verifier_check(p, NULL, NULL, &e) ||
			    ptx_emit_probe_inline(code, &site[kind], p, &o, kind, &e))
				fail_msg("%s: %s", objs[i], e.msg);
			n[kind]++;
		}
		object_free(ob);
	}
}

/* A kernel with no barrier (its block's last exit found by the barrier
 * exit, or by the counter when forced). */
static const char blk_plain[] =
	".version 7.8\n.target sm_90\n.address_size 64\n"
	".visible .entry k(.param .u64 k_p0)\n{\n"
	"\t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n"
	"\tmov.u32 %r1, %tid.x;\n\tsetp.gt.u32 %p1, %r1, 63;\n\t@%p1 ret;\n"
	"\tld.param.u64 %rd1, [k_p0];\n\tcvta.to.global.u64 %rd1, %rd1;\n"
	"\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n";

/* ptx through ptx_inject with o, not assembled (o may name functions the
 * module does not have). */
static char *inject_only(const char *ptx, const struct ptx_inject_opts *o)
{
	struct ptx_module *m;
	struct err e = {{0}};
	char *out;
	size_t len;
	if (ptx_parse(ptx, strlen(ptx), &m, &e) || ptx_inject(m, o, &out, &len, &e))
		fail_msg("%s", e.msg);
	ptx_module_free(m);
	return out;
}

/* Kernel k of ptx injected with o, through ptxas for sm_90. */
static char *inject_kernel(const char *ptx, const struct ptx_inject_opts *o)
{
	char *out = inject_only(ptx, o);
	ptxas_ok(out, strlen(out), "sm_90", "block ctx");
	return out;
}

/* blk_plain with entry and exit (either may be NULL) as its block programs,
 * through ptxas for sm_90. */
static char *inject_block(const char *entry, const char *exit, const char *extra, int counted)
{
	struct ptx_inject_opts o = {.kernel = "k", .block_entry_code = entry,
				    .block_exit_code = exit, .block_exit_counted = counted,
				    .extra = extra, .min_version_major = 7, .min_version_minor = 8};
	return inject_kernel(blk_plain, &o);
}

/* The block program p as the agent builds it: its inline block (site),
 * its callees and the runtime functions it names (*extra). */
static char *block_site(const struct prog *p, enum ptx_probe_kind kind, char **extra)
{
	struct ptx_buf code = {0}, site = {0}, rt = {0};
	struct ptx_map_ref refs[8] = {{0}};
	struct ptx_emit_opts o = {.maps = refs};
	struct err e = {{0}};
	assert_true(p->map_cnt <= 8);
	ptx_refs_of(p, refs, 8);
	if (ptx_emit_probe_inline(&code, &site, p, &o, kind, &e))
		fail_msg("%s: %s", p->name, e.msg);
	const char *texts[2] = {code.text, site.text};
	ptx_emit_runtime_used(&rt, texts, 2);
	ptx_buf_append(&rt, code.text, code.len);
	*extra = ptx_buf_take(&rt, NULL);
	ptx_buf_free(&code);
	return ptx_buf_take(&site, NULL);
}

/* Which of the record's word registers text names: bit n for %gxb_cn. */
static unsigned words_named(const char *text)
{
	unsigned w = 0;
	for (unsigned n = 0; n < PTX_BLOCK_CTX_WORDS; n++) {
		char reg[16];
		snprintf(reg, sizeof(reg), "%s%u", PTX_BLOCK_CTX_WORD, n);
		w |= strstr(text, reg) ? 1u << n : 0;
	}
	return w;
}

/* Program name of object file obj, its maps created, verified: the caller
 * frees *ob. */
static struct prog *verified_prog(const char *obj, const char *name, struct object **ob)
{
	struct err e = {{0}};
	if (object_open(obj, ob, &e) || object_create_maps(*ob, &e))
		fail_msg("%s", e.msg);
	struct prog *p = object_find_prog(*ob, name);
	assert_non_null(p);
	if (verifier_check(p, NULL, NULL, &e))
		fail_msg("%s: %s", name, e.msg);
	return p;
}

/*
 * The block record in registers: a block program that only reads fields of
 * its ctx names just the words it reads (threadhist: sm | threads;
 * kernelretsnoop's block_entry: block; kernelretsnoop's old record,
 * blockv_krs_store: the times, block, sm | threads, warps;
 * gpu_block_fields: all six), with r1 = 0 and no record address; in the kernel, no %globaltimer unless a time is read (one at
 * entry for a start time, kept in thread (0,0,0)'s register where its
 * barrier exit reads it, and one at the exit for an end), and no record
 * in shared memory
 * unless the counted exit needs one (then the start goes through it).  A
 * ctx pointer spilled to the stack and loaded back whole is still followed;
 * one compared, read narrow from its slot or left in a frame that escapes
 * (an atomic on it) makes the program read the record in memory, which the
 * kernel then writes; GPUEXT_PTX_BLOCK_RECORD=1 (at translation) does
 * that for every program.  ptxas accepts every kernel.
 */
static void test_block_ctx_words(void **state)
{
	static const struct {
		const char *obj, *prog;
		enum ptx_probe_kind kind;
		unsigned words;
	} progs[] = {
		{"build/bpf/tools/threadhist.bpf.o", "th_block", PTX_PROBE_BLOCK_ENTRY, 0x08},
		{"build/bpf/tools/kernelretsnoop.bpf.o", "krs_block_start", PTX_PROBE_BLOCK_ENTRY, 0x04},
		{"build/bpf/bench/progs/blockv_krs_store.bpf.o", "krs_store", PTX_PROBE_BLOCK_EXIT, 0x1f},
		{"build/bpf/examples/gpu_block_fields.bpf.o", "bf_entry", PTX_PROBE_BLOCK_ENTRY, 0x3f},
		{"build/bpf/examples/gpu_block_fields.bpf.o", "bf_exit", PTX_PROBE_BLOCK_EXIT, 0x3f},
	};
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct object *ob;
		struct prog *p = verified_prog(progs[i].obj, progs[i].prog, &ob);
		char *extra, *site = block_site(p, progs[i].kind, &extra);
		if (words_named(site) != progs[i].words || strstr(site, PTX_BLOCK_CTX_REG))
			fail_msg("%s: words %#x, want %#x:\n%s", progs[i].prog, words_named(site),
				 progs[i].words, site);
		int entry = progs[i].kind == PTX_PROBE_BLOCK_ENTRY;
		for (int counted = 0; counted <= 1; counted++) {
			char *out = inject_block(entry ? site : NULL, entry ? NULL : site, extra,
						 counted);
			int record = counted && !entry;
			int start = progs[i].words & 1, end = !entry && (progs[i].words & 2);
			/* the block code's own (the program may read it too) */
			assert_int_equal(count_str(out, "%globaltimer") - count_str(site, "%globaltimer") -
						 count_str(extra, "%globaltimer"),
					 start + end);
			assert_int_equal(count_str(out, "_blk[48];"), record);
			assert_int_equal(count_str(out, "_start;"), !entry && !counted && start ? 2 : 0);
			assert_int_equal(count_str(out, "ld.shared.u64 %gxb_c0"), record && start);
			free(out);
		}
		free(site);
		free(extra);
		setenv("GPUEXT_PTX_BLOCK_RECORD", "1", 1);
		site = block_site(p, progs[i].kind, &extra);
		unsetenv("GPUEXT_PTX_BLOCK_RECORD");
		assert_int_equal(words_named(site), 0);
		assert_non_null(strstr(site, PTX_BLOCK_CTX_REG));
		char *out = inject_block(entry ? site : NULL, entry ? NULL : site, extra, 0);
		/* the record written (all of it at entry, or the start there and
		 * the rest at the exit) for the program's loads */
		assert_int_equal(count_str(out, "_blk[48];"), 1);
		assert_int_equal(count_str(out, "cvta.shared.u64 %gxb_ctx"), 1);
		assert_int_equal(count_str(out, "st.shared.u64"), PTX_BLOCK_CTX_WORDS);
		free(out);
		free(site);
		free(extra);
		object_free(ob);
	}

	/* hand-made block_exit programs: r0 = ctx->sm (word 3), with r1 spilled
	 * and loaded back, compared, read narrow from its slot, spilled on one
	 * path and a number stored there on the other, left in a frame that
	 * escapes */
#define X(c, d, s_, o_, i_) {ISA_OPC_##c, d, s_, o_, i_}
	static const struct {
		const char *name;
		struct isa_insn insns[7];
		size_t n;
		int mem;
	} cases[] = {
		{"spill", {X(STX_DW, ISA_REG_FP, 1, -8, 0), X(ALU64_MOV_K, 1, 0, 0, 0),
			   X(LDX_DW, 2, ISA_REG_FP, -8, 0), X(LDX_W, 0, 2, 24, 0),
			   X(JMP_EXIT, 0, 0, 0, 0)}, 5, 0},
		{"compared", {X(ALU64_MOV_K, 0, 0, 0, 0), X(JMP_JEQ_K, 1, 0, 1, 0),
			      X(LDX_W, 0, 1, 24, 0), X(JMP_EXIT, 0, 0, 0, 0)}, 4, 1},
		{"narrow", {X(STX_DW, ISA_REG_FP, 1, -8, 0), X(LDX_W, 2, ISA_REG_FP, -8, 0),
			    X(LDX_W, 0, 1, 24, 0), X(JMP_EXIT, 0, 0, 0, 0)}, 4, 1},
		{"joined", {X(JMP_JEQ_K, 2, 0, 2, 0), X(STX_DW, ISA_REG_FP, 1, -8, 0),
			    X(JMP_JA, 0, 0, 1, 0), X(ST_DW, ISA_REG_FP, 0, -8, 5),
			    X(LDX_DW, 3, ISA_REG_FP, -8, 0), X(LDX_W, 0, 3, 24, 0),
			    X(JMP_EXIT, 0, 0, 0, 0)}, 7, 1},
		{"frame escapes", {X(STX_DW, ISA_REG_FP, 1, -8, 0), X(ALU64_MOV_K, 2, 0, 0, 1),
				   X(ATOMIC_DW, ISA_REG_FP, 2, -16, ISA_ATOMIC_ADD),
				   X(LDX_DW, 3, ISA_REG_FP, -8, 0), X(LDX_W, 0, 3, 24, 0),
				   X(JMP_EXIT, 0, 0, 0, 0)}, 6, 1},
	};
#undef X
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct prog p = {.name = (char *)cases[c].name, .type = PROG_TYPE_GPU_BLOCK_EXIT,
				 .insns = (struct isa_insn *)cases[c].insns, .insn_cnt = cases[c].n};
		char *extra, *site = block_site(&p, PTX_PROBE_BLOCK_EXIT, &extra);
		int mem = strstr(site, PTX_BLOCK_CTX_REG) != NULL;
		if (mem != cases[c].mem || words_named(site) != (mem ? 0u : 0x8u))
			fail_msg("%s: record in memory %d, words %#x:\n%s", cases[c].name, mem,
				 words_named(site), site);
		char *out = inject_block(NULL, site, extra, 0);
		assert_int_equal(count_str(out, "_blk[48];"), mem);
		free(out);
		free(site);
		free(extra);
	}
}

/* vecadd's shape: a bounds test, then two global loads (the address of the
 * second computed between them), the add that uses them, a store. */
static const char blk_loads[] =
	".version 7.8\n.target sm_90\n.address_size 64\n"
	".visible .entry k(.param .u64 k_p0, .param .u32 k_n)\n{\n"
	"\t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n\t.reg .f32 %f<4>;\n\t.reg .b64 %rd<6>;\n"
	"\tmov.u32 %r1, %tid.x;\n\tld.param.u32 %r2, [k_n];\n"
	"\tsetp.ge.u32 %p1, %r1, %r2;\n\t@%p1 bra DONE;\n"
	"\tld.param.u64 %rd1, [k_p0];\n\tcvta.to.global.u64 %rd1, %rd1;\n"
	"\tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n"
	"\tld.global.f32 %f1, [%rd3];\n\tadd.s64 %rd4, %rd3, 1024;\n"
	"\tld.global.nc.f32 %f2, [%rd4];\n"
	"\tadd.f32 %f3, %f1, %f2;\n\tst.global.f32 [%rd3], %f3;\nDONE:\n\tret;\n}\n";

/* blk_loads' loads in a loop (a grid-stride loop's shape). */
static const char blk_loop[] =
	".version 7.8\n.target sm_90\n.address_size 64\n"
	".visible .entry k(.param .u64 k_p0, .param .u32 k_n)\n{\n"
	"\t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n\t.reg .f32 %f<4>;\n\t.reg .b64 %rd<6>;\n"
	"\tmov.u32 %r1, %tid.x;\n\tld.param.u32 %r2, [k_n];\n"
	"\tld.param.u64 %rd1, [k_p0];\n\tcvta.to.global.u64 %rd1, %rd1;\n"
	"LOOP:\n\tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n"
	"\tld.global.f32 %f1, [%rd3];\n\tadd.f32 %f3, %f1, %f1;\n\tst.global.f32 [%rd3], %f3;\n"
	"\tadd.u32 %r1, %r1, 1024;\n\tsetp.lt.u32 %p1, %r1, %r2;\n\t@%p1 bra LOOP;\n"
	"\tret;\n}\n";

/*
 * The block_entry program sunk past the kernel's first global loads
 * (threadhist's, and gpu_block_fields' which reads every word, the start
 * time too): in the kernel, once right after the run of loads (both loads
 * and the address between them before it, the add that uses them after it)
 * and once for a thread (0,0,0) that never loaded: out of line where the
 * branch that skips the loads lands (the branch redirected there, the copy
 * going on to its target), or in the exit block where a label comes before
 * the loads (a jump may land there) or with GPUEXT_PTX_BLOCK_SKIP_IN_EXIT;
 * each copy guarded by a predicate every thread sets at entry; a thread asks there
 * whether it is thread (0,0,0) (no %tid read before the loads), and the
 * start time is read at entry where the program reads it.  Where something
 * at entry waits for the program (a warp entry probe), where the kernel
 * has no global load,
 * where its first loads are in a loop, where a function of the module
 * leaves the kernel (`exit`), and with
 * GPUEXT_PTX_BLOCK_ENTRY_FIRST set, it runs once at entry.  ptxas accepts
 * each.
 */
static void test_block_entry_sunk(void **state)
{
	static const struct {
		const char *obj, *prog, *label;
	} progs[] = {
		{"build/bpf/tools/threadhist.bpf.o", "th_block", "eBPF program 'th_block', inline"},
		{"build/bpf/examples/gpu_block_fields.bpf.o", "bf_entry", "eBPF program 'bf_entry', inline"},
	};
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct object *ob;
		struct prog *p = verified_prog(progs[i].obj, progs[i].prog, &ob);
		char *extra, *site = block_site(p, PTX_PROBE_BLOCK_ENTRY, &extra);
		struct ptx_inject_opts o = {.kernel = "k", .block_entry_code = site, .extra = extra,
					    .min_version_major = 7, .min_version_minor = 8};
		char *out = inject_kernel(blk_loads, &o);
		const char *load2 = strstr(out, "ld.global.nc.f32 %f2"), *add = strstr(out, "add.f32");
		const char *run = strstr(out, progs[i].label), *exit = strstr(out, "_exit:");
		assert_int_equal(count_str(out, progs[i].label), 2);
		assert_true(load2 && add && run && exit);
		/* the second copy out of line, after the exit block's ret */
		const char *ret = strstr(exit, "ret;"), *stub = strstr(exit, "gxi_skip");
		assert_true(load2 < run && run < add && ret && stub && ret < stub &&
			    strstr(run + 1, progs[i].label) > stub);
		assert_non_null(strstr(out, "@%p1 bra gxi_skip"));
		assert_non_null(strstr(stub, "\tbra DONE;"));
		assert_int_equal(count_str(out, "_bp;"), 1);               /* declared */
		assert_int_equal(count_str(out, "bra GXB_DONE;\n\tmov.pred"), 2); /* guarded */
		/* the start time at entry only, kept for the program (pasted twice) */
		int start = strstr(site, PTX_BLOCK_CTX_WORD "0") != NULL;
		assert_int_equal(count_str(out, "%globaltimer") - 2 * count_str(site, "%globaltimer") -
					 count_str(extra, "%globaltimer"),
				 start);
		assert_int_equal(count_str(out, "_start;"), start ? 3 : 0);
		/* nothing before the kernel's loads reads which thread it is,
		 * unless thread (0,0,0) reads its start time there */
		char *first_load = strstr(out, "ld.global.f32 %f1");
		*first_load = 0;
		assert_true((strstr(out, "%tid.y") != NULL) == start);
		free(out);

		/* the second copy in the exit block: a label before the loads,
		 * and when asked */
		char labelled[sizeof(blk_loads) + 16];
		const char *cut = strstr(blk_loads, "\tsetp.ge.u32");
		snprintf(labelled, sizeof(labelled), "%.*sTOP:\n%s", (int)(cut - blk_loads), blk_loads,
			 cut);
		for (int asked = 0; asked < 2; asked++) {
			if (asked)
				setenv("GPUEXT_PTX_BLOCK_SKIP_IN_EXIT", "1", 1);
			out = inject_kernel(asked ? blk_loads : labelled, &o);
			unsetenv("GPUEXT_PTX_BLOCK_SKIP_IN_EXIT");
			/* and in the exit code's copy before DONE, where the
			 * warps that finish the body fall into the ret */
			exit = strstr(out, "_exit:");
			const char *fall = strstr(out, "// the exit code, for the warps that fall");
			const char *copy = strstr(strstr(out, progs[i].label) + 1, progs[i].label);
			assert_int_equal(count_str(out, progs[i].label), 3);
			assert_null(strstr(out, "gxi_skip"));
			assert_true(exit && fall && fall < copy && copy < exit &&
				    strstr(copy + 1, progs[i].label) > exit);
			free(out);
		}

		/* at entry: with a warp entry probe, in a kernel with no load,
		 * and when asked */
		o.entry_code = "\t// warp entry probe\n";
		out = inject_kernel(blk_loads, &o);
		assert_int_equal(count_str(out, progs[i].label), 1);
		assert_true(strstr(out, progs[i].label) < strstr(out, "ld.global.f32"));
		free(out);
		o.entry_code = NULL;
		out = inject_kernel(blk_plain, &o);
		assert_int_equal(count_str(out, progs[i].label), 1);
		assert_null(strstr(out, "_bp;"));
		free(out);
		out = inject_kernel(blk_loop, &o);
		assert_int_equal(count_str(out, progs[i].label), 1);
		assert_true(strstr(out, progs[i].label) < strstr(out, "LOOP:"));
		free(out);
		/* a function that leaves the kernel: thread (0,0,0) might never
		 * get to the exit block */
		char exits[sizeof(blk_loads) + 64];
		snprintf(exits, sizeof(exits), ".version 7.8\n.target sm_90\n.address_size 64\n"
			 ".func lv()\n{\n\texit;\n}\n%s", strstr(blk_loads, ".visible"));
		out = inject_kernel(exits, &o);
		assert_int_equal(count_str(out, progs[i].label), 1);
		free(out);
		setenv("GPUEXT_PTX_BLOCK_ENTRY_FIRST", "1", 1);
		out = inject_kernel(blk_loads, &o);
		unsetenv("GPUEXT_PTX_BLOCK_ENTRY_FIRST");
		assert_int_equal(count_str(out, progs[i].label), 1);
		assert_true(strstr(out, progs[i].label) < strstr(out, "ld.global.f32"));
		free(out);
		free(site);
		free(extra);
		object_free(ob);
	}
}

/*
 * The block index register (bpf_gpu_block_index in inline probes): where
 * only exit code names it, every thread computes it once, past the
 * kernel's first loads (and in the exit block for a thread that never
 * loaded), beside a sunk block_entry program's run; where entry code names
 * it, where the first loads are in a loop, and with
 * GPUEXT_PTX_BLOCK_INDEX_FIRST, at entry.  ptxas accepts each.
 */
static void test_block_index_reg(void **state)
{
	static const char exit_code[] = "\t{ // reads the block index\n\t.reg .b64 %q;\n"
					"\tmov.b64 %q, " PTX_BLOCK_INDEX_REG ";\n\t}\n";
	static const char compute[] = "mul.wide.u32 " PTX_BLOCK_INDEX_REG;
	struct ptx_inject_opts o = {.kernel = "k", .exit_code = exit_code,
				    .min_version_major = 7, .min_version_minor = 8};
	char *out = inject_kernel(blk_loads, &o);
	assert_int_equal(count_str(out, ".reg .b64 " PTX_BLOCK_INDEX_REG ";"), 1);
	assert_int_equal(count_str(out, compute), 2);
	const char *first = strstr(out, compute), *load2 = strstr(out, "ld.global.nc.f32 %f2");
	assert_true(load2 && first > load2 && strstr(first + 1, compute) > strstr(out, "_exit:"));
	assert_int_equal(count_str(out, "bra GXB_DONE;\n\tmov.pred"), 2);
	assert_null(strstr(out, "%tid.y")); /* no block_entry program: no thread (0,0,0) test */
	free(out);

	/* beside threadhist's sunk block_entry program, in the same code */
	struct object *ob;
	struct prog *p = verified_prog("build/bpf/tools/threadhist.bpf.o", "th_block", &ob);
	char *extra, *site = block_site(p, PTX_PROBE_BLOCK_ENTRY, &extra);
	o.block_entry_code = site;
	o.extra = extra;
	out = inject_kernel(blk_loads, &o);
	assert_int_equal(count_str(out, "once per thread, the block index, the block_entry "
					"program in thread (0,0,0)"), 2);
	assert_int_equal(count_str(out, compute), 2);
	free(out);
	o.block_entry_code = o.extra = NULL;
	free(site);
	free(extra);
	object_free(ob);

	/* at entry, before the loads */
	const char *entries[] = {"entry code", "loop", "asked"};
	for (size_t i = 0; i < 3; i++) {
		o.entry_code = i == 0 ? exit_code : NULL;
		if (i == 2)
			setenv("GPUEXT_PTX_BLOCK_INDEX_FIRST", "1", 1);
		out = inject_kernel(i == 1 ? blk_loop : blk_loads, &o);
		unsetenv("GPUEXT_PTX_BLOCK_INDEX_FIRST");
		if (count_str(out, compute) != 1 ||
		    strstr(out, compute) > strstr(out, "ld.global.f32 %f1") || strstr(out, "_bp;"))
			fail_msg("%s: the index not once at entry:\n%s", entries[i], out);
		free(out);
	}
}

/*
 * The flat twin (ptx_inject_opts.flat_twin) of a kernel with block code
 * (threadhist's block_entry program, an exit probe reading the block
 * index): k, then k__gx_flat with the same parameters, whose block code
 * reads %ctaid.x and %tid.x alone where k's reads %ctaid.y/z and
 * %tid.y/z; the module's .shared declarations the same as without it.
 * None where nothing reads the block's place, where the kernel has mem
 * probes or block_exit code that calls a function or more than
 * PTX_FLAT_MAX_STMTS statements,
 * or where the module has a name with the suffix.  The warps that
 * fall into the kernel's ret get the exit code before its label, in both
 * forms; where a branch comes before the label, none.  ptxas accepts each.
 */
static void test_flat_twin(void **state)
{
	static const char exit_code[] = "\t{ // reads the block index\n\t.reg .b64 %q;\n"
					"\tmov.b64 %q, " PTX_BLOCK_INDEX_REG ";\n\t}\n";
	static const char *const general_only[] = {"%ctaid.y", "%ctaid.z", "%tid.y", "%tid.z"};
	struct object *ob;
	struct prog *p = verified_prog("build/bpf/tools/threadhist.bpf.o", "th_block", &ob);
	char *extra, *site = block_site(p, PTX_PROBE_BLOCK_ENTRY, &extra);
	int made = -1;
	struct ptx_inject_opts o = {.kernel = "k", .block_entry_code = site, .extra = extra,
				    .exit_code = exit_code, .flat_made = &made,
				    .min_version_major = 7, .min_version_minor = 8};
	char *one = inject_kernel(blk_loads, &o);
	assert_int_equal(made, 0);
	o.flat_twin = 1;
	char *out = inject_kernel(blk_loads, &o);
	assert_int_equal(made, 1);
	assert_int_equal(count_str(out, ".entry k("), 1);
	char *twin = strstr(out, ".entry k" PTX_FLAT_SUFFIX "(.param .u64 k_p0, .param .u32 k_n)");
	assert_non_null(twin);
	assert_int_equal(count_str(out, ".shared"), count_str(one, ".shared"));
	for (size_t i = 0; i < sizeof(general_only) / sizeof(general_only[0]); i++)
		assert_null(strstr(twin, general_only[i]));
	assert_non_null(strstr(twin, "%ctaid.x"));
	assert_non_null(strstr(twin, "mov.u32 %gxb_a, %tid.x;\n\tsetp.ne.u32 %gxb_p"));
	/* the exit code before DONE and in the exit block, in each form */
	assert_int_equal(count_str(out, "// reads the block index"), 4);
	*twin = 0;
	assert_non_null(strstr(out, "%ctaid.y"));
	assert_non_null(strstr(out, "%tid.y"));
	assert_int_equal(count_str(out, "// reads the block index"), 2);
	free(out);
	free(one);

	/* a branch before the label: the exit block only */
	char branched[sizeof(blk_loads) + 16];
	const char *cut = strstr(blk_loads, "DONE:\n");
	snprintf(branched, sizeof(branched), "%.*s\tbra DONE;\n%s", (int)(cut - blk_loads),
		 blk_loads, cut);
	out = inject_kernel(branched, &o);
	assert_int_equal(count_str(out, "// reads the block index"), 2);
	free(out);

	/* a kernel of more than PTX_FLAT_MAX_STMTS statements */
	size_t big_len = sizeof(blk_loads) + 32 * PTX_FLAT_MAX_STMTS;
	char *big = malloc(big_len);
	const char *add = strstr(blk_loads, "\tadd.f32");
	assert_non_null(big);
	int at = snprintf(big, big_len, "%.*s", (int)(add - blk_loads), blk_loads);
	for (int i = 0; i < PTX_FLAT_MAX_STMTS; i++)
		at += snprintf(big + at, big_len - (size_t)at, "\tadd.f32 %%f1, %%f1, %%f2;\n");
	snprintf(big + at, big_len - (size_t)at, "%s", add);
	out = inject_kernel(big, &o);
	assert_int_equal(made, 0);
	free(out);
	free(big);
	/* block_exit code: a twin where it calls no function (each form its
	 * own barrier), none where it does (not assembled: no such function) */
	o.block_exit_code = "\t// block exit program\n";
	out = inject_kernel(blk_loads, &o);
	assert_int_equal(made, 1);
	assert_int_equal(count_str(out, "barrier.sync"), 2);
	free(out);
	o.block_exit_code = "\tcall gx_rt_output;\n";
	free(inject_only(blk_loads, &o));
	assert_int_equal(made, 0);
	o.block_exit_code = NULL;

	/* a name with the suffix in the module; mem probes; no block code */
	char named[sizeof(blk_loads) + 64];
	snprintf(named, sizeof(named), "%.*s.visible .entry j" PTX_FLAT_SUFFIX "()\n{\n\tret;\n}\n%s",
		 (int)(strstr(blk_loads, ".visible") - blk_loads), blk_loads,
		 strstr(blk_loads, ".visible"));
	out = inject_kernel(named, &o);
	assert_int_equal(made, 0);
	free(out);
	o.mem_sym = "mem_probe"; /* not assembled: no such function */
	out = inject_only(blk_loads, &o);
	assert_int_equal(made, 0);
	assert_null(strstr(out, PTX_FLAT_SUFFIX));
	free(out);
	o.mem_sym = NULL;
	o.block_entry_code = NULL;
	o.exit_code = "\t// warp exit probe\n";
	out = inject_kernel(blk_loads, &o);
	assert_int_equal(made, 0);
	free(out);
	free(site);
	free(extra);
	object_free(ob);
}

/*
 * Block probes (gpu/block_entry, gpu/block_exit: the shipped tools, a
 * block-entry threadhist of bench/progs and an empty pair) with warp
 * entry/exit probes, in every kernel of the corpus, with the exit found by
 * the barrier where the injector may and by the counter (forced): ptxas
 * accepts each; the block record is one .shared variable of 48 bytes
 * (ptxas -v: the kernel's shared memory grows by that, its dynamic shared
 * memory still works); the block_entry program comes before the warp
 * probes and the kernel's first instruction, every exit goes through the
 * exit block.  The counted exit: one entry barrier and one shared atomic;
 * the barrier's: neither, one barrier.arrive and one barrier.sync, and
 * only in kernels with no barrier or warp-synchronous instruction.
 */
static void test_block_probes(void **state)
{
	static const char *const objs[] = {"build/bpf/examples/gpu_block_empty.bpf.o",
					   "build/bpf/bench/progs/blockv_th_v2.bpf.o",
					   "build/bpf/tools/kernelretsnoop.bpf.o",
					   "build/bpf/tools/blockretsnoop.bpf.o",
					   "build/bpf/examples/gpu_empty.bpf.o"};
	struct ptx_buf code = {0}, site[5] = {{0}}, rt = {0};
	size_t n[5] = {0};
	char **paths;
	size_t npaths = ptx_corpus_list(&paths), kernels = 0, exit_by_barrier = 0, exit_counted = 0;

	block_sites(objs, sizeof(objs) / sizeof(objs[0]), &code, site, n);
	/* kernelretsnoop: a block_entry program and a warp exit one */
	assert_true(n[PTX_PROBE_BLOCK_ENTRY] == 3 && n[PTX_PROBE_BLOCK_EXIT] == 2);
	assert_true(n[PTX_PROBE_ENTRY] == 1 && n[PTX_PROBE_EXIT] == 2);
	/* no election in a block probe: the block code runs it in one thread */
	assert_null(strstr(site[PTX_PROBE_BLOCK_ENTRY].text, "%lanemask_lt"));
	const char *texts[5] = {code.text, site[0].text, site[1].text, site[3].text, site[4].text};
	ptx_emit_runtime_used(&rt, texts, 5);
	ptx_buf_append(&rt, code.text, code.len);
	char *extra = ptx_buf_take(&rt, NULL);
	struct ptx_launch_param lp; /* blockretsnoop reads the launch id */
	struct ptx_inject_opts o = {.entry_code = site[PTX_PROBE_ENTRY].text,
				    .exit_code = site[PTX_PROBE_EXIT].text,
				    .block_entry_code = site[PTX_PROBE_BLOCK_ENTRY].text,
				    .block_exit_code = site[PTX_PROBE_BLOCK_EXIT].text,
				    .extra = extra, .only_kernel = 1,
				    .min_version_major = 7, .min_version_minor = 8,
				    .launch_param = &lp};
	for (size_t i = 0; i <= npaths; i++) {
		char *text = i < npaths ? test_read_file(paths[i], NULL) : strdup(blk_small);
		const char *what = i < npaths ? paths[i] : "blk_small";
		struct ptx_module *m;
		struct err e = {{0}};
		assert_non_null(text);
		if (ptx_parse(text, strlen(text), &m, &e))
			fail_msg("%s: %s", what, e.msg);
		for (size_t k = 0; k < 2 * ptx_module_kernel_count(m); k++) {
			char *out;
			size_t len;
			o.kernel = ptx_module_kernel_name(m, k / 2);
			o.block_exit_counted = k % 2;
			if (ptx_inject(m, &o, &out, &len, &e))
				fail_msg("%s %s: %s", what, o.kernel, e.msg);
			/* the kernel: from its header to the brace that closes it */
			char *body = strstr(out, ".entry "), *end = body ? strstr(body, "\n}\n") : NULL;
			assert_true(body && end);
			end[1] = 0;
			int by_barrier = count_str(body, "\tbarrier.arrive 0, %gxb_o;\n") == 1;
			/* the programs read their records' words from registers: the
			 * record in shared memory is the counted exit's counter */
			assert_int_equal(count_str(out, ".shared .align 8 .b8 gxi"), !by_barrier);
			assert_int_equal(count_str(out, "_blk[48];\n.visible .entry"), !by_barrier);
			assert_int_equal(count_str(body, "%gxb_ctx;\n"), 0);
			if (by_barrier) {
				assert_false(o.block_exit_counted);
				assert_int_equal(count_str(body, "\tbarrier.sync 0, %gxb_o;\n"), 1);
				assert_int_equal(count_str(body, "atom.shared"), 0);
				/* the kernel's own text has no barrier or warp sync */
				assert_int_equal(count_str(body, "bar.sync") + count_str(body, "bar.warp.sync") +
							 count_str(body, "shfl.sync") + count_str(body, "vote.sync"),
						 /* the warp probes' own */
						 count_str(body, "\tbar.warp.sync %gxb_m;\n") +
							 count_str(body, "bar.warp.sync %m") +
							 count_str(body, "bar.warp.sync %gxp_m"));
				exit_by_barrier++;
			} else {
				assert_int_equal(count_str(body, "GXB_MEET:\n\tbar.sync 0;\n"), 1);
				/* 32 bits: a 64-bit shared add is a compare-and-swap loop */
				assert_int_equal(count_str(body, "atom.shared.add.u32"), 1);
				exit_counted++;
			}
			assert_int_equal(count_str(body, "\tret;"), 1);
			const char *meet = strstr(body, "GXB_MEET:"), *ent = strstr(body, "{ // entry probe");
			const char *ex = strstr(body, "_exit:\n\t{ // block probes");
			const char *bent = strstr(body, "block_entry probe");
			assert_true(meet && ent && ex && bent && meet < ent && ent < ex && bent < ent);
			/* the block_entry program: with no entry barrier, before where it would be */
			assert_true(by_barrier ? bent < meet : meet < bent);
			end[1] = '}';
			ptxas_ok(out, len, "sm_90a", what);
			if (i == npaths && o.block_exit_counted) { /* smem: 64 static + 48 */
				FILE *f = fopen("build/ptx-block-small.ptx", "w");
				assert_non_null(f);
				fputs(out, f);
				fclose(f);
				int st;
				char *v = test_run_cmd(PTX_CORPUS_PTXAS " -v -arch=sm_90 -o /dev/null "
						       "build/ptx-block-small.ptx 2>&1", &st);
				assert_int_equal(st, 0);
				if (!strstr(v, "used 1 barriers") && !strstr(v, "used 2 barriers"))
					fail_msg("ptxas -v: %s", v);
				if (!strstr(v, "112 bytes smem"))
					fail_msg("ptxas -v, want 112 bytes smem: %s", v);
				free(v);
				unlink("build/ptx-block-small.ptx");
			}
			free(out);
			kernels++;
		}
		ptx_module_free(m);
		free(text);
	}
	assert_true(kernels >= 40);
	/* the corpus has both kinds of kernel */
	assert_true(exit_by_barrier >= 5 && exit_counted >= kernels / 2 + 5);
	free(extra);
	ptx_buf_free(&code);
	for (int k = 0; k < 5; k++)
		ptx_buf_free(&site[k]);
	ptx_corpus_free_list(paths, npaths);
}

/* only_kernel also leaves out the variables nothing kept uses (NVRTC's
 * helper variables); no_variables refuses those the kernel uses. */
static void test_only_kernel_variables(void **state)
{
	static const char head[] =
		".version 8.0\n.target sm_90\n.address_size 64\n"
		".global .align 1 .b8 __nv_atomic_triv_cp_helper[1];\n"
		".global .align 4 .u32 used_by_other;\n"
		".const .align 4 .u32 used_by_target;\n"
		".visible .entry other(.param .u64 p)\n{\n\t.reg .b32 %r<2>;\n"
		"\tld.global.u32 %r1, [used_by_other];\n\tret;\n}\n";
	static const char uses[] =
		".visible .entry target(.param .u64 p)\n{\n\t.reg .b32 %r<2>;\n"
		"\tld.const.u32 %r1, [used_by_target];\n\tret;\n}\n";
	static const char plain[] =
		".visible .entry target(.param .u64 p)\n{\n\tret;\n}\n";
	char text[2048];
	struct ptx_module *m;
	struct err e = {{0}};
	char *out;
	size_t len;
	struct ptx_inject_opts o = {.kernel = "target", .only_kernel = 1, .no_variables = 1};

	snprintf(text, sizeof(text), "%s%s", head, plain);
	assert_int_equal(ptx_parse(text, strlen(text), &m, &e), 0);
	assert_int_equal(ptx_module_check_no_variables(m, &e), -ENOTSUP);
	assert_int_equal(ptx_inject(m, &o, &out, &len, &e), 0);
	assert_null(strstr(out, "__nv_atomic_triv_cp_helper"));
	assert_null(strstr(out, "used_by"));
	assert_null(strstr(out, "other"));
	ptxas_ok(out, len, "sm_90", "variables dropped");
	free(out);
	ptx_module_free(m);

	snprintf(text, sizeof(text), "%s%s", head, uses);
	assert_int_equal(ptx_parse(text, strlen(text), &m, &e), 0);
	assert_int_equal(ptx_inject(m, &o, &out, &len, &e), -ENOTSUP);
	assert_non_null(strstr(e.msg, "'used_by_target'"));
	assert_non_null(strstr(e.msg, "line 6:"));
	o.no_variables = 0; /* kept: the kernel uses it */
	assert_int_equal(ptx_inject(m, &o, &out, &len, &e), 0);
	assert_non_null(strstr(out, "used_by_target;"));
	assert_null(strstr(out, "__nv_atomic_triv_cp_helper"));
	free(out);
	ptx_module_free(m);
}

/* The GPU batch's inject_check writes the modules it would run: they
 * assemble for sm_75 and sm_90; without a GPU it skips (77), with one it
 * passes. */
static void test_inject_check_batch(void **state)
{
	char dir[] = "/tmp/gpuext-inject-XXXXXX", cmd[1024];
	int st, rm_st;

#ifdef __SANITIZE_ADDRESS__
	skip(); /* the batch binaries are the plain build's */
#endif
	if (access(PTX_CORPUS_PTXAS, X_OK))
		skip();
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "set -e; build/gpu/inject_check --ptx-out %s; n=0; "
		 "for f in %s/inject_*.ptx; do n=$((n+1)); for a in sm_75 sm_90; do "
		 PTX_CORPUS_PTXAS " -arch=$a $f -o /dev/null; done; done; test $n = 6",
		 dir, dir);
	char *out = test_run_cmd(cmd, &st);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	free(test_run_cmd(cmd, &rm_st));
	if (st)
		fail_msg("%s", out ? out : "");
	free(out);
	out = test_run_cmd("build/gpu/inject_check", &st);
	if (st != 0 && st != 77)
		fail_msg("inject_check exit %d:\n%s", st, out ? out : "");
	free(out);
}

/* The agent runs a kernel unchanged when its module defines variables. */
static void test_module_variables(void **state)
{
	static const char head[] = ".version 7.8\n.target sm_75\n.address_size 64\n";
	static const char *const ok[] = {
		"", ".extern .global .align 4 .u32 shared_elsewhere;\n",
		".extern .const .align 4 .b8 c[16];\n",
	};
	static const struct {
		const char *decl, *name;
	} refused[] = {
		{".global .align 4 .u32 counter;\n", "'counter'"},
		{".visible .global .align 4 .b8 g_table[64] = {1, 2};\n", "'g_table'"},
		{".const .align 4 .f32 scale = 0f3F800000;\n", "'scale'"},
	};
	static const char body[] = ".visible .entry k()\n{\n\tret;\n}\n";
	char text[512];
	struct ptx_module *m;
	struct err e;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		snprintf(text, sizeof(text), "%s%s%s", head, ok[i], body);
		assert_int_equal(ptx_parse(text, strlen(text), &m, &e), 0);
		assert_int_equal(ptx_module_check_no_variables(m, &e), 0);
		ptx_module_free(m);
	}
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		snprintf(text, sizeof(text), "%s%s%s", head, refused[i].decl, body);
		assert_int_equal(ptx_parse(text, strlen(text), &m, &e), 0);
		assert_int_equal(ptx_module_check_no_variables(m, &e), -ENOTSUP);
		assert_non_null(strstr(e.msg, refused[i].name));
		assert_non_null(strstr(e.msg, "line 4:"));
		ptx_module_free(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus_inject_ptxas),
		cmocka_unit_test(test_placement_and_forms),
		cmocka_unit_test(test_small_kernel_ptxas),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_only_kernel),
		cmocka_unit_test(test_clang_programs_as_probes),
		cmocka_unit_test(test_inject_check_batch),
		cmocka_unit_test(test_module_variables),
		cmocka_unit_test(test_inline_probes),
		cmocka_unit_test(test_block_probes),
		cmocka_unit_test(test_block_entry_sunk),
		cmocka_unit_test(test_block_index_reg),
		cmocka_unit_test(test_flat_twin),
		cmocka_unit_test(test_block_exit_kinds),
		cmocka_unit_test(test_block_ctx_words),
		cmocka_unit_test(test_only_kernel_variables),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
