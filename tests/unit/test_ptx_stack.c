/* SPDX-License-Identifier: MIT */
/*
 * eBPF stack slots in PTX registers (src/ptx/ptx_stack.c) and inline array
 * updates, without a GPU:
 *   - the cases of tests/ptx_stack (conformance format: a slot written at
 *     several widths, narrow and sign-extending loads, a slot read through
 *     a copied pointer after later stores, a loop, and frames that must stay
 *     in memory: a join of two offsets, an address passed to a helper, an
 *     atomic, a spilled pointer) give the right r0 on the interpreter, are
 *     promoted or not as their names say, and ptxas -v shows no stack frame
 *     for the promoted ones (their values are checked on the GPU:
 *     gpu_conformance tests/ptx_stack);
 *   - inline updates of arrays and per-SM arrays: a value from frame slots,
 *     a value from memory, a 12-byte value's tail, the error results;
 *   - threadhist and memtrace instrumenting a real kernel through the agent
 *     (fake driver): ptxas -v shows no stack frame in the kernel, and a
 *     frame again with GPUEXT_PTX_STACK_FRAME=1.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/map.h"
#include "ptx/ptx_emit.h"
#include "ptx/ptx_helpers.h"
#include "ptx/ptx_wrap.h"
#include "ptx_conf.h"

#define PTXAS "/usr/local/cuda/bin/ptxas"
#define CASES "tests/ptx_stack"
#define AGENT "build/libgpuext-agent.so"
#define APP "build/fakecuda/app"
#define CORPUS "tests/ptx_corpus/checked.compute_75.ptx"

static int prog_run_interp(const struct prog *p, const struct prog_run_opts *opts, uint64_t *r0,
			   struct err *e)
{
	return prog_run(p, PROG_BACKEND_INTERP, opts, r0, e);
}

static struct prog test_prog(const char *name, struct isa_insn *insns, size_t cnt)
{
	struct prog p = {0};
	p.name = (char *)name;
	p.insns = insns;
	p.insn_cnt = cnt;
	return p;
}

/* ptxas -v -arch=sm_90 on text: its output (NULL when it failed). */
static char *ptxas_v(const char *text)
{
	char in[] = "/tmp/gpuext-stack-XXXXXX", cmd[256];
	int fd = mkstemp(in), st = -1;
	size_t len = strlen(text);

	assert_true(fd >= 0);
	assert_true(write(fd, text, len) == (ssize_t)len);
	close(fd);
	snprintf(cmd, sizeof(cmd), PTXAS " -v -arch=sm_90 %s -o /dev/null 2>&1", in);
	char *out = test_run_cmd(cmd, &st);
	unlink(in);
	if (st) {
		fail_msg("ptxas failed:\n%.3000s", out ? out : "");
		free(out);
		return NULL;
	}
	return out;
}

/* Bytes of stack frame ptxas -v reports for function fn; -1 if absent. */
static long stack_frame(const char *log, const char *fn)
{
	char key[256];
	snprintf(key, sizeof(key), "Function properties for %s\n", fn);
	const char *s = strstr(log, key);
	long n = -1;
	if (s && sscanf(s + strlen(key), " %ld bytes stack frame", &n) != 1)
		n = -1;
	return n;
}

/* A case whose frame must stay in memory: named escape_* or join_*. */
static int must_escape(const char *name)
{
	return !strncmp(name, "escape_", 7) || !strncmp(name, "join_", 5);
}

static void test_stack_cases(void **state)
{
	struct conf_case *cases;
	int n = ptx_conf_load_all(CASES, &cases), promoted = 0;
	struct ptx_target t;
	struct ptx_buf b = {0};

	assert_true(n >= 9);
	if (access(PTXAS, X_OK))
		skip();
	assert_int_equal(ptx_target_parse("sm_90", &t, NULL), 0);
	ptx_emit_header(&b, &t);
	ptx_emit_runtime(&b);
	for (int i = 0; i < n; i++) {
		struct prog p = test_prog(cases[i].name, cases[i].insns, cases[i].insn_cnt);
		struct ptx_emit_opts o = {.conformance_helpers = 1, .comments = 1};
		struct ptx_buf one = {0};
		struct err e = {{0}};
		char sym[128], why[256];
		const struct conf_backend interp = {"interp", prog_run_interp, 0};

		/* the expected value holds on the host (the case is right) */
		if (conf_case_run(&cases[i], &interp, why, sizeof(why)) != CONF_PASS)
			fail_msg("%s: interpreter: %s", cases[i].name, why);
		if (ptx_emit_prog(&one, &p, &o, sym, &e))
			fail_msg("%s: %s", cases[i].name, e.msg);
		int local = strstr(one.text, ".local .align 8 .b8 stack[") != NULL;
		int regs = strstr(one.text, ".reg .b64 %fp<") != NULL;
		if (local != must_escape(cases[i].name) || regs == local)
			fail_msg("%s: frame %s, slot registers %s", cases[i].name,
				 local ? "in memory" : "gone", regs ? "used" : "unused");
		promoted += !local;
		ptx_buf_append(&b, one.text, one.len);
		ptx_emit_run_kernel(&b, sym);
		ptx_buf_free(&one);
	}
	char *text = ptx_buf_take(&b, NULL);
	char *log = ptxas_v(text);
	assert_non_null(log);
	for (int i = 0; i < n; i++) {
		char fn[160];
		snprintf(fn, sizeof(fn), "gx_%s_f0", cases[i].name);
		long frame = stack_frame(log, fn);
		if (frame < 0)
			fail_msg("%s: no ptxas -v line for %s", cases[i].name, fn);
		/* (a frame kept in memory may still be folded away by ptxas) */
		if (frame != 0 && !must_escape(cases[i].name))
			fail_msg("%s: ptxas -v says %ld bytes stack frame", cases[i].name, frame);
	}
	assert_true(promoted >= 5);
	free(log);
	free(text);
	ptx_conf_free_all(cases, n);
}

/* How many of the ISA conformance cases keep no memory frame: most cases
 * that use the stack at all use constant offsets. */
static void test_conformance_cases_promoted(void **state)
{
	struct conf_case *cases;
	int n = ptx_conf_load_all(TEST_CONFORMANCE_DIR, &cases), framed = 0, promoted = 0;

	assert_true(n >= 300);
	for (int i = 0; i < n; i++) {
		struct prog p = test_prog(cases[i].name, cases[i].insns, cases[i].insn_cnt);
		struct ptx_emit_opts o = {.conformance_helpers = 1};
		struct ptx_buf one = {0};
		struct err e = {{0}};
		assert_int_equal(ptx_emit_prog(&one, &p, &o, NULL, &e), 0);
		if (strstr(one.text, ".local .align 8 .b8 stack["))
			framed++;
		if (strstr(one.text, ".reg .b64 %fp<"))
			promoted++;
		ptx_buf_free(&one);
	}
	printf("conformance: %d cases with slots in registers, %d with a memory frame, of %d\n",
	       promoted, framed, n);
	assert_true(promoted >= 10);
	assert_true(framed >= 1); /* stack.txt: a computed offset */
	ptx_conf_free_all(cases, n);
}

static size_t count_of(const char *text, const char *needle)
{
	size_t n = 0;
	for (const char *s = strstr(text, needle); s; s = strstr(s + 1, needle))
		n++;
	return n;
}

/*
 * bpf_map_update_elem inline: on an array with a 12-byte value from the
 * frame (slot registers: a word and a 4-byte tail), on a per-SM array with
 * a value from a map value (memory: aligned and byte-by-byte paths); a hash
 * and an array without value_size still call the runtime.  ptxas accepts it
 * and the program keeps no frame.
 */
static void test_update_inline(void **state)
{
	struct isa_insn insns[64];
	size_t n = 0;
	struct ptx_map_ref refs[3] = {
		{0x7000000000, 0x7000000080, MAP_TYPE_ARRAY, 4, 16, 1, 0, 12},
		{0x7100000000, 0x7100000080, MAP_TYPE_PERCPU_ARRAY, 2, 8, 132, 128, 8},
		{0x7200000000, 0, MAP_TYPE_HASH, 64, 0, 1, 0, 0},
	};
	struct ptx_emit_opts o = {.maps = refs};
	struct map *maps[3] = {NULL, NULL, NULL};

	if (access(PTXAS, X_OK))
		skip();
#define I(c, d, s, o_, i) insns[n++] = (struct isa_insn){c, d, s, o_, i}
#define MAP(r, m) I(ISA_OPC_LD_IMM64, r, ISA_PSEUDO_MAP_FD, 0, m), I(0, 0, 0, 0, 0)
#define UPDATE() I(ISA_OPC_JMP_CALL, 0, ISA_CALL_HELPER, 0, HELPER_MAP_UPDATE_ELEM)
	I(ISA_OPC_ST_W, ISA_REG_FP, 0, -4, 1);   /* key 1 at fp-4 */
	I(ISA_OPC_ST_DW, ISA_REG_FP, 0, -24, 7); /* value: fp-24..fp-13 */
	I(ISA_OPC_ST_W, ISA_REG_FP, 0, -16, 9);
	MAP(1, 0);
	I(ISA_OPC_ALU64_MOV_X, 2, ISA_REG_FP, 0, 0);
	I(ISA_OPC_ALU64_ADD_K, 2, 0, 0, -4);
	I(ISA_OPC_ALU64_MOV_X, 3, ISA_REG_FP, 0, 0);
	I(ISA_OPC_ALU64_ADD_K, 3, 0, 0, -24);
	I(ISA_OPC_ALU64_MOV_K, 4, 0, 0, 0);
	UPDATE();                                /* inline, value from slots */
	I(ISA_OPC_ALU64_MOV_X, 6, 0, 0, 0);
	MAP(3, 0);                               /* r3 = &array value 0 (map memory) */
	insns[n - 2].src = ISA_PSEUDO_MAP_VALUE;
	MAP(1, 1);
	I(ISA_OPC_ALU64_MOV_X, 2, ISA_REG_FP, 0, 0);
	I(ISA_OPC_ALU64_ADD_K, 2, 0, 0, -4);
	I(ISA_OPC_ALU64_MOV_K, 4, 0, 0, 2);
	UPDATE();                                /* inline, per-SM, value from memory */
	I(ISA_OPC_ALU64_ADD_X, 6, 0, 0, 0);
	MAP(1, 2);
	I(ISA_OPC_ALU64_MOV_X, 2, ISA_REG_FP, 0, 0);
	I(ISA_OPC_ALU64_ADD_K, 2, 0, 0, -4);
	I(ISA_OPC_ALU64_MOV_X, 3, ISA_REG_FP, 0, 0);
	I(ISA_OPC_ALU64_ADD_K, 3, 0, 0, -24);
	I(ISA_OPC_ALU64_MOV_K, 4, 0, 0, 0);
	UPDATE();                                /* runtime: hash */
	I(ISA_OPC_ALU64_ADD_X, 0, 6, 0, 0);
	I(ISA_OPC_JMP_EXIT, 0, 0, 0, 0);
#undef UPDATE
#undef MAP
#undef I
	struct prog p = test_prog("updates", insns, n);
	p.maps = maps;
	p.map_cnt = 3;
	struct ptx_buf b = {0}, prog = {0};
	struct ptx_target t;
	struct err e = {{0}};
	char sym[128];

	assert_int_equal(ptx_target_parse("sm_90", &t, NULL), 0);
	if (ptx_emit_prog(&prog, &p, &o, sym, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(count_of(prog.text, "map_update_elem, inline"), 2);
	assert_int_equal(count_of(prog.text, "call.uni (rq), gx_rt_map_update"), 1);
	/* the escaped hash update keeps the frame: the slots are memory */
	assert_non_null(strstr(prog.text, ".local .align 8 .b8 stack["));
	assert_non_null(strstr(prog.text, "setp.ge.u32 %p1, %h0, 4;"));   /* -E2BIG */
	assert_non_null(strstr(prog.text, "setp.gt.u64 %p1, %r4, 2;"));   /* -EINVAL */
	assert_non_null(strstr(prog.text, "setp.eq.u64 %p1, %r4, 1;"));   /* -EEXIST */
	assert_non_null(strstr(prog.text, "min.u32 %sm, %sm, 131;"));     /* per-SM copy */
	assert_non_null(strstr(prog.text, "misaligned value: byte by byte"));
	assert_non_null(strstr(prog.text, "st.u32 [%t0+8], %t2;"));       /* the 12-byte tail */
	ptx_emit_header(&b, &t);
	const char *texts[1] = {prog.text};
	ptx_emit_runtime_used(&b, texts, 1);
	ptx_buf_append(&b, prog.text, prog.len);
	ptx_emit_probe(&b, sym, PTX_PROBE_ENTRY, PTX_MODE_WARP);
	char *text = ptx_buf_take(&b, NULL);
	free(ptxas_v(text));
	free(text);

	/* without the hash update, nothing escapes: the value comes from the
	 * slot registers, and there is no frame */
	n -= 10; /* from the hash's MAP(1, 2) on */
	insns[n++] = (struct isa_insn){ISA_OPC_ALU64_MOV_X, 0, 6, 0, 0};
	insns[n++] = (struct isa_insn){ISA_OPC_JMP_EXIT, 0, 0, 0, 0};
	p.insn_cnt = n;
	ptx_buf_free(&prog);
	if (ptx_emit_prog(&prog, &p, &o, sym, &e))
		fail_msg("%s", e.msg);
	assert_null(strstr(prog.text, ".local"));
	assert_non_null(strstr(prog.text, "st.u64 [%t0+0], %fp61;"));    /* fp-24: slot 61 */
	assert_non_null(strstr(prog.text, "shr.b64 %t2, %fp62, 0;"));     /* fp-16: the tail */
	assert_non_null(strstr(prog.text, "shr.b64 %t0, %fp63, 32;\n\tcvt.u32.u64 %h0, %t0;\n"
					  "\tcvt.u64.u32 %r0, %h0;")); /* the key */
	b = (struct ptx_buf){0};
	ptx_emit_header(&b, &t);
	texts[0] = prog.text;
	ptx_emit_runtime_used(&b, texts, 1);
	ptx_buf_append(&b, prog.text, prog.len);
	ptx_emit_run_kernel(&b, sym); /* a caller, so that ptxas compiles it */
	text = ptx_buf_take(&b, NULL);
	char *log = ptxas_v(text);
	assert_int_equal(stack_frame(log, "gx_updates_f0"), 0);
	free(log);
	free(text);
	ptx_buf_free(&prog);
}

/* The stack frame ptxas gives vec_add instrumented with tool (through the
 * agent on the fake driver), env set before the command. */
static long tool_vec_add_frame(const char *tool, const char *env)
{
	char dir[] = "/tmp/gpuext-stack-agent-XXXXXX", cmd[1024], path[600];
	int st;

	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "%s FAKECUDA_LOG=%s/log FAKECUDA_DUMP=%s GPUEXT_AGENT=%s %s run "
		 "build/bpf/tools/%s.bpf.o -o /dev/null -- %s %s vec_add reduce_atomic",
		 env, dir, dir, AGENT, test_cli_path(), tool, APP, CORPUS);
	free(test_run_cmd(cmd, &st));
	assert_int_equal(st, 0);
	/* the instrumented vec_add: the module with the probe's election */
	long frame = -1;
	for (int m = 1; m < 8 && frame < 0; m++) {
		snprintf(path, sizeof(path), "%s/mod-%d.ptx", dir, m);
		char *ptx = test_read_file(path, NULL);
		if (ptx && strstr(ptx, "%gxp_m") && strstr(ptx, ".entry vec_add")) {
			char *log = ptxas_v(ptx);
			frame = log ? stack_frame(log, "vec_add") : -1;
			free(log);
		}
		free(ptx);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	free(test_run_cmd(cmd, &st));
	return frame;
}

static void test_tools_keep_no_frame(void **state)
{
	static const char *const tools[] = {"threadhist", "memtrace", "smload"};

	if (access(PTXAS, X_OK) || access(APP, X_OK) || access(AGENT, R_OK))
		skip();
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		long regs = tool_vec_add_frame(tools[i], "");
		long mem = tool_vec_add_frame(tools[i], "GPUEXT_PTX_STACK_FRAME=1");
		printf("%s: vec_add stack frame %ld bytes (%ld with the memory frame)\n", tools[i],
		       regs, mem);
		assert_int_equal(regs, 0);
		assert_true(mem > 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stack_cases),
		cmocka_unit_test(test_conformance_cases_promoted),
		cmocka_unit_test(test_update_inline),
		cmocka_unit_test(test_tools_keep_no_frame),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
