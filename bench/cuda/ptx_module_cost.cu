// SPDX-License-Identifier: MIT
/*
 * ptx_module_cost - vecadd's kernel from several PTX modules timed side by
 * side: the module the agent wrote (FAKECUDA_DUMP's mod-N.ptx) beside
 * copies of it edited by hand, to find which part of the emitted code
 * costs what, with everything else the same (no gpuext at run time).
 *
 *   nvcc -O2 -arch=sm_90 bench/cuda/ptx_module_cost.cu -lcuda -o build/bench/ptx_module_cost
 *   ptx_module_cost [-rounds R] PLAIN.ptx A.ptx B.ptx ...
 *
 * Each module must have `.entry vecadd(a, b, c, n[, launch id])` (the
 * example's kernel, examples/vecadd.cu); the first is the baseline.  A
 * module's `gx_map_table` (the agent's map table, .const), where it has
 * one, gets every entry pointed at one zeroed buffer of 64 MiB, so that
 * the maps the probes write are real memory.  Checks c = a + b for every
 * module, then R rounds (default 15) of 31 launches a module, n = 16M,
 * 256 threads a block (cost_rounds.cuh: the median ratio to the first
 * module of the same round, and its range).
 */
#include <cuda.h>

#include <fstream>
#include <sstream>
#include <string>

#include "cost_rounds.cuh"

#define CU(call)                                                               \
	do {                                                                   \
		CUresult r_ = (call);                                          \
		if (r_ != CUDA_SUCCESS) {                                      \
			const char *s_ = "?";                                  \
			cuGetErrorString(r_, &s_);                             \
			printf("%s:%d: %s: %s\n", __FILE__, __LINE__, #call, s_); \
			exit(1);                                               \
		}                                                              \
	} while (0)

static std::string slurp(const char *path)
{
	std::ifstream f(path);
	if (!f) {
		printf("ptx_module_cost: cannot read %s\n", path);
		exit(1);
	}
	std::stringstream s;
	s << f.rdbuf();
	return s.str();
}

int main(int argc, char **argv)
{
	int rounds = 15, iters = 31, first = 1;
	if (argc > 2 && std::string(argv[1]) == "-rounds") {
		rounds = atoi(argv[2]);
		first = 3;
	}
	int nm = argc - first;
	if (nm < 1) {
		printf("usage: ptx_module_cost [-rounds R] PLAIN.ptx A.ptx ...\n");
		return 2;
	}
	const int n = 1 << 24, blocks = (n + 255) / 256;
	const size_t map_bytes = 64u << 20;
	float *a, *b, *c;
	void *maps;
	CK(cudaMalloc(&a, n * 4)); CK(cudaMalloc(&b, n * 4)); CK(cudaMalloc(&c, n * 4));
	CK(cudaMalloc(&maps, map_bytes)); CK(cudaMemset(maps, 0, map_bytes));
	std::vector<float> ha(n), hb(n), hc(n);
	for (int i = 0; i < n; i++) {
		ha[i] = (float)(i % 1000) * 0.5f;
		hb[i] = (float)(i % 333) * 0.25f;
	}
	CK(cudaMemcpy(a, ha.data(), n * 4, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(b, hb.data(), n * 4, cudaMemcpyHostToDevice));
	std::vector<CUfunction> fn(nm);
	std::vector<const char *> names(nm);
	for (int m = 0; m < nm; m++) {
		std::string ptx = slurp(argv[first + m]);
		/* GX_MAPS_ADDR: the maps' buffer as an immediate, for variants
		 * that take a map's address so instead of from its table */
		char addr[32];
		snprintf(addr, sizeof addr, "0x%llx", (unsigned long long)(uintptr_t)maps);
		for (size_t at; (at = ptx.find("GX_MAPS_ADDR")) != std::string::npos;)
			ptx.replace(at, 12, addr);
		CUmodule mod;
		char log[8192] = "";
		CUjit_option opt[] = { CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
		void *val[] = { log, (void *)(uintptr_t)sizeof log };
		if (cuModuleLoadDataEx(&mod, ptx.c_str(), 2, opt, val) != CUDA_SUCCESS) {
			printf("ptx_module_cost: %s does not load: %s\n", argv[first + m], log);
			return 1;
		}
		CU(cuModuleGetFunction(&fn[m], mod, "vecadd"));
		for (const char *table_name : { "gx_map_table", "gx_map_gtable" }) {
			CUdeviceptr table;
			size_t size;
			if (cuModuleGetGlobal(&table, &size, mod, table_name) == CUDA_SUCCESS) {
				std::vector<unsigned long long> v(size / 8, (unsigned long long)(uintptr_t)maps);
				CU(cuMemcpyHtoD(table, v.data(), size));
			}
		}
		names[m] = argv[first + m];
	}
	unsigned long long lid = 1;
	auto launch = [&](int m) {
		/* a launch id, then the maps' buffer for variants that take a
		 * map's address as a kernel parameter */
		void *args[] = { &a, &b, &c, (void *)&n, &lid, &maps, &maps, &maps, &maps };
		CU(cuLaunchKernel(fn[m], blocks, 1, 1, 256, 1, 1, 0, 0, args, nullptr));
	};
	for (int m = 0; m < nm; m++) {
		CK(cudaMemset(c, 0, n * 4));
		launch(m);
		CK(cudaDeviceSynchronize());
		CK(cudaMemcpy(hc.data(), c, n * 4, cudaMemcpyDeviceToHost));
		long bad = 0;
		for (int i = 0; i < n; i++)
			bad += hc[i] != ha[i] + hb[i];
		printf("check %s: %ld of %d wrong\n", names[m], bad, n);
	}
	cost_rounds(nm, names.data(), rounds, iters, launch);
}
