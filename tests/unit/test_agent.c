/* SPDX-License-Identifier: MIT */
/*
 * The agent with the fake driver (tests/fakecuda): tests/fakecuda/app runs
 * under `gpuext run` (or with the agent preloaded by hand) and the fake
 * driver's log shows which module every launch ran:
 *   - interposition on every path (exported symbols, cuGetProcAddress_v2
 *     with and without per-thread flags, dlsym, CUkernel as CUfunction):
 *     the JIT linker's PTX inputs, graph kernel nodes: every launch of the targeted kernel
 *     runs the instrumented module, the
 *     untargeted kernel its original one; ptxas accepts the instrumented PTX;
 *   - fail-open: each injected failure leaves the app running the original
 *     kernels, exit status 0, with exactly one "gpuext: " message.
 * The plain agent build is used under ASan too (an ASan agent cannot be
 * preloaded into a program without the ASan runtime).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#define APP "build/fakecuda/app"
#define RTAPP "build/fakecuda/rtapp"
#define AGENT "build/libgpuext-agent.so"
#define PROG "build/bpf/examples/gpu_warp_count.bpf.o"
#define PTX "tests/ptx_corpus/checked.compute_75.ptx"
#define PTXAS "/usr/local/cuda/bin/ptxas"
#define NVLINK "/usr/local/cuda/bin/nvlink"

struct launches {
	int targeted, targeted_inst, other, other_inst;
	int inst_mod; /* module id of the instrumented module, 0: none */
	int ptxas_status; /* of ptxas (and nvlink) on the instrumented PTX; -1: not run */
	int linked;       /* the instrumented PTX declares the runtime, to be linked */
	int table_fills;  /* the agent's lookups of an instrumented module's map table */
	/* the form of mem probes in the module of each vec_add launch, in
	 * order: 'c' called, 'p' pasted, '-' neither (agent_tier.c) */
	char vec_forms[32];
	int snapshots; /* device-to-host copies on a stream (the mirror's snapshots) */
	/* instrumented modules with the maps' table / with immediates of the
	 * arena's addresses (GPUEXT_MAP_VA or its default) */
	int with_table, with_va;
	char va[32]; /* the address of the last "vmm reserve" */
};

/* Run cmd (with FAKECUDA_* set to a fresh log/dump dir); output and status. */
static char *run(const char *env, const char *cmd, int *status, struct launches *l)
{
	char dir[] = "/tmp/gpuext-agent-test-XXXXXX", full[4096], log[600];
	assert_non_null(mkdtemp(dir));
	snprintf(log, sizeof(log), "%s/log", dir);
	snprintf(full, sizeof(full), "FAKECUDA_LOG=%s FAKECUDA_DUMP=%s GPUEXT_AGENT=%s %s %s",
		 log, dir, AGENT, env, cmd);
	char *out = test_run_cmd(full, status);
	assert_non_null(out);
	memset(l, 0, sizeof(*l));
	FILE *f = fopen(log, "r");
	char line[1024];
	int inst_mods[16] = {0}, n_inst = 0;
	char forms[64];
	size_t n_vec = 0;
	memset(forms, '-', sizeof(forms));
	while (f && fgets(line, sizeof(line), f)) {
		int mod;
		char name[256], kind[16], path[512] = "";
		if (sscanf(line, "load %d %15s %*u %511s", &mod, kind, path) >= 2 && path[0]) {
			char *ptx = test_read_file(path, NULL);
			/* an instrumented kernel takes its launch id (gxi_lid) */
			int inst = ptx && strstr(ptx, "gxi_lid");
			l->with_table += inst && strstr(ptx, "gx_map_table") != NULL;
			l->with_va += inst && strstr(ptx, "0x0000200000000000") != NULL;
			if (inst && mod > 0 && mod < 64)
				/* pasted regions (which may also call the
				 * function where a warp's lanes are too few) */
				forms[mod] = strstr(ptx, "{ // mem probes of ") || !strstr(ptx, "_probe, (")
						     ? 'p'
						     : 'c';
			/* the election of an inline entry or exit probe */
			if (ptx && strstr(ptx, "activemask.b32 %gxp_m") && n_inst < 16) {
				inst_mods[n_inst++] = mod;
				l->inst_mod = mod;
				l->linked = strstr(ptx, ".extern .func") != NULL;
			}
			free(ptx);
		} else if (sscanf(line, "vmm reserve %31s", l->va) == 1) {
		} else if (!strncmp(line, "dtoh async ", 11)) {
			l->snapshots++;
		} else if (sscanf(line, "global %d %255s", &mod, name) == 2) {
			l->table_fills += !strcmp(name, "gx_map_table");
		} else if (sscanf(line, "launch %255s %d", name, &mod) == 2) {
			int inst = 0;
			for (int i = 0; i < n_inst; i++)
				inst |= inst_mods[i] == mod;
			if (!strcmp(name, "vec_add") && n_vec + 1 < sizeof(l->vec_forms))
				l->vec_forms[n_vec++] = mod > 0 && mod < 64 ? forms[mod] : '-';
			if (!strcmp(name, "vec_add"))
				l->targeted++, l->targeted_inst += inst;
			else
				l->other++, l->other_inst += inst;
		}
	}
	if (f)
		fclose(f);
	l->ptxas_status = -1;
	if (l->inst_mod && access(PTXAS, X_OK) == 0 && !l->linked) {
		snprintf(full, sizeof(full), PTXAS " -arch=sm_90 %s/mod-%d.ptx -o /dev/null", dir,
			 l->inst_mod);
		free(test_run_cmd(full, &l->ptxas_status));
	} else if (l->inst_mod && access(PTXAS, X_OK) == 0 && access(NVLINK, X_OK) == 0) {
		/* what the driver's JIT linker does: compile, link with the runtime */
		snprintf(full, sizeof(full),
			 PTXAS " -c -arch=sm_90 %s/mod-%d.ptx -o %s/inst.o && " NVLINK
			       " -arch=sm_90 %s/inst.o build/gen/ptx_rt_dev.fatbin -o /dev/null",
			 dir, l->inst_mod, dir, dir);
		free(test_run_cmd(full, &l->ptxas_status));
	}
	snprintf(full, sizeof(full), "rm -rf %s", dir);
	free(test_run_cmd(full, NULL));
	return out;
}

static int count_lines(const char *out, const char *prefix)
{
	int n = 0;
	for (const char *p = out; p && *p;) {
		n += !strncmp(p, prefix, strlen(prefix));
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	return n;
}

static const char *gpuext_run_app(void)
{
	static char cmd[512];
	snprintf(cmd, sizeof(cmd), "%s run %s -- %s %s vec_add reduce_atomic", test_cli_path(),
		 PROG, APP, PTX);
	return cmd;
}

static void test_every_path_instrumented(void **state)
{
	struct launches l;
	int status;
	char *out = run("", gpuext_run_app(), &status, &l);
	assert_int_equal(status, 0);
	assert_non_null(strstr(out, "app ok"));
	assert_int_equal(count_lines(out, "gpuext: "), 0);
	/* vec_add: exported, proc-address flags 0 and per-thread, dlsym, CUkernel,
	 * linked cubin, graph nodes with a CUfunction and a CUkernel */
	assert_int_equal(l.targeted, 8);
	assert_int_equal(l.targeted_inst, 8);
	assert_int_equal(l.other, 2);
	assert_int_equal(l.other_inst, 0);
	/* the program's map helpers: linked from the prebuilt runtime */
	assert_int_equal(l.linked, 1);
	if (l.ptxas_status != -1)
		assert_int_equal(l.ptxas_status, 0);
	free(out);
}

/* An application still running 100 ms after its launches gets its maps
 * mirrored in the background, by copies on a stream of the agent's own
 * (snapshots that do not hold back the application's work); the copies at
 * exit are the legacy stream's, which wait for its kernels. */
static void test_mirror_snapshots_on_own_stream(void **state)
{
	struct launches l;
	int status;
	char *out = run("APP_LINGER_MS=350", gpuext_run_app(), &status, &l);
	assert_int_equal(status, 0);
	assert_non_null(strstr(out, "app ok"));
	assert_int_equal(l.targeted_inst, 8);
	assert_true(l.snapshots >= 1);
	free(out);
}

/* GPUEXT_AGENT_NO_PROBES (the recompile baseline of bench/gpu_overhead.sh):
 * the targeted kernel is recompiled and redirected, with no probe in it. */
static void test_no_probes_baseline(void **state)
{
	struct launches l;
	int status;
	char *out = run("GPUEXT_AGENT_NO_PROBES=1 GPUEXT_AGENT_VERBOSE=1", gpuext_run_app(),
			&status, &l);
	assert_int_equal(status, 0);
	assert_non_null(strstr(out, "app ok"));
	if (!strstr(out, "gpuext: kernel vec_add instrumented (") || !strstr(out, "no probes, cache off;"))
		fail_msg("no recompile notice in:\n%s", out);
	assert_int_equal(l.targeted, 8);
	assert_int_equal(l.targeted_inst, 0);
	assert_int_equal(l.inst_mod, 0);
	free(out);
}

/* Count the module cache's entries in dir. */
static int cache_entries(const char *dir)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "ls %s | grep -c '[.]gxc$'", dir);
	char *out = test_run_cmd(cmd, NULL);
	int n = out ? atoi(out) : -1;
	free(out);
	return n;
}

/* Run the app with the module cache in dir; expect every launch of vec_add
 * instrumented (linked runtime) and want in the agent's output. */
static void cached_run(const char *dir, const char *extra_env, const char *want)
{
	struct launches l;
	int status;
	char env[1024];
	snprintf(env, sizeof(env), "GPUEXT_CACHE_DISABLE=0 GPUEXT_CACHE_PATH=%s "
		 "GPUEXT_AGENT_VERBOSE=1 %s", dir, extra_env);
	char *out = run(env, gpuext_run_app(), &status, &l);
	assert_int_equal(status, 0);
	assert_non_null(strstr(out, "app ok"));
	if (!strstr(out, want))
		fail_msg("expected '%s' in:\n%s", want, out);
	assert_int_equal(l.targeted, 8);
	assert_int_equal(l.targeted_inst, 8);
	assert_int_equal(l.linked, 1);
	/* the code reads the maps' addresses from its table, filled at each
	 * load, cached or not: a cubin from another run fits this one */
	assert_int_equal(l.table_fills, 1);
	free(out);
}

/*
 * The module cache (src/ptx/ptx_cache.h): the first run compiles and stores,
 * the next loads the stored cubin; a corrupt entry, one the driver refuses,
 * or an unusable folder: a notice, compiled as without a cache, instrumented
 * all the same; other map addresses: another entry, never the old cubin.
 */
static void test_module_cache(void **state)
{
	char dir[] = "/tmp/gpuext-modcache-XXXXXX", sub[64], cmd[160], path[600];
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/c", dir);
	cached_run(sub, "", "cache miss, stored;");
	assert_int_equal(cache_entries(sub), 1);
	/* the next run: its maps elsewhere (the fake's heap), the PTX the same */
	cached_run(sub, "", "cache hit;");
	/* corrupt: the last byte of the cubin flipped */
	snprintf(cmd, sizeof(cmd), "ls %s/*.gxc", sub);
	char *ls = test_run_cmd(cmd, NULL);
	assert_non_null(ls);
	snprintf(path, sizeof(path), "%.*s", (int)strcspn(ls, "\n"), ls);
	free(ls);
	size_t len;
	unsigned char *b = (unsigned char *)test_read_file(path, &len);
	assert_non_null(b);
	b[len - 1] ^= 1;
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, len, f), len);
	fclose(f);
	free(b);
	cached_run(sub, "", "ignored (corrupt (checksum or ELF magic)): compiled again");
	cached_run(sub, "", "cache hit;"); /* stored afresh */
	/* the driver refuses the stored cubin (the agent's first load) */
	cached_run(sub, "FAKECUDA_FAIL=cuModuleLoadDataEx:1",
		   "ignored (the driver refused it): compiled again");
	/* off, or a folder that cannot be made: instrumented as before */
	cached_run(sub, "GPUEXT_CACHE_DISABLE=1", "cache off;");
	char bad[600];
	snprintf(bad, sizeof(bad), "GPUEXT_CACHE_PATH=$(ls %s/*.gxc | head -1)/x", sub);
	cached_run(sub, bad, "module cache: cannot create cache folder");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	free(test_run_cmd(cmd, NULL));
}

/*
 * Real Numba PTX (tests/ptx_corpus/numba_saxpy.ptx, from numba.cuda.
 * compile_ptx): its kernel, with Numba's long mangled name and module
 * variables, is instrumented on every load path, the JIT linker's (the one
 * Numba uses) included, and the result passes ptxas.
 */
static void test_numba_module(void **state)
{
	static const char ptx_path[] = "tests/ptx_corpus/numba_saxpy.ptx";
	char *ptx = test_read_file(ptx_path, NULL), name[512], cmd[2048];
	assert_non_null(ptx);
	const char *entry = strstr(ptx, ".entry ");
	assert_non_null(entry);
	entry += strlen(".entry ");
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(entry, "( \n"), entry);
	free(ptx);
	assert_true(strlen(name) > 200);
	snprintf(cmd, sizeof(cmd), "%s run build/bpf/examples/gpu_count.bpf.o -- %s %s %s %s",
		 test_cli_path(), APP, ptx_path, name, name);
	struct launches l;
	int status;
	char *out = run("", cmd, &status, &l);
	assert_int_equal(status, 0);
	assert_non_null(strstr(out, "app ok"));
	assert_int_equal(count_lines(out, "gpuext: "), 0);
	assert_int_equal(l.other, 10);
	assert_int_equal(l.other_inst, 10);
	if (l.ptxas_status != -1)
		assert_int_equal(l.ptxas_status, 0);
	free(out);
}

/* No runtime code for the GPU (the JIT linker refuses it): the runtime's
 * text goes into the module instead, silently, and all is instrumented. */
static void test_runtime_compiled_when_link_fails(void **state)
{
	struct launches l;
	int status;
	static const char *const env[] = {"FAKECUDA_FAIL=cuLinkAddData_v2:1",
					  "GPUEXT_AGENT_NO_LINK=1"}; /* or asked to */
	for (int i = 0; i < 2; i++) {
		char *out = run(env[i], gpuext_run_app(), &status, &l);
		assert_int_equal(status, 0);
		assert_non_null(strstr(out, "app ok"));
		assert_int_equal(count_lines(out, "gpuext: "), 0);
		assert_int_equal(l.targeted_inst, 8);
		assert_int_equal(l.linked, 0);
		if (l.ptxas_status != -1)
			assert_int_equal(l.ptxas_status, 0);
		free(out);
	}
}

static void test_untargeted_untouched(void **state)
{
	struct launches l;
	int status;
	char cmd[512];
	/* preloaded without a session: everything passes through, silently */
	snprintf(cmd, sizeof(cmd), "LD_PRELOAD=%s %s %s vec_add reduce_atomic", AGENT, APP, PTX);
	char *out = run("", cmd, &status, &l);
	assert_int_equal(status, 0);
	assert_int_equal(count_lines(out, "gpuext: "), 0);
	assert_int_equal(l.targeted, 8);
	assert_int_equal(l.targeted_inst, 0);
	assert_int_equal(l.inst_mod, 0);
	free(out);
	/* a session whose programs target neither launched kernel: launches
	 * not redirected; nothing compiled at all when nothing is done ahead
	 * (with it, the module's targeted vec_add is, unused) */
	snprintf(cmd, sizeof(cmd), "%s run %s -- %s %s early_ret reduce_atomic", test_cli_path(),
		 PROG, APP, PTX);
	static const char *const ahead[] = {"GPUEXT_AGENT_AHEAD=0", "GPUEXT_AGENT_AHEAD=1"};
	for (int i = 0; i < 2; i++) {
		out = run(ahead[i], cmd, &status, &l);
		assert_int_equal(status, 0);
		assert_int_equal(l.other, 10);
		assert_int_equal(l.other_inst, 0);
		if (i == 0)
			assert_int_equal(l.inst_mod, 0);
		assert_int_equal(count_lines(out, "gpuext: "), 0);
		free(out);
	}
}

/*
 * Instrumentation ahead of the first launch (agent_ahead.c): with time
 * between the module load and the launch, the kernel is compiled in the
 * background and the launch only picks it up; a failure there is told by
 * the first launch, once, and the kernel runs unchanged; off, the launch
 * compiles as before.  Either way one compile, every launch redirected.
 */
static void test_instrument_ahead(void **state)
{
	static const struct {
		const char *env, *want;
		int inst;
	} cases[] = {
		{"APP_DELAY_MS=300 GPUEXT_AGENT_AHEAD=1", "instrumented (ahead of its first launch, JIT ", 8},
		{"APP_DELAY_MS=0 GPUEXT_AGENT_AHEAD=1", "instrumented (", 8}, /* a race: either way */
		{"APP_DELAY_MS=300 GPUEXT_AGENT_AHEAD=0", "no runtime, cache off; ", 8},
		/* the driver refuses vec_add's module, ahead (its first load) */
		{"APP_DELAY_MS=300 GPUEXT_AGENT_AHEAD=1 FAKECUDA_FAIL=cuModuleLoadDataEx:1",
		 "gpuext: kernel vec_add runs unchanged: the driver rejected the PTX: ", 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct launches l;
		int status;
		char env[256], cmd[512];
		snprintf(env, sizeof(env), "GPUEXT_AGENT_VERBOSE=1 %s", cases[i].env);
		snprintf(cmd, sizeof(cmd), "%s run build/bpf/examples/gpu_empty.bpf.o -- %s %s "
			 "vec_add reduce_atomic", test_cli_path(), APP, PTX);
		char *out = run(env, cmd, &status, &l);
		if (status || !strstr(out, "app ok") || !strstr(out, cases[i].want))
			fail_msg("case %zu: expected '%s' in:\n%s", i, cases[i].want, out);
		assert_int_equal(l.targeted, 8);
		assert_int_equal(l.targeted_inst, cases[i].inst);
		/* one compile, told once: by the launch or ahead of it */
		assert_int_equal(count_lines(out, "gpuext: kernel vec_add instrumented ("), !!cases[i].inst);
		assert_int_equal(count_lines(out, "gpuext: kernel vec_add runs unchanged"), !cases[i].inst);
		free(out);
	}
}

/*
 * From process start (agent_ahead.c): the fatbin that rtapp's cudart-like
 * layout keeps in .nvFatBinSegment is compiled with no context into
 * libraries (cuLibraryLoadData) before the application hands it to the
 * driver (cuLibraryLoadData of the wrapper at its first launch), and the
 * first launches take the libraries' modules in the application's context,
 * map tables filled; the device side (the maps) is made by the thread too,
 * once the application's primary context is active, and the launches find
 * it there; GPUEXT_AGENT_AHEAD=0: the launches compile and make the device
 * side, as before; when the driver refuses, the thread stops with one
 * notice and the launches compile.
 */
static void test_ahead_from_start(void **state)
{
	static const struct {
		const char *env, *want;
		int ahead, stopped, device;
	} cases[] = {
		/* GPUEXT_AGENT_AHEAD empty: the default (the tests' is 0) */
		{"GPUEXT_AGENT_AHEAD=", "compiled ahead with no context; ", 1, 0, 1},
		{"GPUEXT_AGENT_AHEAD=0", "no runtime, cache off; ", 0, 0, 0},
		/* the driver refuses the first library, vec_add's: the device
		 * side is made ahead all the same */
		{"GPUEXT_AGENT_AHEAD= FAKECUDA_FAIL=cuLibraryLoadData:1", "no runtime, cache off; ", 0,
		 1, 1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct launches l;
		int status;
		char env[256], cmd[512];
		/* 200 ms of the application's own start before cuInit: the thread's
		 * compiles come before any context even on a loaded machine
		 * (without it, whether they do is a race with main's cuInit) */
		snprintf(env, sizeof(env), "GPUEXT_AGENT_VERBOSE=1 APP_INIT_DELAY_MS=200 APP_DELAY_MS=300 %s",
			 cases[i].env);
		snprintf(cmd, sizeof(cmd), "%s run build/bpf/examples/gpu_count.bpf.o -- %s "
			 "vec_add reduce_atomic", test_cli_path(), RTAPP);
		char *out = run(env, cmd, &status, &l);
		if (status || !strstr(out, "rtapp ok") || !strstr(out, cases[i].want))
			fail_msg("case %zu: expected '%s' in:\n%s", i, cases[i].want, out);
		assert_int_equal(l.targeted, 2);
		assert_int_equal(l.targeted_inst, 2);
		assert_int_equal(l.other, 2);
		assert_int_equal(l.other_inst, 2);
		/* compiled ahead, the maps' addresses are immediates (their
		 * arena made before any context); else the map table is filled
		 * in each launch's module */
		assert_int_equal(l.table_fills, cases[i].stopped || cases[i].ahead ? 0 : 2);
		/* one compile, told once by the launch; ahead only when on */
		assert_int_equal(count_lines(out, "gpuext: kernel vec_add instrumented ("), 1);
		assert_int_equal(count_lines(out, "gpuext: kernel vec_add compiled ahead of its first "
					     "launch, before any context ("), cases[i].ahead);
		assert_int_equal(count_lines(out, "gpuext: compiles before any context stopped"),
				 cases[i].stopped);
		assert_int_equal(count_lines(out, "gpuext: device side made ahead of the first "
					     "launch ("), cases[i].device);
		/* made ahead: nothing left for the first launch to make */
		if (cases[i].device)
			assert_non_null(strstr(out, "instrumented (device side 0.0, "));
		free(out);
	}
}

/*
 * The device maps' arena (ptx_arena.h): made before any context by the
 * compiles ahead, the maps' addresses are immediates in every instrumented
 * module (none reads a table), at GPUEXT_MAP_VA where set; where the
 * driver puts the range elsewhere or has no virtual memory management, or
 * GPUEXT_MAP_VA=0, or nothing is compiled ahead (the reservation then comes
 * after the context: elsewhere), the modules read the table as before;
 * mem probes read it in every case.
 */
static void test_map_va(void **state)
{
	static const struct {
		const char *env, *notice, *va;
		int immediates;
	} cases[] = {
		{"", "gpuext: device maps at 0x200000000000 (2097152 bytes, before any context; ",
		 "0x200000000000", 1},
		{"GPUEXT_MAP_VA=0x300000000000", "gpuext: device maps at 0x300000000000 (",
		 "0x300000000000", 1},
		{"FAKECUDA_VMM=elsewhere", "gpuext: device maps' addresses read from a table: the "
		 "device maps' arena (2097152 bytes at 0x200000000000): the driver reserved 0x", "", 0},
		{"FAKECUDA_VMM=unsupported", "gpuext: device maps' addresses read from a table: the "
		 "device maps' arena (0 bytes at 0x200000000000): cuMemGetAllocationGranularity: ",
		 "", 0},
		{"GPUEXT_MAP_VA=0", "", "", 0},
		{"GPUEXT_AGENT_AHEAD=0", "", "", 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct launches l;
		int status;
		char env[256], cmd[512];
		snprintf(env, sizeof(env), "GPUEXT_AGENT_VERBOSE=1 APP_INIT_DELAY_MS=200 "
			 "APP_DELAY_MS=300 GPUEXT_AGENT_AHEAD= %s", cases[i].env);
		snprintf(cmd, sizeof(cmd), "%s run build/bpf/examples/gpu_count.bpf.o -- %s "
			 "vec_add reduce_atomic", test_cli_path(), RTAPP);
		char *out = run(env, cmd, &status, &l);
		if (status || !strstr(out, "rtapp ok") || !strstr(out, cases[i].notice))
			fail_msg("case %zu: expected '%s' in:\n%s", i, cases[i].notice, out);
		assert_int_equal(l.targeted_inst, 2);
		assert_int_equal(l.other_inst, 2);
		if (cases[i].immediates) {
			assert_string_equal(l.va, cases[i].va);
			assert_int_equal(l.with_table, 0);
			assert_int_equal(l.table_fills, 0);
			/* the default address written as immediates, or not */
			assert_int_equal(l.with_va > 0, !strcmp(cases[i].va, "0x200000000000"));
		} else {
			assert_true(l.with_table >= 2);
			assert_int_equal(l.with_va, 0);
			assert_int_equal(l.table_fills, 2);
		}
		free(out);
	}
	/* mem probes read the table with the arena too (an operand per access,
	 * not two moves): memtrace's modules declare and fill it */
	struct launches l;
	int status;
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "%s run build/bpf/tools/memtrace.bpf.o -- %s vec_add "
		 "reduce_atomic", test_cli_path(), RTAPP);
	char *out = run("GPUEXT_AGENT_VERBOSE=1 APP_INIT_DELAY_MS=200 APP_DELAY_MS=300 "
			"GPUEXT_AGENT_AHEAD=", cmd, &status, &l);
	if (status || !strstr(out, "rtapp ok") || !strstr(out, "gpuext: device maps at 0x2000"))
		fail_msg("memtrace with the arena:\n%s", out);
	assert_true(l.with_table >= 2);
	assert_int_equal(l.with_va, 0);
	assert_int_equal(l.table_fills, 2); /* the two instrumented kernels' modules */
	free(out);
}

/*
 * The device side made ahead fails (the first device map's memory): one
 * notice, from the thread, and the application runs with every kernel
 * unchanged (fail-open, as when a launch makes it).
 */
static void test_ahead_device_fails(void **state)
{
	struct launches l;
	int status;
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "%s run build/bpf/examples/gpu_count.bpf.o -- %s "
		 "vec_add reduce_atomic", test_cli_path(), RTAPP);
	char *out = run("APP_DELAY_MS=300 GPUEXT_AGENT_AHEAD= FAKECUDA_FAIL=cuMemAlloc_v2:1", cmd,
			&status, &l);
	if (status || !strstr(out, "rtapp ok"))
		fail_msg("expected rtapp ok in:\n%s", out);
	assert_int_equal(count_lines(out, "gpuext: device probes disabled, kernels run unchanged: "),
			 1);
	assert_int_equal(count_lines(out, "gpuext: "), 1);
	assert_int_equal(l.targeted, 2);
	assert_int_equal(l.targeted_inst, 0);
	assert_int_equal(l.other_inst, 0);
	free(out);
}

/*
 * Tiers (agent_tier.c): memtrace's pasted form (forced slow:
 * GPUEXT_AGENT_TIER=1) is compiled in the background after the first
 * launch, which runs the called form compiled ahead (or a copy a region,
 * where that is not predicted slow); the launches after
 * that compile run the pasted form, and the agent says from which launch
 * on.  The background compile failing (nothing ahead: the second
 * cuLibraryLoadData, after the application's own, is vec_add's pasted
 * form) leaves vec_add on the called form, reduce_atomic swapped; by
 * default only what is predicted slow is tiered (memtrace no longer is);
 * GPUEXT_AGENT_TIER=0 pastes from the first launch on, as before.
 */
static void test_tier_swap(void **state)
{
	static const struct {
		const char *env, *prog, *forms;
		int vec_swapped, reduce_swapped, failed;
	} cases[] = {
		{"GPUEXT_AGENT_AHEAD=0 GPUEXT_AGENT_TIER=1", "tools/memtrace", "cpppp", 1, 1, 0},
		/* the defaults (compiled ahead from process start): a program of
		 * ~13 KiB pasted (tests/progs/mem_big) is predicted slow at
		 * vec_add's 3 accesses, not at reduce_atomic's 2; memtrace's ~6
		 * KiB at neither; vec_add's one region, a copy a region (a loop),
		 * is not: that form first, then the copies (the runner form,
		 * GPUEXT_PTX_MEM_SIMT=0; run by lanes, a copy a region: none) */
		{"GPUEXT_AGENT_AHEAD= GPUEXT_AGENT_TIER= GPUEXT_PTX_MEM_SIMT=0", "tests/progs/mem_big",
		 "ppppp", 1, 0, 0},
		{"GPUEXT_AGENT_AHEAD= GPUEXT_AGENT_TIER=", "tests/progs/mem_big", "ppppp", 0, 0, 0},
		{"GPUEXT_AGENT_AHEAD= GPUEXT_AGENT_TIER=", "tools/memtrace", "ppppp", 0, 0, 0},
		{"GPUEXT_AGENT_AHEAD=0 GPUEXT_AGENT_TIER=1 FAKECUDA_FAIL=cuLibraryLoadData:2",
		 "tools/memtrace", "ccccc", 0, 1, 1},
		{"GPUEXT_AGENT_AHEAD= GPUEXT_AGENT_TIER=0", "tools/memtrace", "ppppp", 0, 0, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct launches l;
		int status;
		char env[256], cmd[512];
		snprintf(env, sizeof(env), "GPUEXT_AGENT_VERBOSE=1 APP_DELAY_MS=300 APP_REPS=5 "
			 "APP_REP_DELAY_MS=100 %s", cases[i].env);
		snprintf(cmd, sizeof(cmd), "%s run build/bpf/%s.bpf.o -- %s vec_add reduce_atomic",
			 test_cli_path(), cases[i].prog, RTAPP);
		char *out = run(env, cmd, &status, &l);
		if (status || !strstr(out, "rtapp ok") || strcmp(l.vec_forms, cases[i].forms))
			fail_msg("case %zu: vec_add's forms %s, expected %s, in:\n%s", i, l.vec_forms,
				 cases[i].forms, out);
		assert_int_equal(count_lines(out, "gpuext: kernel vec_add: mem probes pasted from "
					     "launch 2 on (compiled in the background, "),
				 cases[i].vec_swapped);
		/* pasted from the first launch and swapped: a loop a region first */
		if (cases[i].vec_swapped && cases[i].forms[0] == 'p')
			assert_non_null(strstr(out, " bytes, a loop a region)"));
		assert_int_equal(count_lines(out, "gpuext: kernel reduce_atomic: mem probes pasted "
					     "from launch 2 on ("), cases[i].reduce_swapped);
		assert_int_equal(count_lines(out, "gpuext: kernel vec_add: its pasted mem probes "
					     "failed to compile in the background, the called ones "
					     "stay: "), cases[i].failed);
		free(out);
	}
}

/*
 * memtrace on the reduce example's kernel (its loop unrolled, 16 accesses
 * by 16 lanes), tiers on: pasted from the first launch, with the lanes' reductions
 * combined and without (GPUEXT_PTX_MEM_AGG=0); the combining's text is
 * left out of the tier prediction like the unrolled turns (counted, it
 * sends the kernel to the called form first, agent_tier_choose).
 */
static void test_reduce_pasted_combined(void **state)
{
	static const char ptx[] = "build/examples/ref/reduce.compute_75.ptx";
	static const char *const envs[] = {"", "GPUEXT_PTX_MEM_AGG=0"};

	if (access(ptx, R_OK)) {
		fprintf(stderr, "test_agent: %s not built (nvcc), skipped\n", ptx);
		skip();
	}
	for (size_t i = 0; i < 2; i++) {
		struct launches l;
		int status;
		char env[128], cmd[512];
		snprintf(env, sizeof(env), "GPUEXT_AGENT_VERBOSE=1 GPUEXT_AGENT_TIER= FAKECUDA_SMS=132 %s",
			 envs[i]);
		snprintf(cmd, sizeof(cmd), "%s run build/bpf/tools/memtrace.bpf.o -- %s %s "
			 "_Z10reduce_sumPKilPy _Z10reduce_sumPKilPy", test_cli_path(), APP, ptx);
		char *out = run(env, cmd, &status, &l);
		if (status || !strstr(out, "mem probes inline at 6 accesses in 4 regions") ||
		    strstr(out, "pasted form compiling in the background"))
			fail_msg("%s: not pasted from the first launch:\n%s", envs[i], out);
		free(out);
	}
}

/*
 * The application exits while a tier's pasted form compiles in the
 * background (a 300 ms compile, one launch each): the exit waits for it
 * before the JIT compiler's own exit handler runs (the fake driver aborts
 * a compile that outlives it, as the H200's driver crashed), whether the
 * compiler was loaded by the thread's compiles ahead or by the launch's.
 */
static void test_tier_exit(void **state)
{
	static const char *const ahead[] = {"GPUEXT_AGENT_AHEAD=", "GPUEXT_AGENT_AHEAD=0"};
	for (size_t i = 0; i < 2; i++) {
		struct launches l;
		int status;
		char env[256], cmd[512];
		snprintf(env, sizeof(env), "%s GPUEXT_AGENT_TIER=1 APP_DELAY_MS=50 APP_REPS=1 "
			 "FAKECUDA_DELAY=cuLibraryLoadData:300", ahead[i]);
		snprintf(cmd, sizeof(cmd), "%s run build/bpf/tools/memtrace.bpf.o -- %s "
			 "vec_add reduce_atomic", test_cli_path(), RTAPP);
		char *out = run(env, cmd, &status, &l);
		if (status || !strstr(out, "rtapp ok") || strstr(out, "torn down"))
			fail_msg("%s: status %d:\n%s", ahead[i], status, out);
		assert_string_equal(l.vec_forms, "c");
		free(out);
	}
}

/* One injected failure: app runs to the end unchanged, one message. */
static void fail_open(const char *fail, const char *message, int launches_inst)
{
	struct launches l;
	int status;
	char env[256];
	snprintf(env, sizeof(env), "FAKECUDA_FAIL=%s", fail);
	char *out = run(env, gpuext_run_app(), &status, &l);
	assert_int_equal(status, 0);
	assert_non_null(strstr(out, "app ok"));
	assert_int_equal(count_lines(out, "gpuext: "), 1);
	if (!strstr(out, message))
		fail_msg("expected '%s' in:\n%s", message, out);
	assert_int_equal(l.targeted, 8);
	assert_int_equal(l.targeted_inst, launches_inst);
	assert_int_equal(l.other_inst, 0);
	free(out);
}

static void test_fail_open_jit(void **state)
{
	/* the instrumented module is the first cuModuleLoadDataEx (the app's
	 * loads use cuModuleLoadData); a linked module that fails is loaded
	 * again with the runtime compiled in: the second */
	fail_open("cuModuleLoadDataEx:1,cuModuleLoadDataEx:2",
		  "gpuext: kernel vec_add runs unchanged: ", 0);
}

/* The instrumented module's map table cannot be filled: not launched. */
static void test_fail_open_map_table(void **state)
{
	/* (the linked module, then the one with the runtime compiled in) */
	fail_open("cuModuleGetGlobal_v2:1,cuModuleGetGlobal_v2:2", "gpuext: kernel vec_add runs unchanged: the "
		  "instrumented module's map table: ", 0);
}

static void test_fail_open_device_maps(void **state)
{
	fail_open("cuMemAlloc_v2:1", "gpuext: device probes disabled, kernels run unchanged: ", 0);
}

static void test_fail_open_launch_refused(void **state)
{
	/* the first launch (vec_add, instrumented) is refused: that handle (k1:
	 * 4 launches and a graph node) runs the original from then on; the
	 * kernel's other handles (k1b, the CUkernel twice, the linked k1c) stay
	 * instrumented */
	fail_open("cuLaunchKernel:1", "gpuext: kernel vec_add runs unchanged: the driver refused", 4);
}

static void test_fail_open_no_session(void **state)
{
	struct launches l;
	int status;
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "GPUEXT_SESSION=/gpuext-no-such LD_PRELOAD=%s %s %s vec_add x",
		 AGENT, APP, PTX);
	char *out = run("", cmd, &status, &l);
	/* "x" is not a kernel: the app's own error, passed through unchanged */
	assert_int_equal(status, 1);
	assert_non_null(strstr(out, "cuModuleGetFunction(&k2, mod, argv[3]) failed: 500"));
	assert_int_equal(count_lines(out, "gpuext: "), 1);
	assert_non_null(strstr(out, "gpuext: agent disabled, kernels run unchanged: session "
				    "/gpuext-no-such"));
	free(out);
}

/* What the agent forwards and mirrors is what `gpuext run` prints: records
 * as they arrive, then the non-empty maps (session_writer plays the agent). */
static void test_run_prints_session(void **state)
{
	char cmd[512];
	int status;
	snprintf(cmd, sizeof(cmd), "GPUEXT_AGENT=%s %s run %s -- build/fakecuda/session_writer abc hi",
		 AGENT, test_cli_path(), "build/bpf/examples/gpu_warp_count.bpf.o");
	char *out = test_run_cmd(cmd, &status);
	assert_int_equal(status, 0);
	assert_string_equal(out, "blocks: 61 62 63\nblocks: 68 69\nmap threads:\n  0: 2\n");
	free(out);
	snprintf(cmd, sizeof(cmd),
		 "GPUEXT_AGENT=%s %s run --json %s -- build/fakecuda/session_writer abc", AGENT,
		 test_cli_path(), "build/bpf/examples/gpu_warp_count.bpf.o");
	out = test_run_cmd(cmd, &status);
	assert_int_equal(status, 0);
	assert_string_equal(out, "{\"event\":{\"map\":\"blocks\",\"data\":\"616263\"}}\n"
				 "{\"maps\":[{\"name\":\"threads\",\"entries\":"
				 "[{\"key\":0,\"value\":1}]}]}\n");
	free(out);
}

static void test_run_exit_status_and_errors(void **state)
{
	char cmd[512];
	int status;
	snprintf(cmd, sizeof(cmd), "GPUEXT_AGENT=%s %s run %s -- sh -c 'exit 7'", AGENT,
		 test_cli_path(), PROG);
	free(test_run_cmd(cmd, &status));
	assert_int_equal(status, 7);
	snprintf(cmd, sizeof(cmd), "%s run --tool no_such_tool -- true", test_cli_path());
	char *out = test_run_cmd(cmd, &status);
	assert_int_equal(status, 1);
	assert_non_null(strstr(out, "gpuext: run: no tool 'no_such_tool'"));
	free(out);
	snprintf(cmd, sizeof(cmd), "%s run %s", test_cli_path(), PROG);
	free(test_run_cmd(cmd, &status));
	assert_int_equal(status, 2);
}

int main(void)
{
	if (access(APP, X_OK) || access(AGENT, R_OK)) {
		fprintf(stderr, "test_agent: %s or %s not built\n", APP, AGENT);
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_path_instrumented),
		cmocka_unit_test(test_mirror_snapshots_on_own_stream),
		cmocka_unit_test(test_runtime_compiled_when_link_fails),
		cmocka_unit_test(test_no_probes_baseline),
		cmocka_unit_test(test_module_cache),
		cmocka_unit_test(test_numba_module),
		cmocka_unit_test(test_instrument_ahead),
		cmocka_unit_test(test_ahead_from_start),
		cmocka_unit_test(test_ahead_device_fails),
		cmocka_unit_test(test_map_va),
		cmocka_unit_test(test_tier_swap),
		cmocka_unit_test(test_tier_exit),
		cmocka_unit_test(test_reduce_pasted_combined),
		cmocka_unit_test(test_untargeted_untouched),
		cmocka_unit_test(test_fail_open_jit),
		cmocka_unit_test(test_fail_open_device_maps),
		cmocka_unit_test(test_fail_open_map_table),
		cmocka_unit_test(test_fail_open_launch_refused),
		cmocka_unit_test(test_fail_open_no_session),
		cmocka_unit_test(test_run_prints_session),
		cmocka_unit_test(test_run_exit_status_and_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
