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
#include "ptx_modules.cuh"

int main(int argc, char **argv)
{
	int rounds, iters = 31, first = ptx_modules_args(argc, argv, &rounds);
	int nm = argc - first;
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
		fn[m] = ptx_modules_load(argv[first + m], "_Z10reduce_sumPKilPy", maps);
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
