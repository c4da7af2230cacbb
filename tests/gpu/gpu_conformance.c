/* SPDX-License-Identifier: MIT */
/*
 * gpu_conformance CASES_DIR - every conformance case on the GPU.
 *
 * All cases are translated into one module (one JIT by the driver); each
 * case's standalone kernel then runs once on a device copy of its memory,
 * and r0 is compared with the case's result (the interpreter's), callx (not
 * RFC 9669) included.  A case the translator refuses is reported as skipped.
 * Exit 0 all passed, 1 any failed, 77 no GPU; with --ptx-out FILE only the
 * module is written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_common.h"
#include "ptx/ptx_rt.h"
#include "ptx_conf.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Symbol of case i; 0 if translated. */
static char *build_module(const struct ptx_target *t, struct conf_case *cases, int n,
			  char *ok)
{
	struct ptx_buf b = {0};

	ptx_emit_header(&b, t);
	ptx_emit_runtime(&b);
	for (int i = 0; i < n; i++) {
		struct prog p = {.name = cases[i].name, .insns = cases[i].insns,
				 .insn_cnt = cases[i].insn_cnt};
		struct ptx_emit_opts o = {.conformance_helpers = 1};
		char sym[32];
		struct err e = {{0}};
		snprintf(sym, sizeof(sym), "gx_case%d", i);
		o.symbol = sym;
		ok[i] = ptx_emit_prog(&b, &p, &o, NULL, &e) == 0;
		if (!ok[i]) {
			printf("SKIP %s: %s\n", cases[i].name, e.msg);
			continue;
		}
		ptx_emit_run_kernel(&b, sym);
	}
	return ptx_buf_take(&b, NULL);
}

int main(int argc, char **argv)
{
	struct conf_case *cases;
	struct ptx_rt *rt;
	struct ptx_target t;
	struct err e = {{0}};
	int n, passed = 0, failed = 0, skipped = 0;
	CUmodule mod;

	if (argc == 4 && !strcmp(argv[1], "--ptx-out")) {
		n = ptx_conf_load_all(argv[3], &cases);
		if (n <= 0)
			return 1;
		char *ok = calloc(n, 1);
		ptx_target_parse("sm_90", &t, NULL);
		char *text = build_module(&t, cases, n, ok);
		int rc = !text || gpu_write_file(argv[2], text);
		free(text);
		free(ok);
		ptx_conf_free_all(cases, n);
		return rc;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: gpu_conformance CASES_DIR | --ptx-out FILE CASES_DIR\n");
		return 2;
	}
	n = ptx_conf_load_all(argv[1], &cases);
	if (n <= 0) {
		fprintf(stderr, "gpu_conformance: no cases in %s\n", argv[1]);
		return 1;
	}
	if (ptx_rt_open(0, &rt, &e)) {
		printf("SKIP gpu_conformance: %s\n", e.msg);
		return GPU_EXIT_SKIP;
	}
	char tname[16];
	printf("GPU: %s, target %s (PTX %u.%u)\n", rt->name,
	       ptx_target_name(&rt->target, tname, sizeof(tname)), rt->target.isa_major,
	       rt->target.isa_minor);
	char *ok = calloc(n, 1);
	double t0 = now_s();
	char *text = build_module(&rt->target, cases, n, ok);
	double t1 = now_s();
	if (!text || ptx_rt_module_load(rt, text, &mod, &e)) {
		printf("FAIL loading the module of %d cases: %s\n", n, text ? e.msg : "no memory");
		return 1;
	}
	double t2 = now_s();
	printf("translated %d cases in %.1f ms, driver JIT %.1f ms (%zu bytes of PTX)\n", n,
	       (t1 - t0) * 1e3, (t2 - t1) * 1e3, strlen(text));
	CUdeviceptr dmem = 0, dout = 0;
	const struct cu_driver *cu = rt->cu;
	if (cu->mem_alloc(&dmem, 4096) != CUDA_SUCCESS || cu->mem_alloc(&dout, 8) != CUDA_SUCCESS) {
		printf("FAIL cuMemAlloc\n");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		char sym[48];
		CUfunction fn;
		uint64_t r0 = 0xdeadbeefdeadbeefull, len = cases[i].mem_len;
		CUdeviceptr arg = len ? dmem : 0;
		CUresult r;
		if (!ok[i]) {
			skipped++;
			continue;
		}
		snprintf(sym, sizeof(sym), "gx_case%d_run", i);
		void *params[] = {&arg, &len, &dout};
		if ((r = cu->module_get_function(&fn, mod, sym)) != CUDA_SUCCESS ||
		    (len > 4096 ? (r = CUDA_ERROR_INVALID_VALUE) : CUDA_SUCCESS) != CUDA_SUCCESS ||
		    (len && (r = cu->memcpy_htod(dmem, cases[i].mem, len)) != CUDA_SUCCESS) ||
		    (r = cu->memcpy_htod(dout, &r0, 8)) != CUDA_SUCCESS ||
		    (r = cu->launch_kernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL)) !=
			    CUDA_SUCCESS ||
		    (r = cu->ctx_synchronize()) != CUDA_SUCCESS ||
		    (r = cu->memcpy_dtoh(&r0, dout, 8)) != CUDA_SUCCESS) {
			char buf[160];
			printf("FAIL %s: %s\n", cases[i].name, cu_errstr(cu, r, buf, sizeof(buf)));
			failed++;
			if (r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_LAUNCH_FAILED)
				break; /* the context is lost */
			continue;
		}
		if (r0 == cases[i].result) {
			passed++;
			printf("PASS %s\n", cases[i].name);
		} else {
			failed++;
			printf("FAIL %s: r0 0x%llx, expected 0x%llx\n", cases[i].name,
			       (unsigned long long)r0, (unsigned long long)cases[i].result);
		}
	}
	printf("conformance (ptx backend, %s): %d passed, %d failed, %d skipped\n", rt->name,
	       passed, failed, skipped);
	free(text);
	free(ok);
	ptx_conf_free_all(cases, n);
	ptx_rt_close(rt);
	return failed ? 1 : 0;
}
