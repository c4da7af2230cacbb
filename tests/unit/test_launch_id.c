/* SPDX-License-Identifier: MIT */
/*
 * test_launch_id.c - launch ids: the parameter the injector appends (its
 * offset by the PTX ABI, the kernels whose parameter space is full, ptxas
 * on the result), and the agent passing each launch's id on every launch
 * path of the driver API (the fake driver reads them as the driver would).
 */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptx/ptx_emit.h"
#include "ptx/ptx_inject.h"
#include "ptx/ptx_wrap.h"
#include "ptx_corpus.h"

/* An exit probe whose body is r0 = bpf_gpu_launch_id(). */
static char *launch_id_exit_probe(void)
{
	static struct isa_insn insns[] = {
		{ISA_OPC_JMP_CALL, 0, ISA_CALL_HELPER, 0, 512},
		{ISA_OPC_JMP_EXIT, 0, 0, 0, 0},
	};
	struct prog p = {.name = "lid", .insns = insns, .insn_cnt = 2};
	struct ptx_buf b = {0}, site = {0};
	struct ptx_emit_opts o = {.launch_id = PTX_LAUNCH_ID_REG};
	struct err e = {{0}};
	if (ptx_emit_probe_inline(&b, &site, &p, &o, PTX_PROBE_EXIT, &e))
		fail_msg("%s", e.msg);
	ptx_buf_free(&b);
	return ptx_buf_take(&site, NULL);
}

/* Instrument kernel k of text with the probe and the launch parameter;
 * ptxas accepts the result for arch. */
static char *inject(const char *text, const char *k, const char *version_arch,
		    struct ptx_launch_param *lp)
{
	struct ptx_module *m;
	struct err e = {{0}};
	char *exit = launch_id_exit_probe(), *out, *log = NULL;
	size_t len;
	if (ptx_parse(text, strlen(text), &m, &e))
		fail_msg("%s", e.msg);
	struct ptx_inject_opts o = {.kernel = k, .exit_code = exit, .min_version_major = 7,
				    .min_version_minor = 8, .launch_param = lp};
	if (ptx_inject(m, &o, &out, &len, &e))
		fail_msg("%s: %s", k, e.msg);
	int st = ptx_corpus_ptxas(out, len, version_arch, &log);
	if (st > 0)
		fail_msg("%s: ptxas:\n%.3000s\n%.2000s", k, log, out);
	free(log);
	ptx_module_free(m);
	free(exit);
	return out;
}

/* The parameter's offset follows each parameter's alignment: .ptr's .align
 * is the pointee's, an array's .align its own. */
static void test_param_layout(void **state)
{
	static const char text[] =
		".version 7.8\n.target sm_75\n.address_size 64\n"
		".visible .entry mixed(.param .u32 a, .param .align 16 .b8 s[20], .param .u8 c,\n"
		"\t.param .u64 .ptr .global .align 16 p)\n{\n\tret;\n}\n"
		".visible .entry none()\n{\n\tret;\n}\n"
		".visible .entry bare\n{\n\tret;\n}\n";
	struct ptx_launch_param lp;
	/* a 0..4, s 16..36, c 36, p 40..48 (8-aligned: .align 16 is the pointee's) */
	char *out = inject(text, "mixed", "sm_75", &lp);
	assert_true(lp.added);
	assert_int_equal(lp.params, 4);
	assert_int_equal(lp.offset, 48);
	assert_non_null(strstr(out, ".param .u64 .ptr .global .align 16 p, .param .u64 gxi_lid)"));
	assert_non_null(strstr(out, "ld.param.u64 %gxl_id, [gxi_lid];"));
	free(out);
	out = inject(text, "none", "sm_75", &lp);
	assert_true(lp.added && lp.params == 0 && lp.offset == 0);
	assert_non_null(strstr(out, ".entry none(.param .u64 gxi_lid)"));
	free(out);
	out = inject(text, "bare", "sm_75", &lp);
	assert_true(lp.added && lp.params == 0 && lp.offset == 0);
	assert_non_null(strstr(out, ".entry bare(.param .u64 gxi_lid)"));
	free(out);
}

/* 4 KiB of parameters (32764 bytes from PTX 8.1 on sm_70+): a kernel the
 * parameter no longer fits keeps its list and reads 0. */
static void test_param_space_full(void **state)
{
	static const char fits[] = ".version 7.8\n.target sm_75\n.address_size 64\n"
				   ".visible .entry k(.param .align 8 .b8 big[4088])\n{\n\tret;\n}\n";
	static const char full[] = ".version 7.8\n.target sm_75\n.address_size 64\n"
				   ".visible .entry k(.param .align 8 .b8 big[4089])\n{\n\tret;\n}\n";
	static const char large[] = ".version 8.1\n.target sm_90\n.address_size 64\n"
				    ".visible .entry k(.param .align 8 .b8 big[4089])\n{\n\tret;\n}\n";
	struct ptx_launch_param lp;
	char *out = inject(fits, "k", "sm_75", &lp);
	assert_true(lp.added && lp.offset == 4088);
	free(out);
	out = inject(full, "k", "sm_75", &lp);
	assert_false(lp.added);
	assert_string_equal(lp.why, "its parameter space is full");
	assert_null(strstr(out, "_lid"));
	assert_non_null(strstr(out, "mov.u64 %gxl_id, 0;"));
	free(out);
	out = inject(large, "k", "sm_90", &lp);
	assert_true(lp.added && lp.offset == 4096);
	free(out);
}

/* Every kernel of the corpus takes the parameter and assembles. */
static void test_corpus(void **state)
{
	char **paths;
	size_t n = ptx_corpus_list(&paths), kernels = 0;
	for (size_t i = 0; i < n; i++) {
		char *text = test_read_file(paths[i], NULL);
		struct ptx_module *m;
		struct err e = {{0}};
		assert_non_null(text);
		assert_int_equal(ptx_parse(text, strlen(text), &m, &e), 0);
		for (size_t k = 0; k < ptx_module_kernel_count(m); k++, kernels++) {
			struct ptx_launch_param lp;
			free(inject(text, ptx_module_kernel_name(m, k), "sm_90a", &lp));
			if (!lp.added)
				fail_msg("%s %s: %s", paths[i], ptx_module_kernel_name(m, k), lp.why);
		}
		ptx_module_free(m);
		free(text);
	}
	assert_true(kernels >= 20);
	ptx_corpus_free_list(paths, n);
}

/* A module that names the register the injector reserves is refused. */
static void test_reserved_name(void **state)
{
	static const char text[] = ".version 7.8\n.target sm_75\n.address_size 64\n"
				   ".visible .entry k()\n{\n\t.reg .b64 %gxl_id;\n\tret;\n}\n";
	struct ptx_module *m;
	struct err e = {{0}};
	struct ptx_launch_param lp;
	char *out = NULL;
	size_t len;
	assert_int_equal(ptx_parse(text, strlen(text), &m, &e), 0);
	struct ptx_inject_opts o = {.kernel = "k", .launch_param = &lp};
	assert_int_equal(ptx_inject(m, &o, &out, &len, &e), -EEXIST);
	assert_non_null(strstr(e.msg, "'gxl_id', which gpuext reserves"));
	ptx_module_free(m);
}

/*
 * The agent under `gpuext run` (kernelretsnoop: its block_entry program reads the id)
 * with tests/fakecuda/launchapp: each launch form passes the id after the
 * application's parameters (the fake driver logs what it read), ids 1..6
 * in order, the `extra` buffer copied with the id at offset 32 (size 40),
 * the unknown `extra` list run uninstrumented with one notice; the launch
 * table has one row per id with its grid and kind.  The flat launches (1-D
 * grid and blocks) run the kernel's flat twin (kernelretsnoop has block
 * probes; GPUEXT_AGENT_VERBOSE says it has one), the others (a 2-D grid,
 * 2-D blocks) its general form.
 */
static void test_agent_paths(void **state)
{
	char dir[] = "/tmp/gpuext-launch-id-XXXXXX", cmd[2048], path[600];
	int st;
	if (access("build/fakecuda/launchapp", X_OK))
		skip();
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "FAKECUDA_LOG=%s/log FAKECUDA_DUMP=%s GPUEXT_AGENT=build/libgpuext-agent.so "
		 "GPUEXT_AGENT_VERBOSE=1 %s run build/bpf/tools/kernelretsnoop.bpf.o -- "
		 "build/fakecuda/launchapp tests/ptx_corpus/checked.compute_75.ptx vec_add 2>&1",
		 dir, dir, test_cli_path());
	char *out = test_run_cmd(cmd, &st);
	assert_non_null(out);
	if (st)
		fail_msg("exit %d: %s", st, out);
	snprintf(path, sizeof(path), "%s/log", dir);
	char *log = test_read_file(path, NULL);
	assert_non_null(log);
	static const char *const want[] = {
		"launch vec_add__gx_flat 2 cuLaunchKernel lid=1 p0=a1\n",
		"launch vec_add__gx_flat 2 cuLaunchKernel lid=2 size=40 head=0102030405060708090a0b0c0d0e0f10"
		"1112131415161718191a1b1c00000000\n",
		"launch vec_add 2 cuLaunchKernelEx lid=3 p0=a1\n",
		"launch vec_add__gx_flat 2 cuLaunchCooperativeKernel lid=4 p0=a1\n",
		"launch vec_add 2 cuGraphAddKernelNode_v2 lid=5 p0=a1\n",
		"launch vec_add__gx_flat 2 cuGraphAddKernelNode_v2 lid=6 size=40 head=0102030405060708090a0b0c"
		"0d0e0f101112131415161718191a1b1c00000000\n",
		"launch vec_add 1 cuLaunchKernel\n", /* the original: an unknown `extra` key */
		"launch vec_add 1 cuLaunchKernel\n", /* and for no parameters at all */
	};
	const char *at = log;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const char *p = strstr(at, want[i]);
		if (!p)
			fail_msg("no '%s' after %zu lines in:\n%s", want[i], i, log);
		at = p + strlen(want[i]);
	}
	assert_non_null(strstr(out, "its `extra` list has a key gpuext does not know"));
	assert_non_null(strstr(out, "gpuext: kernel vec_add instrumented ("));
	assert_non_null(strstr(out, ", a flat twin, "));
	static const char *const rows[] = {
		"launch=1 kernel=vec_add grid=2,1,1 block=32,1,1 shmem=0 stream=0x0 kind=kernel ",
		"launch=2 kernel=vec_add grid=3,1,1 block=32,1,1 shmem=0 stream=0x0 kind=kernel ",
		"launch=3 kernel=vec_add grid=4,2,1 block=32,1,1 shmem=0 stream=0x0 kind=ex ",
		"launch=4 kernel=vec_add grid=5,1,1 block=32,1,1 shmem=0 stream=0x0 kind=cooperative ",
		"launch=5 kernel=vec_add grid=6,1,1 block=16,2,1 shmem=0 stream=0x0 kind=graph-node ",
		"launch=6 kernel=vec_add grid=7,1,1 block=32,1,1 shmem=0 stream=0x0 kind=graph-node ",
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (!strstr(out, rows[i]))
			fail_msg("no row '%s' in:\n%s", rows[i], out);
	assert_non_null(strstr(out, "6 launches (6 launch table rows)"));
	free(log);
	free(out);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	free(test_run_cmd(cmd, &st));
}

/*
 * launchapp on kernel NAME of the PTX params (its parameter list) with
 * nparams parameters, under kernelretsnoop: the fake driver's log into
 * *log, gpuext's output returned.
 */
static char *run_kernel(const char *name, const char *params, int nparams, char **log)
{
	char dir[] = "/tmp/gpuext-launch-id-XXXXXX", cmd[2048], path[600];
	int st;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/k.ptx", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, ".version 7.8\n.target sm_75\n.address_size 64\n.visible .entry %s(%s)\n"
		   "{\n\tret;\n}\n", name, params);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "FAKECUDA_LOG=%s/log FAKECUDA_DUMP=%s GPUEXT_AGENT=build/libgpuext-agent.so "
		 "%s run build/bpf/tools/kernelretsnoop.bpf.o -- build/fakecuda/launchapp "
		 "%s %s %d 2>&1", dir, dir, test_cli_path(), path, name, nparams);
	char *out = test_run_cmd(cmd, &st);
	assert_non_null(out);
	if (st)
		fail_msg("exit %d: %s", st, out);
	snprintf(path, sizeof(path), "%s/log", dir);
	*log = test_read_file(path, NULL);
	assert_non_null(*log);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	free(test_run_cmd(cmd, &st));
	return out;
}

/* A kernel of 40 parameters: the agent's array of them and the id goes to
 * the heap (beyond AGENT_LAUNCH_SMALL); the fake driver reads all 41. */
static void test_agent_many_params(void **state)
{
	char params[2048] = "", *log;
	if (access("build/fakecuda/launchapp", X_OK))
		skip();
	for (int i = 0; i < 40; i++)
		snprintf(params + strlen(params), sizeof(params) - strlen(params),
			 "%s.param .u64 many_p%d", i ? ", " : "", i);
	free(run_kernel("many", params, 40, &log));
	if (!strstr(log, "launch many__gx_flat 2 cuLaunchKernel lid=1 p0=a1\n"))
		fail_msg("%s", log);
	free(log);
}

/* A kernel whose parameters fill the 4 KiB: instrumented without the id
 * (its launches pass the application's parameters as they are), one
 * notice. */
static void test_agent_params_full(void **state)
{
	char *log;
	if (access("build/fakecuda/launchapp", X_OK))
		skip();
	char *out = run_kernel("big", ".param .align 8 .b8 big_p[4089]", 1, &log);
	if (!strstr(log, "launch big__gx_flat 2 cuLaunchKernel\n"))
		fail_msg("%s", log);
	const char *notice = "gpuext: kernel big: no launch id (its parameter space is full): "
			     "bpf_gpu_launch_id() gives 0\n";
	const char *at = strstr(out, notice);
	if (!at || strstr(at + 1, notice))
		fail_msg("want the notice once: %s", out);
	free(log);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_param_layout),
		cmocka_unit_test(test_param_space_full),
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_reserved_name),
		cmocka_unit_test(test_agent_paths),
		cmocka_unit_test(test_agent_many_params),
		cmocka_unit_test(test_agent_params_full),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
