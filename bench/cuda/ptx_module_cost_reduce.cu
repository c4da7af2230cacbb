// SPDX-License-Identifier: MIT
/*
 * ptx_module_cost_reduce - ptx_module_cost's measurement for reduce's
 * kernel (examples/cuda/reduce.cu): the kernel from several PTX modules
 * timed side by side with no gpuext at run time, the first the baseline.
 *
 *   nvcc -O2 -arch=sm_90 bench/cuda/ptx_module_cost_reduce.cu -lcuda -o build/bench/ptx_module_cost_reduce
 *   ptx_module_cost_reduce [-rounds R] PLAIN.ptx A.ptx B.ptx ...
 *
 * Each module must have `.entry _Z10reduce_sumPKilPy(in, n, sum[, launch
 * id])`; its `gx_map_table` (the agent's map table), where it has one,
 * gets every entry pointed at one zeroed buffer of 64 MiB, so that the
 * maps the probes write are real memory.  Checks the sum for every module
 * and prints a hash of what one launch wrote to the maps (modules that
 * count the same way write the same words), then R rounds (default 15) of 31 launches a module, n = 16M, the
 * example's grid of 256 blocks of 256 threads (cost_rounds.cuh: the median
 * ratio to the first module of the same round, and its range).
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

static CUfunction load_kernel(const char *path, void *maps)
{
	std::ifstream f(path);
	if (!f) {
		printf("ptx_module_cost_reduce: cannot read %s\n", path);
		exit(1);
	}
	std::stringstream s;
	s << f.rdbuf();
	CUmodule mod;
	CUfunction fn;
	char log[8192] = "";
	CUjit_option opt[] = { CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *val[] = { log, (void *)(uintptr_t)sizeof log };
	if (cuModuleLoadDataEx(&mod, s.str().c_str(), 2, opt, val) != CUDA_SUCCESS) {
		printf("ptx_module_cost_reduce: %s does not load: %s\n", path, log);
		exit(1);
	}
	CU(cuModuleGetFunction(&fn, mod, "_Z10reduce_sumPKilPy"));
	CUdeviceptr table;
	size_t size;
	if (cuModuleGetGlobal(&table, &size, mod, "gx_map_table") == CUDA_SUCCESS) {
		std::vector<unsigned long long> v(size / 8, (unsigned long long)(uintptr_t)maps);
		CU(cuMemcpyHtoD(table, v.data(), size));
	}
	return fn;
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
		printf("usage: ptx_module_cost_reduce [-rounds R] PLAIN.ptx A.ptx ...\n");
		return 2;
	}
	enum { THREADS = 256, BLOCKS = 256 };
	const long n = 1 << 24;
	const size_t map_bytes = 64u << 20;
	int *in;
	unsigned long long *sum;
	void *maps;
	CK(cudaMalloc(&in, n * 4));
	CK(cudaMalloc(&sum, 8));
	CK(cudaMalloc(&maps, map_bytes));
	CK(cudaMemset(maps, 0, map_bytes));
	std::vector<int> h(n);
	long long ref = 0;
	for (long i = 0; i < n; i++)
		ref += h[i] = (int)(i % 1000) * 7 - 3000;
	CK(cudaMemcpy(in, h.data(), n * 4, cudaMemcpyHostToDevice));
	std::vector<CUfunction> fn(nm);
	for (int m = 0; m < nm; m++)
		fn[m] = load_kernel(argv[first + m], maps);
	unsigned long long lid = 1;
	auto launch = [&](int m) {
		void *args[] = { &in, (void *)&n, &sum, &lid };
		CU(cuLaunchKernel(fn[m], BLOCKS, 1, 1, THREADS, 1, 1, 0, 0, args, nullptr));
	};
	std::vector<unsigned long long> words(map_bytes / 8);
	for (int m = 0; m < nm; m++) {
		long long got = 0;
		CK(cudaMemset(sum, 0, 8));
		CK(cudaMemset(maps, 0, map_bytes));
		launch(m);
		CK(cudaDeviceSynchronize());
		CK(cudaMemcpy(&got, sum, 8, cudaMemcpyDeviceToHost));
		CK(cudaMemcpy(words.data(), maps, map_bytes, cudaMemcpyDeviceToHost));
		unsigned long long hash = 14695981039346656037ull, nonzero = 0;
		for (unsigned long long w : words) {
			hash = (hash ^ w) * 1099511628211ull;
			nonzero += w != 0;
		}
		printf("check %s: sum %lld, expected %lld: %s; maps hash %016llx, %llu words set\n",
		       argv[first + m], got, ref, got == ref ? "ok" : "WRONG", hash, nonzero);
	}
	cost_rounds(nm, (const char *const *)argv + first, rounds, iters, launch);
}
