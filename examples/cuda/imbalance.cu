/* SPDX-License-Identifier: MIT */
/*
 * imbalance - deliberate load imbalance: every HEAVY_EVERY-th block does
 * HEAVY_FACTOR times the work of the others (each thread iterates an
 * integer hash `iters` times).  The work per block is known exactly, which
 * the tests compare with what per-block and per-SM tools (smload,
 * kernelretsnoop) measure: the heavy blocks' durations stand out, and so
 * do the SMs that ran them.
 *
 *   block b runs LIGHT_ITERS * (b % HEAVY_EVERY == 0 ? HEAVY_FACTOR : 1)
 *   iterations per thread; -n sets the number of blocks.
 */
#include "example_rt.cuh"

enum { THREADS = 256, LIGHT_ITERS = 256, HEAVY_EVERY = 8, HEAVY_FACTOR = 16 };

__host__ __device__ static unsigned block_iters(unsigned b)
{
	return LIGHT_ITERS * (b % HEAVY_EVERY == 0 ? HEAVY_FACTOR : 1);
}

__host__ __device__ static unsigned spin(unsigned x, unsigned iters)
{
	for (unsigned k = 0; k < iters; k++)
		x = (x ^ (x >> 13)) * 0x5bd1e995u + k;
	return x;
}

__global__ void imbalanced(unsigned *out)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	out[i] = spin(i, block_iters(blockIdx.x));
}

int main(int argc, char **argv)
{
	struct example_opts o = example_parse(argc, argv, 1024, 65536, "blocks");
	size_t threads = (size_t)o.n * THREADS, bytes = threads * sizeof(unsigned);
	unsigned *out = (unsigned *)malloc(bytes), *ref = (unsigned *)malloc(bytes), *dout;
	unsigned long long work = 0;
	struct launch_timer t;

	if (!out || !ref)
		return perror("malloc"), 1;
	for (size_t i = 0; i < threads; i++) {
		ref[i] = spin((unsigned)i, block_iters((unsigned)(i / THREADS)));
		work += block_iters((unsigned)(i / THREADS));
	}
	CHECK(cudaMalloc(&dout, bytes));

	timer_init(&t, &o);
	for (long it = 0; it < o.iters; it++) {
		timer_begin(&t);
		imbalanced<<<(unsigned)o.n, THREADS>>>(dout);
		timer_end(&t);
	}
	CHECK(cudaDeviceSynchronize());
	timer_loop_end(&t);
	CHECK(cudaMemcpy(out, dout, bytes, cudaMemcpyDeviceToHost));
	timer_fini(&t);
	printf("imbalance: blocks=%ld launches=%ld block=%d light_iters=%d heavy_every=%d heavy_factor=%d "
	       "thread_iters_per_launch=%llu\n",
	       o.n, o.iters, THREADS, LIGHT_ITERS, HEAVY_EVERY, HEAVY_FACTOR, work);
	int rc = example_finish("imbalance", out, ref, bytes);
	CHECK(cudaFree(dout));
	free(out), free(ref);
	return rc;
}
