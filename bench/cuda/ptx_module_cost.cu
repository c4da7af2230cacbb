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
#include "ptx_modules.cuh"

int main(int argc, char **argv)
{
	int rounds, iters = 31, first = ptx_modules_args(argc, argv, &rounds);
	int nm = argc - first;
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
		fn[m] = ptx_modules_load(argv[first + m], "vecadd", maps);
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
