// Counted loops that NVVM unrolls 4x (a down-counter, then a remainder
// loop): the injector unrolls them again where they hold probed accesses
// (src/ptx/ptx_unroll.h).  tests/gpu/inject_check.c runs them as nvcc wrote
// them and instrumented, and compares outputs and probe counts.
// Build: nvcc -ptx -arch=compute_75 -o loops.compute_75.ptx loops.cu

// Thread i < n adds i % 37 words of a from a[i / 2] (weighted by their
// turn), one atomic add: every count of turns left, and warps whose lanes
// leave the loop at different turns.
extern "C" __global__ void strided_sum(const unsigned *a, unsigned *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	unsigned s = 0;
	for (int j = 0; j < i % 37; j++)
		s += a[i / 2 + j] * (unsigned)(j + 1);
	atomicAdd(out, s);
}
