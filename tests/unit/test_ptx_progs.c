/* SPDX-License-Identifier: MIT */
/*
 * Every compiled program (every .bpf.o under build/bpf: tests/progs, tools, examples;
 * not the memory policies, which run on the host) translated to PTX, with its probe or standalone kernel, in one
 * module per target; the real ptxas accepts it for sm_75 and sm_90.  A
 * program may only be refused for calling a helper the GPU does not have
 * (host-only helpers such as probe_read_kernel_str).  Also `gpuext ptx`.
 */
#include "testutil.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/object.h"
#include "ptx/ptx_emit.h"
#include "ptx/ptx_wrap.h"

#define PTXAS "/usr/local/cuda/bin/ptxas"

static char *objs[256];
static int nobjs;

static int collect_obj(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	size_t l = strlen(path);
	/* Memory policies run in the host's policy runtime, never on the GPU:
	 * their helpers (600..) have no device implementation. */
	if (strstr(path, "/policies/"))
		return 0;
	/* Nor the verifier's corpus (tests/verifier/progs): host tracing programs
	 * in other projects' style, most with helpers the GPU lacks. */
	if (strstr(path, "/tests/verifier/"))
		return 0;
	if (flag == FTW_F && l > 6 && !strcmp(path + l - 6, ".bpf.o") && nobjs < 256)
		objs[nobjs++] = strdup(path);
	return 0;
}

static char *module_of_all(const char *target, int *translated, int *refused)
{
	struct ptx_target t;
	struct ptx_buf b = {0};

	assert_int_equal(ptx_target_parse(target, &t, NULL), 0);
	ptx_emit_header(&b, &t);
	ptx_emit_runtime(&b);
	*translated = *refused = 0;
	for (int i = 0; i < nobjs; i++) {
		struct object *obj;
		struct err e = {{0}};
		if (object_open(objs[i], &obj, &e))
			fail_msg("%s", e.msg);
		for (size_t k = 0; k < obj->prog_cnt; k++) {
			struct prog *p = obj->progs[k];
			char sym[128];
			struct ptx_emit_opts o = {.comments = 1};
			snprintf(sym, sizeof(sym), "gx_o%d_p%zu", i, k);
			o.symbol = sym;
			if (ptx_emit_prog(&b, p, &o, NULL, &e)) {
				if (!strstr(e.msg, "is not available on the GPU"))
					fail_msg("%s: %s", objs[i], e.msg);
				/* host programs (uprobe, cupti) may use host-only
				 * helpers: the host tools are made of them */
				*refused += prog_type_is_gpu(p->type);
				continue;
			}
			if (prog_type_is_gpu(p->type))
				ptx_emit_probe(&b, sym, ptx_probe_kind_of(p->type), k % 2 ? PTX_MODE_THREAD
										: PTX_MODE_WARP);
			else
				ptx_emit_run_kernel(&b, sym);
			(*translated)++;
		}
		object_free(obj);
	}
	return ptx_buf_take(&b, NULL);
}

static void check_target(const char *target)
{
	int translated, refused, st;
	char path[] = "/tmp/gpuext-progs-XXXXXX", cmd[256];

	if (access(PTXAS, X_OK))
		skip();
	char *text = module_of_all(target, &translated, &refused);
	assert_non_null(text);
	assert_true(translated >= nobjs); /* at least one program per object */
	assert_true(refused <= translated / 4);
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	snprintf(cmd, sizeof(cmd), PTXAS " -arch=%s %s -o /dev/null", target, path);
	char *out = test_run_cmd(cmd, &st);
	unlink(path);
	if (st)
		fail_msg("ptxas -arch=%s on %d programs:\n%.3000s", target, translated, out);
	free(out);
	free(text);
}

static void test_programs_sm75(void **state)
{
	check_target("sm_75");
}

static void test_programs_sm90(void **state)
{
	check_target("sm_90");
}

static void test_cli_ptx(void **state)
{
	char cmd[512];
	int st;

	snprintf(cmd, sizeof(cmd), "%s ptx --target sm_90 %s/tests/progs/subprogs.bpf.o gpu/mem/matmul",
		 test_cli_path(), TEST_BPF_DIR);
	char *out = test_run_cmd(cmd, &st);
	assert_int_equal(st, 0);
	assert_non_null(strstr(out, ".target sm_90"));
	assert_non_null(strstr(out, ".func gx_on_mem_probe(.param .b64 addr"));
	assert_non_null(strstr(out, "call local")); /* disassembly comments */
	free(out);
	snprintf(cmd, sizeof(cmd), "%s ptx %s/tests/progs/strings.bpf.o uprobe/libcuda.so.1:cuInit",
		 test_cli_path(), TEST_BPF_DIR);
	out = test_run_cmd(cmd, &st);
	assert_int_equal(st, 1);
	assert_non_null(strstr(out, "is not available on the GPU"));
	free(out);
	snprintf(cmd, sizeof(cmd), "%s ptx --target sm_60 x.o s", test_cli_path());
	out = test_run_cmd(cmd, &st);
	assert_int_equal(st, 2);
	assert_non_null(strstr(out, "sm_75 or newer"));
	free(out);
}

int main(void)
{
	nftw(TEST_BPF_DIR, collect_obj, 16, FTW_PHYS);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_programs_sm75),
		cmocka_unit_test(test_programs_sm90),
		cmocka_unit_test(test_cli_ptx),
	};
	int ret = cmocka_run_group_tests(tests, NULL, NULL);
	for (int i = 0; i < nobjs; i++)
		free(objs[i]);
	return ret;
}
