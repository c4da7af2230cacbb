// Kernels with known outputs: the GPU batch (tests/gpu/inject_check.c) runs
// them original and instrumented and compares outputs and probe counts.
extern "C" __global__ void vec_add(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

// Sum of a[] into *out with one atomic per thread.
extern "C" __global__ void reduce_atomic(const unsigned *a, unsigned *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		atomicAdd(out, a[i]);
}

// Early returns: odd threads return before storing; even ones store twice.
extern "C" __global__ void early_ret(unsigned *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	if (i & 1)
		return;
	out[i] = (unsigned)i * 3u;
	out[i + 1] = 7u;
}
