/* SPDX-License-Identifier: MIT */
/*
 * inject_check - instrumented kernels compute what the originals compute,
 * and their probes see exactly the analytic counts.
 *
 * The kernels of tests/ptx_corpus/checked.compute_75.ptx (vec_add,
 * reduce_atomic, early_ret) run on the same input twice: as nvcc wrote
 * them and with entry, exit and mem probes injected (counting programs
 * over one device array map, tests/unit/ptx_corpus.h).  Checked:
 *   - the output buffers are bit-identical;
 *   - entry: lanes = threads launched, calls = warps launched;
 *   - exit: lanes = threads launched (a warp may exit in pieces);
 *   - mem: accesses = loads + stores + atomics of all threads, bytes = the
 *     sum of their sizes (each probe call adds its lane count), and one
 *     probe run per warp and access (the kernels' accesses follow one
 *     guard, straight-line: a warp that ran a probe in pieces, lanes
 *     running ahead of the runner, would count more);
 * each kernel three times: the mem probe called at every access, pasted
 * inline at every access (ptx_inject_opts.mem_code), and pasted with a
 * run's accesses probed by as many lanes at once (.mem_simt); on sm_90 and
 * newer a fourth time, that with the elections by elect.sync
 * (.elect_sync, the module's target raised to sm_90).  The kernel of
 * tests/ptx_corpus/loops.compute_75.ptx (strided_sum: a counted loop NVVM
 * unrolled, every count of turns, lanes of a warp leaving it at different
 * turns) likewise, its loop unrolled again by the injector (.mem_unroll)
 * where the runs are probed by lanes: its probe runs are not counted (they
 * depend on how its warps diverge), its accesses and bytes are.
 * Exit 0 all passed, 1 a check failed, 77 no GPU.
 *   inject_check --ptx-out DIR   writes the instrumented modules (maps at
 *                                address 0; inject_inline_*: the mem
 *                                probe inline) and exits, without a GPU.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_common.h"
#include "ptx/ptx_inject.h"
#include "ptx/ptx_rt.h"
#include "ptx_corpus.h"
#include "testutil.h"

#define MODULE_PATH "tests/ptx_corpus/checked.compute_75.ptx"
#define LOOPS_PATH "tests/ptx_corpus/loops.compute_75.ptx"
enum { N = 50021, BLOCK = 256 };

static int failures;

#define CHECK(cond, ...)                                                          \
	do {                                                                      \
		printf((cond) ? "PASS " : "FAIL ");                              \
		failures += !(cond);                                              \
		printf(__VA_ARGS__);                                              \
		printf("\n");                                                     \
		fflush(stdout);                                                   \
	} while (0)

/* A kernel of the module: its buffers, and what its probes must count. */
struct kernel_case {
	const char *name;
	unsigned nbuf;
	size_t buf_len[3]; /* bytes; the last buffer is the output */
	uint64_t mem_lanes, mem_bytes, mem_calls; /* mem_calls 0: not checked */
	int unrolled; /* its loop is unrolled where runs are probed by lanes */
};

static void cases(struct kernel_case *c)
{
	uint64_t even = (N + 1) / 2, warps = (N + 31) / 32; /* warps with a thread below N */
	/* vec_add: 2 loads + 1 store of 4 bytes per thread below N */
	c[0] = (struct kernel_case){"vec_add", 3, {4 * N, 4 * N, 4 * N}, 3ull * N, 12ull * N,
				    3 * warps, 0};
	/* reduce_atomic: 1 load + 1 atomic add of 4 bytes per thread below N */
	c[1] = (struct kernel_case){"reduce_atomic", 2, {4 * N, 4}, 2ull * N, 8ull * N, 2 * warps, 0};
	/* early_ret: even threads below N store twice (every such warp has one) */
	c[2] = (struct kernel_case){"early_ret", 1, {4 * (N + 1)}, 2 * even, 8 * even, 2 * warps, 0};
	/* strided_sum: i % 37 loads and 1 atomic add of 4 bytes per thread below N */
	uint64_t loads = 0;
	for (uint64_t i = 0; i < N; i++)
		loads += i % 37;
	c[3] = (struct kernel_case){"strided_sum", 2, {4 * N, 4}, loads + N, 4 * (loads + N), 0, 1};
}

/* mem_code: the mem probe inline (else called); simt: a run's accesses
 * by as many lanes; elect_sync: the regions elect by elect.sync. */
static char *instrument(const char *text, const char *kernel, const char *extra,
			const char *mem_code, int simt, int elect_sync, struct err *e)
{
	struct ptx_module *m;
	char *out = NULL;
	size_t len;

	if (ptx_parse(text, strlen(text), &m, e))
		return NULL;
	struct ptx_inject_opts o = {.kernel = kernel, .entry_sym = "gx_ent_probe",
				    .exit_sym = "gx_ext_probe",
				    .mem_sym = mem_code ? NULL : "gx_mem_probe", .mem_code = mem_code,
				    .extra = extra, .min_version_major = 7, .min_version_minor = 8,
				    .mem_simt = simt, .mem_unroll = simt ? 4 : 0,
				    .elect_sync = elect_sync};
	if (ptx_inject(m, &o, &out, &len, e))
		out = NULL;
	ptx_module_free(m);
	return out;
}

struct words {
	uint64_t w[PTX_CORPUS_WORDS];
};

static int read_value0(void *arg, const void *key, const void *values, unsigned nr)
{
	uint32_t k;
	memcpy(&k, key, 4);
	if (k == 0)
		memcpy(arg, values, sizeof(struct words));
	return 0;
}

/* Run kernel kc of module text on fresh copies of the inputs; the output
 * buffer into out. */
static int run(struct ptx_rt *rt, const char *text, const struct kernel_case *kc,
	       void *const *inputs, void *out, struct err *e)
{
	const struct cu_driver *cu = rt->cu;
	CUdeviceptr buf[3] = {0};
	CUmodule mod = NULL;
	CUfunction fn;
	CUresult r = CUDA_SUCCESS;
	int n = N, err = 0;
	unsigned grid = (N + BLOCK - 1) / BLOCK;
	void *params[4];

	if ((err = ptx_rt_module_load(rt, text, &mod, e)))
		return err;
	for (unsigned i = 0; i < kc->nbuf && r == CUDA_SUCCESS; i++) {
		r = cu->mem_alloc(&buf[i], kc->buf_len[i]);
		if (r == CUDA_SUCCESS)
			r = i + 1 < kc->nbuf ? cu->memcpy_htod(buf[i], inputs[i], kc->buf_len[i])
					     : cu->memset_d8(buf[i], 0, kc->buf_len[i]);
		params[i] = &buf[i];
	}
	params[kc->nbuf] = &n;
	if (r == CUDA_SUCCESS)
		r = cu->module_get_function(&fn, mod, kc->name);
	if (r == CUDA_SUCCESS)
		r = cu->launch_kernel(fn, grid, 1, 1, BLOCK, 1, 1, 0, NULL, params, NULL);
	if (r == CUDA_SUCCESS)
		r = cu->ctx_synchronize();
	if (r == CUDA_SUCCESS)
		r = cu->memcpy_dtoh(out, buf[kc->nbuf - 1], kc->buf_len[kc->nbuf - 1]);
	if (r != CUDA_SUCCESS)
		err = cu_err(cu, e, r, kc->name);
	for (unsigned i = 0; i < kc->nbuf; i++)
		if (buf[i])
			cu->mem_free(buf[i]);
	cu->module_unload(mod);
	return err;
}

/* mem_inline: 0 called, 1 pasted, 2 pasted, runs by lanes, 3 that with
 * elect.sync. */
static void check_kernel(struct ptx_rt *rt, const char *text, const struct kernel_case *kc,
			 void *const *inputs, int mem_inline)
{
	struct map_def def = {.type = MAP_TYPE_ARRAY, .key_size = 4,
			      .value_size = sizeof(struct words), .max_entries = 1};
	size_t out_len = kc->buf_len[kc->nbuf - 1];
	void *want = calloc(1, out_len), *got = calloc(1, out_len);
	struct ptx_rt_map *m = NULL;
	struct words w = {{0}};
	struct err e = {{0}};
	char *extra = NULL, *inst = NULL, *mem_code = NULL, name[96];

	snprintf(name, sizeof(name), "%s%s", kc->name,
		 mem_inline == 3   ? " (mem inline, lanes, elect.sync)"
		 : mem_inline == 2 ? " (mem inline, lanes)"
		 : mem_inline      ? " (mem inline)"
				   : "");
	snprintf(def.name, sizeof(def.name), "counts");
	if (ptx_rt_map_create(rt, &def, &m, &e))
		goto fail;
	struct ptx_map_ref ref = ptx_rt_map_ref(m);
	if (!(extra = ptx_corpus_probes_mem("sm_75", &ref, mem_inline ? &mem_code : NULL))) {
		err_set(&e, EINVAL, "translating the probe programs failed");
		goto fail;
	}
	if (!(inst = instrument(text, kc->name, extra, mem_code, mem_inline >= 2,
				mem_inline == 3 ? PTX_ELECT_SYNC_ALL : 0, &e)))
		goto fail;
	if (run(rt, text, kc, inputs, want, &e) || run(rt, inst, kc, inputs, got, &e) ||
	    ptx_rt_map_foreach(m, read_value0, &w, &e))
		goto fail;
	uint64_t grid = (N + BLOCK - 1) / BLOCK, threads = grid * BLOCK, warps = threads / 32;
	CHECK(!memcmp(want, got, out_len), "%s: instrumented output bit-identical (%zu bytes)",
	      name, out_len);
	CHECK(w.w[PTX_CORPUS_ENTRY_LANES] == threads && w.w[PTX_CORPUS_ENTRY_CALLS] == warps,
	      "%s: entry probe: %llu threads in %llu calls, expected %llu in %llu warps",
	      name, (unsigned long long)w.w[PTX_CORPUS_ENTRY_LANES],
	      (unsigned long long)w.w[PTX_CORPUS_ENTRY_CALLS], (unsigned long long)threads,
	      (unsigned long long)warps);
	CHECK(w.w[PTX_CORPUS_EXIT_LANES] == threads && w.w[PTX_CORPUS_EXIT_CALLS] >= warps,
	      "%s: exit probe: %llu threads in %llu calls, expected %llu in >= %llu",
	      name, (unsigned long long)w.w[PTX_CORPUS_EXIT_LANES],
	      (unsigned long long)w.w[PTX_CORPUS_EXIT_CALLS], (unsigned long long)threads,
	      (unsigned long long)warps);
	CHECK(w.w[PTX_CORPUS_MEM_LANES] == kc->mem_lanes && w.w[PTX_CORPUS_MEM_BYTES] == kc->mem_bytes,
	      "%s: mem probe: %llu accesses, %llu bytes, expected %llu and %llu", name,
	      (unsigned long long)w.w[PTX_CORPUS_MEM_LANES],
	      (unsigned long long)w.w[PTX_CORPUS_MEM_BYTES], (unsigned long long)kc->mem_lanes,
	      (unsigned long long)kc->mem_bytes);
	if (kc->mem_calls)
		CHECK(w.w[PTX_CORPUS_MEM_CALLS] == kc->mem_calls,
		      "%s: mem probe: %llu runs, expected one per warp and access, %llu", name,
		      (unsigned long long)w.w[PTX_CORPUS_MEM_CALLS],
		      (unsigned long long)kc->mem_calls);
	if (kc->unrolled)
		CHECK(!strstr(inst, "// unrolled") == (mem_inline < 2),
		      "%s: its loop unrolled by the injector: %s", name,
		      strstr(inst, "// unrolled") ? "yes" : "no");
	goto out;
fail:
	CHECK(0, "%s: %s", name, e.msg);
out:
	ptx_rt_map_free(m);
	free(extra);
	free(mem_code);
	free(inst);
	free(want);
	free(got);
}

static int write_modules(const char *dir, const char *text, const struct kernel_case *kc)
{
	char *mem_code = NULL, *extra = ptx_corpus_probes_mem("sm_75", NULL, &mem_code);
	struct err e = {{0}};
	int rc = extra && mem_code ? 0 : 1;

	for (int i = 0; i < 6 && !rc; i++) {
		int in = i >= 3; /* the mem probe inline */
		char *inst = instrument(text, kc[i % 3].name, extra, in ? mem_code : NULL, 0, 0, &e);
		char path[512];
		if (!inst) {
			fprintf(stderr, "%s: %s\n", kc[i % 3].name, e.msg);
			rc = 1;
			break;
		}
		snprintf(path, sizeof(path), "%s/inject_%s%s.ptx", dir, in ? "inline_" : "",
			 kc[i % 3].name);
		rc = gpu_write_file(path, inst) ? 1 : 0;
		free(inst);
	}
	free(extra);
	free(mem_code);
	return rc;
}

int main(int argc, char **argv)
{
	struct kernel_case kc[4];
	struct ptx_rt *rt;
	struct err e = {{0}};
	size_t len;
	char *text = test_read_file(MODULE_PATH, &len), *loops = test_read_file(LOOPS_PATH, &len);

	if (!text || !loops) {
		printf("FAIL cannot read %s or %s (run from the repository root)\n", MODULE_PATH,
		       LOOPS_PATH);
		free(text);
		free(loops);
		return 1;
	}
	cases(kc);
	if (argc == 3 && !strcmp(argv[1], "--ptx-out")) {
		int rc = write_modules(argv[2], text, kc);
		free(text);
		free(loops);
		return rc;
	}
	if (ptx_rt_open(0, &rt, &e)) {
		printf("SKIP inject_check: %s\n", e.msg);
		free(text);
		free(loops);
		return GPU_EXIT_SKIP;
	}
	printf("GPU: %s, sm_%d%d, %d SMs, driver %d\n", rt->name, rt->cc_major, rt->cc_minor,
	       rt->nr_sms, rt->cu->version);
	/* inputs: floats with every kind of bit pattern, small integers */
	float *a = malloc(4 * N), *b = malloc(4 * N);
	uint32_t *u = malloc(4 * N);
	for (int i = 0; i < N; i++) {
		a[i] = (float)i * 0.37f - 1000.0f;
		b[i] = 1.0f / (float)(i + 1);
		u[i] = (uint32_t)(i % 7 + 1);
	}
	void *in_add[2] = {a, b}, *in_reduce[1] = {u}, *in_none[1] = {NULL};
	int modes = rt->cc_major * 10 + rt->cc_minor >= PTX_ELECT_SYNC_SM ? 4 : 3;
	for (int mem_inline = 0; mem_inline < modes; mem_inline++) {
		check_kernel(rt, text, &kc[0], in_add, mem_inline);
		check_kernel(rt, text, &kc[1], in_reduce, mem_inline);
		check_kernel(rt, text, &kc[2], in_none, mem_inline);
		check_kernel(rt, loops, &kc[3], in_reduce, mem_inline);
	}
	printf("inject_check: %s (%d failed)\n", failures ? "FAILED" : "all passed", failures);
	free(a);
	free(b);
	free(u);
	free(text);
	free(loops);
	ptx_rt_close(rt);
	return failures ? 1 : 0;
}
