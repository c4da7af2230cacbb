/* SPDX-License-Identifier: MIT */
/*
 * reduce - the sum of n 32-bit integers: a grid-stride loop per thread, a
 * warp-shuffle reduction, a shared-memory reduction across the block's
 * warps, and one 64-bit atomicAdd per block.  Integer sums are exact, so
 * the result does not depend on the order of the atomics.
 */
#include "example_rt.cuh"

enum { THREADS = 256, BLOCKS = 256 };

__global__ void reduce_sum(const int *in, long n, unsigned long long *sum)
{
	__shared__ long long warp_sums[THREADS / 32];
	long long acc = 0;

	for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
		acc += in[i];
	for (int d = 16; d > 0; d /= 2)
		acc += __shfl_down_sync(0xffffffffu, acc, d);
	if (threadIdx.x % 32 == 0)
		warp_sums[threadIdx.x / 32] = acc;
	__syncthreads();
	if (threadIdx.x == 0) {
		long long block = 0;
		for (int w = 0; w < THREADS / 32; w++)
			block += warp_sums[w];
		/* Two's complement: adding the bits as unsigned adds the signed values. */
		atomicAdd(sum, (unsigned long long)block);
	}
}

int main(int argc, char **argv)
{
	struct example_opts o = example_parse(argc, argv, 1 << 22, 1L << 28, "integers to sum");
	size_t bytes = (size_t)o.n * sizeof(int);
	int *in = (int *)malloc(bytes), *din;
	long long ref = 0, got = 0;
	unsigned long long *dsum;
	struct launch_timer t;

	if (!in)
		return perror("malloc"), 1;
	for (long i = 0; i < o.n; i++) {
		in[i] = (int)example_value(i, 5) * 1000 + (int)(i % 1000);
		ref += in[i];
	}
	CHECK(cudaMalloc(&din, bytes));
	CHECK(cudaMalloc(&dsum, sizeof(*dsum)));
	CHECK(cudaMemcpy(din, in, bytes, cudaMemcpyHostToDevice));

	timer_init(&t, &o);
	for (long it = 0; it < o.iters; it++) {
		/* Each launch computes the sum afresh; the last one is checked. */
		CHECK(cudaMemset(dsum, 0, sizeof(*dsum)));
		timer_begin(&t);
		reduce_sum<<<BLOCKS, THREADS>>>(din, o.n, dsum);
		timer_end(&t);
	}
	CHECK(cudaDeviceSynchronize());
	timer_loop_end(&t);
	CHECK(cudaMemcpy(&got, dsum, sizeof(got), cudaMemcpyDeviceToHost));
	timer_fini(&t);
	printf("reduce: n=%ld launches=%ld grid=%d block=%d sum=%lld\n", o.n, o.iters, BLOCKS, THREADS, got);
	int rc = example_finish("reduce", &got, &ref, sizeof(got));
	CHECK(cudaFree(din));
	CHECK(cudaFree(dsum));
	free(in);
	return rc;
}
