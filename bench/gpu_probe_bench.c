/* SPDX-License-Identifier: MIT */
/*
 * gpu_probe_bench - what a device probe costs, and what translation costs.
 *
 * GPU: an application kernel (one block of 128 threads per SM) calls a
 * probe ITERS times per thread and reads clock64 around each call; the
 * cycles per invocation are averaged over all threads, for an empty
 * program, a counter increment in an array (one word for the whole grid) and
 * in a per-SM array (one word per SM, on its own line), a hash lookup and
 * add (the key is present after each warp's first call) and a ring buffer
 * record, each once per warp and per thread (per warp: the slowest lane, which
 * is what the warp waits; averaged over warps).  The baseline is the same
 * kernel calling an empty function (no program).
 *
 * CPU: translation time of a synthetic 10,000-instruction program (ALU,
 * jumps, loads and stores, calls of helpers) per 1000 instructions, and the
 * driver's JIT time for it.
 *
 * Prints a markdown report; exit 0, 1 on error, 77 without a GPU (the CPU
 * part is still printed).  --ptx-out DIR writes the modules only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_common.h"
#include "ptx/ptx_helpers.h"
#include "ptx/ptx_rt.h"

enum { THREADS = 128, ITERS = 32, SYNTH_INSNS = 10000, HASH_KEYS = 1024 };

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU time of this thread: translation is measured without the noise of
 * other processes on a shared machine. */
static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A straight-line mix of what real programs do, with forward jumps. */
static struct isa_insn *synth_prog(size_t *cnt)
{
	struct isa_insn *in = calloc(SYNTH_INSNS + 2, sizeof(*in));
	size_t n = 0;

	while (n < SYNTH_INSNS) {
		in[n] = INSN(ISA_OPC_ALU64_MOV_K, 1, 0, 0, (int32_t)n);
		n++;
		in[n++] = INSN(ISA_OPC_ALU64_ADD_X, 2, 1, 0, 0);
		in[n++] = INSN(ISA_OPC_ALU32_MUL_K, 3, 0, 0, 7);
		in[n++] = INSN(ISA_OPC_ALU64_DIV_X, 3, 1, 0, 0);
		in[n++] = INSN(ISA_OPC_ALU64_LSH_K, 2, 0, 0, 3);
		in[n++] = INSN(ISA_OPC_STX_DW, ISA_REG_FP, 2, -8, 0);
		in[n++] = INSN(ISA_OPC_LDX_W, 4, ISA_REG_FP, -8, 0);
		in[n++] = INSN(ISA_OPC_JMP_JGT_X, 4, 3, 1, 0);
		in[n++] = INSN(ISA_OPC_ALU64_XOR_X, 4, 2, 0, 0);
		in[n++] = INSN(ISA_OPC_JMP_CALL, 0, ISA_CALL_HELPER, 0, HELPER_GPU_LANE_COUNT);
	}
	in[n++] = INSN(ISA_OPC_ALU64_MOV_K, 0, 0, 0, 0);
	in[n++] = INSN(ISA_OPC_JMP_EXIT, 0, 0, 0, 0);
	*cnt = n;
	return in;
}

static char *translate_synth(const struct ptx_target *t, double *us_per_k, size_t *insns)
{
	size_t n;
	struct isa_insn *in = synth_prog(&n);
	struct prog p = {.name = "synth", .insns = in, .insn_cnt = n};
	struct ptx_emit_opts o = {.symbol = "gx_synth"};
	char *text = NULL;
	const int reps = 20;

	double t0 = cpu_s();
	for (int r = 0; r < reps; r++) {
		struct ptx_buf b = {0};
		if (ptx_emit_prog(&b, &p, &o, NULL, NULL)) {
			ptx_buf_free(&b);
			free(in);
			return NULL;
		}
		ptx_buf_free(&b);
	}
	double t1 = cpu_s();
	*us_per_k = (t1 - t0) / reps / n * 1000 * 1e6;
	*insns = n;
	struct ptx_buf b = {0};
	ptx_emit_header(&b, t);
	ptx_emit_runtime(&b);
	if (ptx_emit_prog(&b, &p, &o, NULL, NULL) == 0) {
		ptx_emit_probe(&b, "gx_synth", PTX_PROBE_ENTRY, PTX_MODE_WARP);
		/* an entry so that the JIT compiles the program */
		ptx_buf_printf(&b, ".visible .entry gx_synth_k()\n{\n\tcall gx_synth_probe;\n"
				   "\tret;\n}\n");
		text = ptx_buf_take(&b, NULL);
	}
	ptx_buf_free(&b);
	free(in);
	return text;
}

struct result {
	double cycles;
	uint64_t drops;
};

/* The measured rows: a program and the type of the map it updates. */
static const struct bench_row {
	const char *name;
	int kind; /* enum gpu_prog_kind */
	uint32_t map_type;
} bench_rows[] = {
	{"empty program", GPU_PROG_EMPTY, 0},
	{"array counter += lanes (one word for all warps)", GPU_PROG_COUNTER, MAP_TYPE_ARRAY},
	{"per-SM array counter += lanes", GPU_PROG_COUNTER, MAP_TYPE_PERCPU_ARRAY},
	{"hash lookup (key present) and += lanes", GPU_PROG_HASH, MAP_TYPE_HASH},
	{"ring buffer record (24 bytes)", GPU_PROG_RINGBUF, MAP_TYPE_RINGBUF},
};

/* kind < 0: the baseline (no program); map_type: the map of kinds that use one. */
static int measure(struct ptx_rt *rt, int kind, uint32_t map_type, enum ptx_mode mode,
		   struct result *res, struct err *e)
{
	const struct cu_driver *cu = rt->cu;
	struct gpu_prog_buf pb;
	struct map *fake[1] = {NULL};
	struct ptx_rt_map *m = NULL;
	struct ptx_buf b = {0};
	struct ptx_map_ref ref = {.map = 0};
	unsigned blocks = (unsigned)rt->nr_sms;
	size_t nthreads = (size_t)blocks * THREADS;
	CUmodule mod = NULL;
	CUfunction fn;
	CUdeviceptr dcyc = 0;
	CUresult r;
	int err = 0;

	if (kind >= GPU_PROG_COUNTER) {
		struct map_def def = {.type = map_type, .key_size = 4, .value_size = 8,
				      .max_entries = 1};
		if (kind == GPU_PROG_HASH) {
			def.type = MAP_TYPE_HASH;
			def.key_size = 8;
			def.max_entries = HASH_KEYS;
		} else if (kind == GPU_PROG_RINGBUF) {
			/* big enough that no record is dropped: drops are cheaper */
			def = (struct map_def){.type = MAP_TYPE_RINGBUF, .max_entries = 64u << 20};
		}
		snprintf(def.name, sizeof(def.name), "bench");
		err = ptx_rt_map_create(rt, &def, &m, e);
		if (err)
			return err;
		ref = ptx_rt_map_ref(m);
	}
	gpu_prog_build(kind < 0 ? GPU_PROG_EMPTY : kind, HASH_KEYS, &pb);
	struct prog p = {.name = "bench", .insns = pb.insns, .insn_cnt = pb.n, .maps = fake,
			 .map_cnt = 1};
	err = gpu_module(&b, &rt->target, kind < 0 ? NULL : &p, "gx_b", &ref, mode, e);
	char *text = ptx_buf_take(&b, NULL);
	if (!err)
		err = ptx_rt_module_load(rt, text, &mod, e);
	free(text);
	if (err)
		goto out;
	uint64_t *cyc = calloc(nthreads, 8);
	if ((r = cu->module_get_function(&fn, mod, "gx_b_app")) != CUDA_SUCCESS ||
	    (r = cu->mem_alloc(&dcyc, nthreads * 8)) != CUDA_SUCCESS)
		goto cu_fail;
	uint32_t iters = ITERS;
	void *params[] = {&iters, &dcyc};
	/* one warm-up launch (caches, TLB), then the measured one */
	for (int run = 0; run < 2; run++)
		if ((r = cu->launch_kernel(fn, blocks, 1, 1, THREADS, 1, 1, 0, NULL, params, NULL)) !=
			    CUDA_SUCCESS ||
		    (r = cu->ctx_synchronize()) != CUDA_SUCCESS)
			goto cu_fail;
	if ((r = cu->memcpy_dtoh(cyc, dcyc, nthreads * 8)) != CUDA_SUCCESS)
		goto cu_fail;
	/* What the warp waits: its slowest lane (once per warp, the lane that ran
	 * the program), averaged over warps. */
	double sum = 0;
	for (size_t w = 0; w < nthreads / 32; w++) {
		uint64_t most = 0;
		for (size_t l = 0; l < 32; l++)
			most = cyc[w * 32 + l] > most ? cyc[w * 32 + l] : most;
		sum += (double)most;
	}
	res->cycles = sum / (nthreads / 32) / ITERS;
	res->drops = 0;
	if (m && kind == GPU_PROG_RINGBUF)
		err = ptx_rt_map_drops(m, &res->drops, PTX_RT_COMPLETE, e);
	free(cyc);
	goto out;
cu_fail:
	free(cyc);
	err = cu_err(cu, e, r, "benchmark kernel");
out:
	if (dcyc)
		cu->mem_free(dcyc);
	if (mod)
		cu->module_unload(mod);
	ptx_rt_map_free(m);
	return err;
}

static int write_modules(const char *dir)
{
	struct ptx_target t;
	struct map *fake[1] = {NULL};
	struct ptx_map_ref ref = {.map = 0x7000000000ull, .value = 0x7000000080ull};
	char path[512];

	ptx_target_parse("sm_90", &t, NULL);
	for (int k = -1; k <= GPU_PROG_RINGBUF; k++) {
		for (int mode = 0; mode < 2; mode++) {
			struct gpu_prog_buf pb;
			struct ptx_buf b = {0};
			struct err e = {{0}};
			gpu_prog_build(k < 0 ? GPU_PROG_EMPTY : k, HASH_KEYS, &pb);
			struct prog p = {.name = "bench", .insns = pb.insns, .insn_cnt = pb.n,
					 .maps = fake, .map_cnt = 1};
			if (gpu_module(&b, &t, k < 0 ? NULL : &p, "gx_b", &ref, mode, &e))
				return 1;
			char *text = ptx_buf_take(&b, NULL);
			snprintf(path, sizeof(path), "%s/bench-%d-%d.ptx", dir, k + 1, mode);
			int err = !text || gpu_write_file(path, text);
			free(text);
			if (err)
				return 1;
		}
	}
	double us;
	size_t n;
	char *text = translate_synth(&t, &us, &n);
	snprintf(path, sizeof(path), "%s/bench-synth.ptx", dir);
	int err = !text || gpu_write_file(path, text);
	free(text);
	return err;
}

int main(int argc, char **argv)
{
	struct ptx_rt *rt;
	struct ptx_target t;
	struct err e = {{0}};
	double us_per_k;
	size_t n;
	time_t now = time(NULL);
	char date[64];

	if (argc == 3 && !strcmp(argv[1], "--ptx-out"))
		return write_modules(argv[2]);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	printf("# gpuext device probe benchmark\n\n- date: %s\n- command: %s\n", date,
	       "build/gpu/gpu_probe_bench (tests/gpu/run.sh)");
	int have_gpu = ptx_rt_open(0, &rt, &e) == 0;
	if (have_gpu)
		t = rt->target;
	else
		ptx_target_parse("sm_90", &t, NULL);
	char *synth = translate_synth(&t, &us_per_k, &n);
	if (!synth) {
		printf("translation of the synthetic program failed\n");
		return 1;
	}
	printf("- translation (CPU time): %.1f us per 1000 eBPF instructions (%zu-instruction "
	       "program, %zu bytes of PTX with the runtime)\n", us_per_k, n, strlen(synth));
	if (!have_gpu) {
		printf("- GPU: none (%s)\n", e.msg);
		free(synth);
		return GPU_EXIT_SKIP;
	}
	CUmodule mod;
	double t0 = now_s();
	if (ptx_rt_module_load(rt, synth, &mod, &e)) {
		printf("- driver JIT of the synthetic program failed: %s\n", e.msg);
		free(synth);
		return 1;
	}
	double jit = now_s() - t0;
	rt->cu->module_unload(mod);
	free(synth);
	char tname[16];
	printf("- driver JIT (cuModuleLoadDataEx, PTX -> SASS): %.1f ms for %zu instructions "
	       "plus the runtime\n", jit * 1e3, n);
	printf("- GPU: %s, %s, %d SMs, driver API %d\n- launch: %d blocks x %d threads, %d "
	       "probe calls per thread, clock64 around each call, slowest lane of each warp, mean "
	       "over warps\n\n",
	       rt->name, ptx_target_name(&rt->target, tname, sizeof(tname)), rt->nr_sms,
	       rt->cu->version, rt->nr_sms, THREADS, ITERS);
	struct result base;
	if (measure(rt, -1, 0, PTX_MODE_WARP, &base, &e)) {
		printf("baseline failed: %s\n", e.msg);
		return 1;
	}
	printf("| program | once per warp (cycles) | per thread (cycles) | per-thread / per-warp |\n"
	       "| --- | --- | --- | --- |\n");
	printf("| call of an empty function (baseline) | %.0f | %.0f | - |\n", base.cycles,
	       base.cycles);
	int failed = 0;
	for (size_t i = 0; i < sizeof(bench_rows) / sizeof(bench_rows[0]); i++) {
		const struct bench_row *row = &bench_rows[i];
		struct result w, th;
		if (measure(rt, row->kind, row->map_type, PTX_MODE_WARP, &w, &e) ||
		    measure(rt, row->kind, row->map_type, PTX_MODE_THREAD, &th, &e)) {
			printf("| %s | failed: %s | | |\n", row->name, e.msg);
			failed = 1;
			continue;
		}
		printf("| %s | %.0f | %.0f | %.1fx |", row->name, w.cycles, th.cycles,
		       th.cycles / (w.cycles > 0 ? w.cycles : 1));
		if (row->kind == GPU_PROG_RINGBUF)
			printf(" drops: %llu / %llu", (unsigned long long)w.drops,
			       (unsigned long long)th.drops);
		printf("\n");
	}
	ptx_rt_close(rt);
	return failed;
}
