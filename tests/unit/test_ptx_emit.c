/* SPDX-License-Identifier: MIT */
/*
 * The eBPF -> PTX translator without a GPU: every conformance case (and the
 * wrappers) translated into one module per target and assembled by the
 * real ptxas for sm_75 and sm_90; clear errors for what cannot run on the
 * GPU.  Semantics are checked on the GPU by tests/gpu/run.sh.
 */
#include "testutil.h"

#include <errno.h>
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

static struct prog test_prog(const char *name, struct isa_insn *insns, size_t cnt)
{
	struct prog p = {0};
	p.name = (char *)name;
	p.insns = insns;
	p.insn_cnt = cnt;
	return p;
}

/* Run ptxas on text for target; returns its exit status, output in *log. */
static int run_ptxas(const char *text, size_t len, const char *target, char **log)
{
	char in[] = "/tmp/gpuext-ptx-XXXXXX";
	int fd = mkstemp(in), st = -1;
	char cmd[512];

	if (fd < 0)
		return -1;
	if (write(fd, text, len) != (ssize_t)len) {
		close(fd);
		unlink(in);
		return -1;
	}
	close(fd);
	snprintf(cmd, sizeof(cmd), PTXAS " -arch=%s %s -o /dev/null", target, in);
	*log = test_run_cmd(cmd, &st);
	unlink(in);
	return st;
}

/* prog (function sym, emitted for target t) in a module of its own, after
 * the runtime functions it names, called by a probe of kind: ptxas must
 * accept it (the test fails with ptxas's output). */
static void assert_probe_assembles(const struct ptx_buf *prog, const char *sym,
				   const struct ptx_target *t, const char *target,
				   enum ptx_probe_kind kind)
{
	struct ptx_buf b = {0};
	const char *texts[1] = {prog->text};
	char *log = NULL;
	size_t len;

	ptx_emit_header(&b, t);
	ptx_emit_runtime_used(&b, texts, 1);
	ptx_buf_append(&b, prog->text, prog->len);
	ptx_emit_probe(&b, sym, kind, PTX_MODE_WARP);
	char *text = ptx_buf_take(&b, &len);
	if (run_ptxas(text, len, target, &log))
		fail_msg("ptxas -arch=%s:\n%.3000s", target, log ? log : "");
	free(log);
	free(text);
}

/* One module: header, runtime, every case's functions and run kernel. */
static char *conformance_module(const char *target, int *translated, int *rejected)
{
	struct conf_case *cases;
	struct ptx_target t;
	struct ptx_buf b = {0};
	int n = ptx_conf_load_all(TEST_CONFORMANCE_DIR, &cases);

	assert_true(n >= 300);
	assert_int_equal(ptx_target_parse(target, &t, NULL), 0);
	ptx_emit_header(&b, &t);
	ptx_emit_runtime(&b);
	*translated = *rejected = 0;
	for (int i = 0; i < n; i++) {
		struct prog p = test_prog(cases[i].name, cases[i].insns, cases[i].insn_cnt);
		struct ptx_emit_opts o = {.conformance_helpers = 1, .comments = 1};
		char sym[128];
		struct err e = {{0}};
		if (ptx_emit_prog(&b, &p, &o, sym, &e)) {
			fail_msg("%s: %s", cases[i].name, e.msg);
			(*rejected)++;
			continue;
		}
		ptx_emit_run_kernel(&b, sym);
		(*translated)++;
	}
	ptx_conf_free_all(cases, n);
	return ptx_buf_take(&b, NULL);
}

static void check_conformance_target(const char *target)
{
	int translated, rejected, st;
	char *log = NULL;

	if (access(PTXAS, X_OK))
		skip();
	char *text = conformance_module(target, &translated, &rejected);
	assert_non_null(text);
	assert_true(translated >= 313); /* callx included */
	assert_int_equal(rejected, 0);
	st = run_ptxas(text, strlen(text), target, &log);
	if (st != 0) {
		/* keep the module for reading the line ptxas names */
		char path[64];
		snprintf(path, sizeof(path), "build/ptx-conformance-%s.ptx", target);
		FILE *f = fopen(path, "w");
		if (f) {
			fputs(text, f);
			fclose(f);
		}
		fail_msg("ptxas -arch=%s rejected the conformance module:\n%.3000s", target,
			 log ? log : "(no output)");
	}
	free(log);
	free(text);
}

static void test_conformance_sm75(void **state)
{
	check_conformance_target("sm_75");
}

static void test_conformance_sm90(void **state)
{
	check_conformance_target("sm_90");
}

/* A program that uses maps, every GPU helper, ring buffers and a subprogram,
 * wrapped as entry/exit/mem probes in both modes: ptxas accepts it. */
static void test_helpers_and_probes_assemble(void **state)
{
	struct isa_insn insns[512];
	size_t n = 0;
	struct ptx_buf b = {0};
	struct ptx_target t;
	struct ptx_map_ref refs[2] = {{.map = 0x7000000000, .value = 0x7000000080},
				      {.map = 0x7100000000}};
	struct ptx_emit_opts o = {.maps = refs, .trace_ring = 0x7200000000, .comments = 1};
	char sym[128], *log = NULL;
	struct map *maps[2] = {NULL, NULL};

	if (access(PTXAS, X_OK))
		skip();
#define I(c, d, s, o_, i) insns[n++] = (struct isa_insn){c, d, s, o_, i}
	/* r6 = &map0 ; r7 = &map0 value 0 + 16 */
	I(ISA_OPC_LD_IMM64, 6, ISA_PSEUDO_MAP_FD, 0, 0);
	I(0, 0, 0, 0, 0);
	I(ISA_OPC_LD_IMM64, 7, ISA_PSEUDO_MAP_VALUE, 0, 0);
	I(0, 0, 0, 0, 16);
	/* every helper the device runtime has, with plausible arguments (the
	 * launch id exists only inline in a kernel: test_launch_id) */
	for (uint32_t id = 1; id < 600; id++) {
		const struct ptx_helper *h = ptx_helper_find(id);
		if (!h || id == HELPER_GPU_LAUNCH_ID)
			continue;
		I(ISA_OPC_ALU64_MOV_X, 1, 6, 0, 0);
		I(ISA_OPC_ALU64_MOV_X, 2, ISA_REG_FP, 0, 0);
		I(ISA_OPC_ALU64_ADD_K, 2, 0, 0, -8);
		I(ISA_OPC_ALU64_MOV_K, 3, 0, 0, 8);
		I(ISA_OPC_ALU64_MOV_K, 4, 0, 0, 0);
		I(ISA_OPC_ALU64_MOV_K, 5, 0, 0, 0);
		I(ISA_OPC_JMP_CALL, 0, ISA_CALL_HELPER, 0, (int32_t)id);
	}
	I(ISA_OPC_JMP_CALL, 0, ISA_CALL_LOCAL, 0, 1);
	I(ISA_OPC_JMP_EXIT, 0, 0, 0, 0);
	I(ISA_OPC_ALU64_MOV_K, 0, 0, 0, 7); /* the subprogram */
	I(ISA_OPC_JMP_EXIT, 0, 0, 0, 0);
#undef I
	struct prog p = test_prog("probe", insns, n);
	p.maps = maps;
	p.map_cnt = 2;
	assert_int_equal(ptx_target_parse("sm_90", &t, NULL), 0);
	ptx_emit_header(&b, &t);
	ptx_emit_runtime(&b);
	struct err e = {{0}};
	if (ptx_emit_prog(&b, &p, &o, sym, &e))
		fail_msg("%s", e.msg);
	assert_string_equal(sym, "gx_probe");
	ptx_emit_probe(&b, sym, PTX_PROBE_ENTRY, PTX_MODE_WARP);
	char text_sym[160];
	snprintf(text_sym, sizeof(text_sym), "%s", sym);
	/* a second copy under another name for the other probe kinds and modes */
	o.symbol = "gx_probe2";
	assert_int_equal(ptx_emit_prog(&b, &p, &o, sym, &e), 0);
	ptx_emit_probe(&b, "gx_probe2", PTX_PROBE_MEM, PTX_MODE_THREAD);
	ptx_emit_run_kernel(&b, text_sym);
	size_t len;
	char *text = ptx_buf_take(&b, &len);
	assert_non_null(strstr(text, "0x0000007000000090")); /* value 0 + 16 */
	assert_non_null(strstr(text, "activemask.b32"));
	assert_non_null(strstr(text, "bfind.shiftamt.u32"));
	int st = run_ptxas(text, len, "sm_90", &log);
	if (st)
		fail_msg("ptxas:\n%.3000s", log ? log : "");
	free(log);
	free(text);
}

static size_t count_of(const char *text, const char *needle)
{
	size_t n = 0;
	for (const char *s = strstr(text, needle); s; s = strstr(s + 1, needle))
		n++;
	return n;
}

/* Instructions 0-6 of a program that looks key 3 up in map 0 (r0 = its
 * value) and jumps `skip` ahead when it is missing; returns 7. */
static size_t put_lookup_key3(struct isa_insn *insns, int16_t skip)
{
	size_t n = 0;

	insns[n++] = (struct isa_insn){ISA_OPC_ST_W, ISA_REG_FP, 0, -4, 3};
	insns[n++] = (struct isa_insn){ISA_OPC_ALU64_MOV_X, 2, ISA_REG_FP, 0, 0};
	insns[n++] = (struct isa_insn){ISA_OPC_ALU64_ADD_K, 2, 0, 0, -4};
	insns[n++] = (struct isa_insn){ISA_OPC_LD_IMM64, 1, ISA_PSEUDO_MAP_FD, 0, 0};
	insns[n++] = (struct isa_insn){0, 0, 0, 0, 0};
	insns[n++] = (struct isa_insn){ISA_OPC_JMP_CALL, 0, ISA_CALL_HELPER, 0,
					HELPER_MAP_LOOKUP_ELEM};
	insns[n++] = (struct isa_insn){ISA_OPC_JMP_JEQ_K, 0, 0, skip, 0};
	return n;
}

/*
 * Lookups in arrays whose geometry is known, named by a constant map
 * reference, are address arithmetic (bounds check against max_entries,
 * per-SM copy by %smid); a hash map, an array without geometry and a
 * reference that reaches the call through a jump target still call the
 * runtime.  An atomic add without the fetch flag is a red.  ptxas accepts
 * the module as an entry probe for sm_75 and sm_90.
 */
static void test_array_lookup_inline(void **state)
{
	struct isa_insn insns[64];
	size_t n = 0;
	struct ptx_map_ref refs[4] = {
		{0x7000000000, 0x7000000080, MAP_TYPE_ARRAY, 16, 16, 1, 0, 0},
		{0x7100000000, 0x7100000080, MAP_TYPE_PERCPU_ARRAY, 4, 8, 132, 128, 0},
		{0x7200000000, 0, MAP_TYPE_HASH, 64, 0, 1, 0, 0},
		{.map = 0x7300000000, .value = 0x7300000080}, /* no geometry */
	};
	struct ptx_emit_opts o = {.maps = refs};
	struct map *maps[4] = {NULL, NULL, NULL, NULL};
	static const char *const targets[] = {"sm_75", "sm_90"};

	if (access(PTXAS, X_OK))
		skip();
#define I(c, d, s, o_, i) insns[n++] = (struct isa_insn){c, d, s, o_, i}
#define KEY() I(ISA_OPC_ALU64_MOV_X, 2, ISA_REG_FP, 0, 0), I(ISA_OPC_ALU64_ADD_K, 2, 0, 0, -4)
#define MAP(r, m) I(ISA_OPC_LD_IMM64, r, ISA_PSEUDO_MAP_FD, 0, m), I(0, 0, 0, 0, 0)
#define LOOKUP() I(ISA_OPC_JMP_CALL, 0, ISA_CALL_HELPER, 0, HELPER_MAP_LOOKUP_ELEM)
	I(ISA_OPC_ST_W, ISA_REG_FP, 0, -4, 3);
	KEY();
	MAP(1, 0);
	LOOKUP();                                       /* inline: array */
	I(ISA_OPC_JMP_JEQ_K, 0, 0, 2, 0);
	I(ISA_OPC_ALU64_MOV_K, 1, 0, 0, 1);
	I(ISA_OPC_ATOMIC_DW, 0, 1, 0, ISA_ATOMIC_ADD); /* red */
	KEY();
	MAP(6, 1);
	I(ISA_OPC_ALU64_MOV_X, 1, 6, 0, 0);
	LOOKUP();                                       /* inline: per-SM, via a copy */
	I(ISA_OPC_JMP_JEQ_K, 0, 0, 2, 0);
	I(ISA_OPC_ALU64_MOV_K, 1, 0, 0, 1);
	I(ISA_OPC_ATOMIC_DW, 0, 1, 8, ISA_ATOMIC_ADD | ISA_FETCH); /* atom */
	KEY();
	MAP(1, 2);
	LOOKUP();                                       /* runtime: hash */
	KEY();
	MAP(1, 3);
	LOOKUP();                                       /* runtime: no geometry */
	KEY();
	MAP(1, 0);
	I(ISA_OPC_JMP_JA, 0, 0, 0, 0);
	LOOKUP();                                       /* runtime: after a jump target */
	KEY();
	MAP(1, 0);
	I(ISA_OPC_ALU64_ADD_K, 1, 0, 0, 0);
	LOOKUP();                                       /* runtime: r1 computed */
	I(ISA_OPC_ALU64_MOV_K, 0, 0, 0, 0);
	I(ISA_OPC_JMP_EXIT, 0, 0, 0, 0);
#undef LOOKUP
#undef MAP
#undef KEY
#undef I
	struct prog p = test_prog("lookups", insns, n);
	p.maps = maps;
	p.map_cnt = 4;
	for (size_t k = 0; k < sizeof(targets) / sizeof(targets[0]); k++) {
		struct ptx_buf prog = {0};
		struct ptx_target t;
		struct err e = {{0}};
		char sym[128];

		assert_int_equal(ptx_target_parse(targets[k], &t, NULL), 0);
		if (ptx_emit_prog(&prog, &p, &o, sym, &e))
			fail_msg("%s", e.msg);
		assert_int_equal(count_of(prog.text, "map_lookup_elem, inline"), 2);
		assert_int_equal(count_of(prog.text, "call.uni (rq), gx_rt_map_lookup"), 4);
		assert_non_null(strstr(prog.text, "setp.lt.u32 %p0, %h0, 16;"));
		assert_non_null(strstr(prog.text, "add.s64 %t0, %t0, 0x7000000080;"));
		assert_non_null(strstr(prog.text, "setp.lt.u32 %p0, %h0, 4;"));
		/* the NULL tests right after the two inline lookups test their
		 * bounds predicate, not r0 */
		assert_int_equal(count_of(prog.text, "@!%p0 bra L"), 2);
		assert_int_equal(count_of(prog.text, "setp.eq.u64 %p0, %r0,"), 0);
		/* the SM's copy: read once at the start, min(%smid, copies - 1) */
		assert_int_equal(count_of(prog.text, "min.u32 %sm, %sm, 131;"), 1);
		assert_non_null(strstr(prog.text, "mul.wide.u32 %t1, %sm, 128;"));
		/* the values of arrays in device memory: global atomics */
		assert_int_equal(count_of(prog.text, "red.global.add.u64 [%t1], %t0;"), 1);
		assert_int_equal(count_of(prog.text, "atom.global.add.u64 %t2, [%t1], %t0;"), 1);
		assert_probe_assembles(&prog, sym, &t, targets[k], PTX_PROBE_ENTRY);
		ptx_buf_free(&prog);
	}
}

/*
 * bpf_gpu_atomic_max on an array value (in device memory: .global, or a
 * block-local array's shared memory at %sa1): a red where r0 is written
 * before it is read after the call (nothing waits for the update), an
 * atom where it is read (here by an add); on a pointer ptx_stack does not
 * follow (a map's device address, unverified), a generic atom.  ptxas accepts the device-memory module as
 * an exit probe for sm_75 and sm_90.
 */
static void atomic_max_emit(uint32_t type, const char *sp, const char *reg, int compile)
{
	struct isa_insn insns[32];
	size_t n = 0;
	struct ptx_map_ref ref = {0x7000000000, 0x7000000080, type, 16, 16, 1, 0, 0};
	struct ptx_emit_opts o = {.maps = &ref};
	struct map *maps[1] = {NULL};
	static const char *const targets[] = {"sm_75", "sm_90"};
	char want[128];

#define I(c, d, s, o_, i) insns[n++] = (struct isa_insn){c, d, s, o_, i}
	n = put_lookup_key3(insns, 9);
	I(ISA_OPC_ALU64_MOV_X, 6, 0, 0, 0);
	I(ISA_OPC_ALU64_MOV_X, 1, 0, 0, 0);
	I(ISA_OPC_ALU64_ADD_K, 1, 0, 0, 8);
	I(ISA_OPC_ALU64_MOV_K, 2, 0, 0, 5);
	I(ISA_OPC_JMP_CALL, 0, ISA_CALL_HELPER, 0, HELPER_GPU_ATOMIC_MAX); /* r0 dead: red */
	I(ISA_OPC_ALU64_MOV_X, 1, 6, 0, 0);
	I(ISA_OPC_ALU64_MOV_K, 2, 0, 0, 9);
	I(ISA_OPC_JMP_CALL, 0, ISA_CALL_HELPER, 0, HELPER_GPU_ATOMIC_MAX); /* r0 read: atom */
	I(ISA_OPC_ALU64_ADD_K, 0, 0, 0, 1);
	I(ISA_OPC_JMP_EXIT, 0, 0, 0, 0);
	I(ISA_OPC_LD_IMM64, 1, ISA_PSEUDO_MAP_FD, 0, 0); /* unreached: a map's address */
	I(0, 0, 0, 0, 0);
	I(ISA_OPC_ALU64_MOV_K, 2, 0, 0, 1);
	I(ISA_OPC_JMP_CALL, 0, ISA_CALL_HELPER, 0, HELPER_GPU_ATOMIC_MAX);
	I(ISA_OPC_JMP_EXIT, 0, 0, 0, 0);
#undef I
	struct prog p = test_prog("maxes", insns, n);
	p.maps = maps;
	p.map_cnt = 1;
	for (size_t k = 0; k < (compile ? 2 : 1); k++) {
		struct ptx_buf prog = {0};
		struct ptx_target t;
		struct err e = {{0}};
		char sym[128];

		assert_int_equal(ptx_target_parse(targets[k], &t, NULL), 0);
		if (ptx_emit_prog(&prog, &p, &o, sym, &e))
			fail_msg("%s", e.msg);
		snprintf(want, sizeof(want), "\tred%s.max.u64 [%s1], %%r2;\n", sp, reg);
		assert_int_equal(count_of(prog.text, want), 1);
		snprintf(want, sizeof(want), "\tatom%s.max.u64 %%r0, [%s1], %%r2;\n", sp, reg);
		assert_int_equal(count_of(prog.text, want), 1);
		assert_int_equal(count_of(prog.text, "\tatom.max.u64 %r0, [%r1], %r2;\n"), 1);
		/* the frame is registers: no generic address can be the stack
		 * (test_helpers_and_probes_assemble has the stack's path) */
		assert_int_equal(count_of(prog.text, "isspacep.local"), 0);
		if (compile)
			assert_probe_assembles(&prog, sym, &t, targets[k], PTX_PROBE_EXIT);
		ptx_buf_free(&prog);
	}
}

static void test_atomic_max(void **state)
{
	if (access(PTXAS, X_OK))
		skip();
	atomic_max_emit(MAP_TYPE_ARRAY, ".global", "%r", 1);
	atomic_max_emit(MAP_TYPE_GPU_BLOCK_ARRAY, ".shared", "%sa", 0);
}

/*
 * Loads and stores through an inline array lookup's result are .global
 * (an array in device memory) or .shared at the pointer's shared-window
 * address %saN (a block-local array: no cvta at the access), and need no
 * alignment test where the address is known mod 8 (the value is 8-aligned;
 * constants added, or a scalar whose low 3 bits are known 0: a masked index
 * shifted by 4): the byte-by-byte fallback (label Lu<insn>) is written only
 * for the access at a misaligned constant offset and the one after a
 * variable offset of unknown alignment.
 */
static void map_value_access(uint32_t type, const char *sp, const char *reg)
{
	struct isa_insn insns[32];
	size_t n = 0;
	struct ptx_map_ref ref = {0x7000000000, 0x7000000080, type, 16, 16, 1, 0, 0};
	struct ptx_emit_opts o = {.maps = &ref};
	struct map *maps[1] = {NULL};
	struct ptx_buf prog = {0};
	struct err e = {{0}};
	char want[128];

#define I(c, d, s, o_, i) insns[n++] = (struct isa_insn){c, d, s, o_, i}
	n = put_lookup_key3(insns, 13);
	I(ISA_OPC_LDX_DW, 1, 0, 8, 0);         /* 7: aligned */
	I(ISA_OPC_STX_W, 0, 1, 4, 0);          /* 8: aligned */
	I(ISA_OPC_ALU64_MOV_X, 6, 0, 0, 0);
	I(ISA_OPC_ALU64_ADD_K, 6, 0, 0, 2);
	I(ISA_OPC_LDX_H, 3, 6, 2, 0);          /* 11: r0 + 4, aligned */
	I(ISA_OPC_LDX_DW, 3, 0, 4, 0);         /* 12: r0 + 4, 8 bytes: tested */
	I(ISA_OPC_ALU64_MOV_X, 7, 1, 0, 0);
	I(ISA_OPC_ALU64_AND_K, 7, 0, 0, 15);
	I(ISA_OPC_ALU64_LSH_K, 7, 0, 0, 4);
	I(ISA_OPC_ALU64_ADD_X, 7, 0, 0, 0);    /* r0 + (x & 15) x 16 */
	I(ISA_OPC_LDX_DW, 8, 7, 8, 0);         /* 17: aligned */
	I(ISA_OPC_ALU64_ADD_X, 6, 1, 0, 0);
	I(ISA_OPC_LDX_W, 4, 6, 0, 0);          /* 19: variable offset: tested */
	I(ISA_OPC_ALU64_MOV_K, 0, 0, 0, 0);
	I(ISA_OPC_JMP_EXIT, 0, 0, 0, 0);
#undef I
	struct prog p = test_prog("values", insns, n);
	p.maps = maps;
	p.map_cnt = 1;
	if (ptx_emit_prog(&prog, &p, &o, NULL, &e))
		fail_msg("%s", e.msg);
#define WANT(fmt, ...)                                                      \
	do {                                                                \
		snprintf(want, sizeof(want), fmt, __VA_ARGS__);             \
		if (!strstr(prog.text, want))                               \
			fail_msg("want '%s' in:\n%s", want, prog.text);     \
	} while (0)
	WANT("\tld%s.u64 %%r1, [%s0+8];\n\tst%s.u32 [%s0+4], %%r1;\n", sp, reg, sp, reg);
	WANT("\tld%s.u16 %%r3, [%s6+2];\n", sp, reg);
	WANT("\tld%s.u64 %%r8, [%s7+8];\n", sp, reg);
#undef WANT
	assert_int_equal(count_of(prog.text, "misaligned"), 2);
	assert_non_null(strstr(prog.text, "Lu12: // misaligned"));
	assert_non_null(strstr(prog.text, "Lu19: // misaligned"));
	assert_int_equal(count_of(prog.text, "\tld.u"), 0); /* every access in its space */
	assert_int_equal(count_of(prog.text, "cvta.to"), 0);
	ptx_buf_free(&prog);
}

static void test_map_value_access(void **state)
{
	map_value_access(MAP_TYPE_ARRAY, ".global", "%r");
	map_value_access(MAP_TYPE_GPU_BLOCK_ARRAY, ".shared", "%sa");
}

/* Instruction builders of the two lookup tests: insns[n++], and an inline
 * lookup of map 0 with its key in reg, stored at fp + at, r0 the element. */
#define I(c, d, s, o_, i) insns[n++] = (struct isa_insn){c, d, s, o_, i}
#define LOOKUP(reg, at)                                                                  \
	I(ISA_OPC_STX_W, ISA_REG_FP, reg, at, 0), I(ISA_OPC_ALU64_MOV_X, 2, ISA_REG_FP, 0, 0), \
		I(ISA_OPC_ALU64_ADD_K, 2, 0, 0, at), I(ISA_OPC_LD_IMM64, 1, ISA_PSEUDO_MAP_FD, 0, 0), \
		I(0, 0, 0, 0, 0), I(ISA_OPC_JMP_CALL, 0, ISA_CALL_HELPER, 0, HELPER_MAP_LOOKUP_ELEM)

/* insns[0..n) translated with map 0 an array of 16 x 16 bytes at a known
 * address, into *prog (the test fails on an error). */
static void emit_with_array16_at(struct isa_insn *insns, size_t n, const char *name,
				 uint64_t value, const char *map_table, int low_word,
				 struct ptx_buf *prog)
{
	struct ptx_map_ref ref = {value & ~0xffffull, value, MAP_TYPE_ARRAY, 16, 16, 1, 0, 0};
	struct ptx_emit_opts o = {.maps = &ref, .map_table = map_table, .elem_low_word = low_word};
	struct map *maps[1] = {NULL};
	struct err e = {{0}};
	struct prog p = test_prog(name, insns, n);
	p.maps = maps;
	p.map_cnt = 1;
	if (ptx_emit_prog(prog, &p, &o, NULL, &e))
		fail_msg("%s", e.msg);
}

static void emit_with_array16(struct isa_insn *insns, size_t n, const char *name,
			      struct ptx_buf *prog)
{
	emit_with_array16_at(insns, n, name, 0x7000000080, NULL, 0, prog);
}

/*
 * With elem_low_word, an inline lookup of an array whose values' address
 * is an immediate adds the element's offset to the low word alone where no
 * element is past a 4 GiB line from it; an array that crosses one, or
 * whose address comes from the map table, gets the 64-bit add, and so does
 * every lookup without elem_low_word.
 */
static void test_array_elem_low_word(void **state)
{
	struct isa_insn insns[16];
	size_t n = put_lookup_key3(insns, 0);
	struct ptx_buf prog = {0};

	insns[n++] = (struct isa_insn){ISA_OPC_ALU64_MOV_K, 0, 0, 0, 0};
	insns[n++] = (struct isa_insn){ISA_OPC_JMP_EXIT, 0, 0, 0, 0};
	emit_with_array16_at(insns, n, "low", 0x7000000080, NULL, 1, &prog);
	assert_int_equal(count_of(prog.text, "mad.lo.u32 %h1, %h0, 16, 0x80;\n"
					     "\tmov.b64 %t0, {%h1, 0x70};"), 1);
	assert_int_equal(count_of(prog.text, "mul.wide.u32 %t0"), 0);
	ptx_buf_free(&prog);
	/* 16 x 16 bytes from 0xffffff00: the last element ends at the line */
	emit_with_array16_at(insns, n, "edge", 0x70ffffff00, NULL, 1, &prog);
	assert_int_equal(count_of(prog.text, "mad.lo.u32 %h1, %h0, 16, 0xffffff00;"), 1);
	ptx_buf_free(&prog);
	emit_with_array16_at(insns, n, "crossing", 0x70ffffff80, NULL, 1, &prog);
	assert_int_equal(count_of(prog.text, "mad.lo.u32 %h1"), 0);
	assert_int_equal(count_of(prog.text, "mul.wide.u32 %t0, %h0, 16;\n"
					     "\tadd.s64 %t0, %t0, 0x70ffffff80;"), 1);
	ptx_buf_free(&prog);
	emit_with_array16_at(insns, n, "table", 0x7000000080, "gx_map_table", 1, &prog);
	assert_int_equal(count_of(prog.text, "mad.lo.u32 %h1"), 0);
	assert_int_equal(count_of(prog.text, "ld.const.u64 %t2, [gx_map_table+8];"), 1);
	ptx_buf_free(&prog);
	emit_with_array16_at(insns, n, "not asked", 0x7000000080, NULL, 0, &prog);
	assert_int_equal(count_of(prog.text, "mad.lo.u32 %h1"), 0);
	assert_int_equal(count_of(prog.text, "add.s64 %t0, %t0, 0x7000000080;"), 1);
	ptx_buf_free(&prog);
}

/*
 * An inline lookup whose key ptx_stack proves below max_entries (a masked
 * value stored to the frame) has no bounds test and no NULL test after
 * it; a key masked to more than the array holds keeps both, and so does a
 * loop counter (its bound is dropped after a few turns: the analysis ends).
 */
static void test_lookup_key_range(void **state)
{
	struct isa_insn insns[48];
	size_t n = 0;
	struct ptx_buf prog = {0};

	I(ISA_OPC_LDX_W, 6, 1, 0, 0);       /* anything of 32 bits */
	I(ISA_OPC_ALU64_MOV_X, 7, 6, 0, 0);
	I(ISA_OPC_ALU64_AND_K, 6, 0, 0, 15); /* 0..15: in range */
	LOOKUP(6, -4);
	I(ISA_OPC_JMP_JEQ_K, 0, 0, 0, 0);
	I(ISA_OPC_ALU64_AND_K, 7, 0, 0, 31); /* 0..31: not */
	LOOKUP(7, -8);
	I(ISA_OPC_JMP_JEQ_K, 0, 0, 0, 0);
	I(ISA_OPC_ALU64_MOV_K, 8, 0, 0, 0);
	I(ISA_OPC_ALU64_ADD_K, 8, 0, 0, 1);  /* a loop: 1, 2, ... */
	I(ISA_OPC_JMP_JLT_K, 8, 0, -2, 10);
	LOOKUP(8, -12);
	I(ISA_OPC_JMP_JEQ_K, 0, 0, 0, 0);
	I(ISA_OPC_ALU64_MOV_K, 0, 0, 0, 0);
	I(ISA_OPC_JMP_EXIT, 0, 0, 0, 0);
	emit_with_array16(insns, n, "ranges", &prog);
	assert_int_equal(count_of(prog.text, "array of 16 x 16 bytes, key in range"), 1);
	assert_int_equal(count_of(prog.text, "setp.lt.u32 %p0, %h0, 16;"), 2);
	assert_int_equal(count_of(prog.text, "@!%p0 bra L"), 2);
	ptx_buf_free(&prog);
}

/*
 * The NULL test after an inline lookup is found through register copies
 * (clang moves the element to a callee-saved register before `if (!v)`,
 * and may set a constant aside in between):
 * none where the key is in range, %p0 where it is not; a test of anything
 * else derived from the element (here element + 8) stays a 64-bit compare.
 */
static void test_lookup_null_test_on_copy(void **state)
{
	struct isa_insn insns[48];
	size_t n = 0;
	struct ptx_buf prog = {0};

	I(ISA_OPC_LDX_W, 6, 1, 0, 0);
	I(ISA_OPC_ALU64_AND_K, 6, 0, 0, 15); /* in range */
	LOOKUP(6, -4);
	I(ISA_OPC_ALU64_MOV_X, 7, 0, 0, 0);
	I(ISA_OPC_JMP_JEQ_K, 7, 0, 0, 0);
	I(ISA_OPC_ALU64_MOV_X, 6, 7, 0, 0);
	I(ISA_OPC_ALU64_AND_K, 6, 0, 0, 31); /* not */
	LOOKUP(6, -8);
	I(ISA_OPC_ALU64_MOV_X, 8, 0, 0, 0);
	I(ISA_OPC_ALU64_MOV_K, 1, 0, 0, 1); /* a constant set aside */
	I(ISA_OPC_ALU64_MOV_X, 9, 8, 0, 0);
	I(ISA_OPC_JMP_JNE_K, 9, 0, 0, 0);
	I(ISA_OPC_ALU64_AND_K, 6, 0, 0, 15);
	LOOKUP(6, -12);
	I(ISA_OPC_ALU64_MOV_X, 7, 0, 0, 0);
	I(ISA_OPC_ALU64_ADD_K, 7, 0, 0, 8); /* not a copy */
	I(ISA_OPC_JMP_JEQ_K, 7, 0, 0, 0);
	I(ISA_OPC_ALU64_MOV_K, 0, 0, 0, 0);
	I(ISA_OPC_JMP_EXIT, 0, 0, 0, 0);
	emit_with_array16(insns, n, "copies", &prog);
	assert_int_equal(count_of(prog.text, "key in range"), 2);
	/* the jne on the copy's copy tests the bounds' %p0; element + 8 is
	 * compared (and branches on the compare's %p0) */
	assert_int_equal(count_of(prog.text, "@%p0 bra L"), 2);
	assert_int_equal(count_of(prog.text, "setp.eq.u64 %p0, %r7, 0;"), 1);
	assert_int_equal(count_of(prog.text, ".u64 %p0, %r"), 1);
	ptx_buf_free(&prog);
}
#undef LOOKUP
#undef I

static void expect_error(struct isa_insn *insns, size_t n, const char *msg)
{
	struct prog p = test_prog("bad", insns, n);
	struct ptx_buf b = {0};
	struct err e = {{0}};

	assert_true(ptx_emit_prog(&b, &p, NULL, NULL, &e) < 0);
	if (!strstr(e.msg, msg))
		fail_msg("expected '%s' in '%s'", msg, e.msg);
	ptx_buf_free(&b);
}

static void test_errors_name_the_instruction(void **state)
{
	struct isa_insn helper[] = {{ISA_OPC_JMP_CALL, 0, 0, 0, 16}, {ISA_OPC_JMP_EXIT, 0, 0, 0, 0}};
	expect_error(helper, 2, "insn 0: helper 16 is not available on the GPU");
	struct isa_insn jump[] = {{ISA_OPC_JMP_JA, 0, 0, 5, 0}, {ISA_OPC_JMP_EXIT, 0, 0, 0, 0}};
	expect_error(jump, 2, "insn 0: jump target 6 outside the program");
	struct isa_insn cross[] = {{ISA_OPC_JMP_CALL, 0, 1, 0, 1},
				   {ISA_OPC_JMP_JA, 0, 0, 1, 0},
				   {ISA_OPC_JMP_EXIT, 0, 0, 0, 0},
				   {ISA_OPC_JMP_EXIT, 0, 0, 0, 0}};
	expect_error(cross, 4, "insn 1: jump to 3 leaves the function");
	struct isa_insn map[] = {{ISA_OPC_LD_IMM64, 1, 1, 0, 3}, {0}, {ISA_OPC_JMP_EXIT, 0, 0, 0, 0}};
	expect_error(map, 3, "insn 0: map index 3, the program has 0 maps");
	struct isa_insn kf[] = {{ISA_OPC_JMP_CALL, 0, 2, 0, 1}, {ISA_OPC_JMP_EXIT, 0, 0, 0, 0}};
	expect_error(kf, 2, "kfunc");
	expect_error(helper, 0, "no instructions");
}

static void test_targets(void **state)
{
	struct ptx_target t;
	struct err e = {{0}};
	char name[16];

	assert_int_equal(ptx_target_parse("sm_75", &t, &e), 0);
	assert_int_equal(t.isa_major * 10 + t.isa_minor, 78);
	assert_int_equal(ptx_target_parse("sm_90a", &t, &e), 0);
	assert_string_equal(ptx_target_name(&t, name, sizeof(name)), "sm_90a");
	assert_int_equal(ptx_target_parse("sm_120", &t, &e), 0);
	assert_int_equal(t.isa_major * 10 + t.isa_minor, 87);
	assert_true(ptx_target_parse("sm_70", &t, &e) < 0);
	assert_non_null(strstr(e.msg, "sm_75 or newer"));
	ptx_target_from_cc(9, 0, &t);
	assert_int_equal(t.sm, 90);
}

/* Every target family gets a .version its ptxas accepts (small module). */
static void test_every_target_assembles(void **state)
{
	static const char *targets[] = {"sm_80", "sm_86", "sm_89", "sm_90a", "sm_100", "sm_100f",
					"sm_103", "sm_110", "sm_120", "sm_121"};
	struct isa_insn insns[] = {{ISA_OPC_ALU64_MOV_K, 0, 0, 0, 3},
				   {ISA_OPC_ATOMIC_DW, 1, 0, 0, ISA_ATOMIC_ADD | ISA_FETCH},
				   {ISA_OPC_JMP_EXIT, 0, 0, 0, 0}};
	char *log = NULL;

	if (access(PTXAS, X_OK))
		skip();
	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		struct ptx_target t;
		struct ptx_buf b = {0};
		struct prog p = test_prog("tiny", insns, 3);
		char sym[128];
		assert_int_equal(ptx_target_parse(targets[i], &t, NULL), 0);
		ptx_emit_header(&b, &t);
		assert_int_equal(ptx_emit_prog(&b, &p, NULL, sym, NULL), 0);
		ptx_emit_run_kernel(&b, sym);
		size_t len;
		char *text = ptx_buf_take(&b, &len);
		if (run_ptxas(text, len, targets[i], &log))
			fail_msg("%s: %s", targets[i], log ? log : "");
		free(log);
		free(text);
	}
}

static void test_gpu_helper_protos(void **state)
{
	const struct helper_proto *p = ptx_helper_proto_find(500);
	assert_non_null(p);
	assert_string_equal(p->name, "gpu_active_mask");
	assert_true(p->flags & HELPER_F_GPU);
	assert_non_null(ptx_helper_proto_find(HELPER_MAP_LOOKUP_ELEM));
	assert_null(ptx_helper_proto_find(HELPER_GET_CURRENT_PID_TGID));
	assert_null(ptx_helper_proto_find(599));
	/* the table is sorted (binary search) and every entry is GPU-only code */
	for (uint32_t id = 0, last = 0; id < 1024; id++) {
		const struct ptx_helper *h = ptx_helper_find(id);
		if (!h)
			continue;
		assert_true(h->proto.id >= last);
		last = h->proto.id;
		assert_null(h->proto.fn);
		/* a runtime function for each, but the launch id, the atomic
		 * maximum and the block index (inline only) */
		assert_true((h->rt_func != NULL) == (id != HELPER_GPU_LAUNCH_ID &&
						     id != HELPER_GPU_ATOMIC_MAX &&
						     id != HELPER_GPU_BLOCK_INDEX));
	}
}

/*
 * bpf_gpu_launch_id(): inline in function 0 it reads the register the
 * options name; in a callee or a mem probe it is refused naming the
 * instruction; with no launch (no option: `gpuext ptx`) it is 0.
 */
static void test_launch_id(void **state)
{
	struct isa_insn main_only[] = {
		{ISA_OPC_JMP_CALL, 0, ISA_CALL_HELPER, 0, HELPER_GPU_LAUNCH_ID},
		{ISA_OPC_JMP_EXIT, 0, 0, 0, 0},
	};
	struct isa_insn in_callee[] = {
		{ISA_OPC_JMP_CALL, 0, ISA_CALL_LOCAL, 0, 1},
		{ISA_OPC_JMP_EXIT, 0, 0, 0, 0},
		{ISA_OPC_JMP_CALL, 0, ISA_CALL_HELPER, 0, HELPER_GPU_LAUNCH_ID},
		{ISA_OPC_JMP_EXIT, 0, 0, 0, 0},
	};
	struct prog p = test_prog("lid", main_only, 2), q = test_prog("lid2", in_callee, 4);
	struct ptx_buf b = {0}, site = {0};
	struct ptx_emit_opts o = {.launch_id = "%gxl_id"};
	struct err e = {{0}};

	assert_int_equal(ptx_emit_probe_inline(&b, &site, &p, &o, PTX_PROBE_EXIT, &e), 0);
	assert_non_null(strstr(site.text, "mov.b64 %r0, %gxl_id;"));
	assert_int_equal(ptx_emit_probe_inline(&b, &site, &q, &o, PTX_PROBE_EXIT, &e), -ENOTSUP);
	assert_non_null(strstr(e.msg, "insn 2: bpf_gpu_launch_id() is only available in"));
	char sym[128];
	assert_int_equal(ptx_emit_mem_probe(&b, &b, NULL, &p, &o, sym, NULL, &e), -ENOTSUP);
	assert_non_null(strstr(e.msg, "insn 0: bpf_gpu_launch_id()"));
	ptx_buf_free(&b);
	assert_int_equal(ptx_emit_prog(&b, &q, NULL, sym, &e), 0);
	assert_non_null(strstr(b.text, "mov.b64 %r0, 0;\n"));
	ptx_buf_free(&b);
	ptx_buf_free(&site);
}

/*
 * bpf_gpu_block_index(): inline in function 0 it reads the register the
 * options name (the injector's, computed once per thread); in a callee,
 * and with no register, it is computed from %ctaid and %nctaid.
 */
static void test_block_index(void **state)
{
	struct isa_insn insns[] = {
		{ISA_OPC_JMP_CALL, 0, ISA_CALL_HELPER, 0, HELPER_GPU_BLOCK_INDEX},
		{ISA_OPC_ALU64_MOV_X, 6, 0, 0, 0},
		{ISA_OPC_JMP_CALL, 0, ISA_CALL_LOCAL, 0, 1},
		{ISA_OPC_JMP_EXIT, 0, 0, 0, 0},
		{ISA_OPC_JMP_CALL, 0, ISA_CALL_HELPER, 0, HELPER_GPU_BLOCK_INDEX},
		{ISA_OPC_JMP_EXIT, 0, 0, 0, 0},
	};
	struct prog p = test_prog("bix", insns, 6);
	struct ptx_buf b = {0}, site = {0};
	struct ptx_emit_opts o = {.block_index = "%gxk_block"};
	struct err e = {{0}};

	assert_int_equal(ptx_emit_probe_inline(&b, &site, &p, &o, PTX_PROBE_EXIT, &e), 0);
	assert_int_equal(count_of(site.text, "mov.b64 %r0, %gxk_block;"), 1);
	/* the callee (a .func of b) computes it */
	assert_int_equal(count_of(site.text, "%ctaid.z"), 0);
	assert_int_equal(count_of(b.text, "mov.u32 %h0, %ctaid.z;"), 1);
	assert_non_null(strstr(b.text, "mul.wide.u32 %r0, %h0, %h1;"));
	ptx_buf_free(&b);
	ptx_buf_free(&site);
	char sym[128];
	assert_int_equal(ptx_emit_prog(&b, &p, NULL, sym, &e), 0);
	assert_int_equal(count_of(b.text, "%gxk_block"), 0);
	assert_int_equal(count_of(b.text, "mov.u32 %h0, %ctaid.z;"), 2);
	ptx_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conformance_sm75),
		cmocka_unit_test(test_conformance_sm90),
		cmocka_unit_test(test_helpers_and_probes_assemble),
		cmocka_unit_test(test_array_lookup_inline),
		cmocka_unit_test(test_map_value_access),
		cmocka_unit_test(test_atomic_max),
		cmocka_unit_test(test_array_elem_low_word),
		cmocka_unit_test(test_lookup_key_range),
		cmocka_unit_test(test_lookup_null_test_on_copy),
		cmocka_unit_test(test_errors_name_the_instruction),
		cmocka_unit_test(test_targets),
		cmocka_unit_test(test_every_target_assembles),
		cmocka_unit_test(test_gpu_helper_protos),
		cmocka_unit_test(test_launch_id),
		cmocka_unit_test(test_block_index),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
