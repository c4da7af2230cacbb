/* SPDX-License-Identifier: MIT */
/*
 * gemm - C = A x B for n x n floats, 16 x 16 tiles staged in shared memory
 * (one thread per element of C).  A kernel of about a millisecond at
 * n = 1024: the "long kernel" of the overhead benchmarks.  The inputs are
 * small integers, so every sum is exact and the GPU result equals the CPU
 * reference bit for bit in any summation order.
 */
#include "example_rt.cuh"

enum { TILE = 16 };

__global__ void gemm_tiled(const float *a, const float *b, float *c, int n)
{
	__shared__ float ta[TILE][TILE], tb[TILE][TILE];
	int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
	float acc = 0.0f;

	for (int t = 0; t < n; t += TILE) {
		/* Zero-fill past the edge so that n needs no multiple of TILE. */
		ta[threadIdx.y][threadIdx.x] = row < n && t + threadIdx.x < n ? a[row * n + t + threadIdx.x] : 0.0f;
		tb[threadIdx.y][threadIdx.x] = col < n && t + threadIdx.y < n ? b[(t + threadIdx.y) * n + col] : 0.0f;
		__syncthreads();
		for (int k = 0; k < TILE; k++)
			acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
		__syncthreads();
	}
	if (row < n && col < n)
		c[row * n + col] = acc;
}

int main(int argc, char **argv)
{
	/* n <= 4096: n * 8 * 8 < 2^24 keeps every partial sum exact. */
	struct example_opts o = example_parse(argc, argv, 512, 4096, "matrix side n (n x n)");
	long n = o.n;
	size_t bytes = (size_t)n * n * sizeof(float);
	float *a = (float *)malloc(bytes), *b = (float *)malloc(bytes);
	float *c = (float *)malloc(bytes), *ref = (float *)calloc(1, bytes);
	float *da, *db, *dc;
	struct launch_timer t;

	if (!a || !b || !c || !ref)
		return perror("malloc"), 1;
	for (long i = 0; i < n * n; i++) {
		a[i] = example_value(i, 3);
		b[i] = example_value(i, 4);
	}
	for (long i = 0; i < n; i++) /* i-k-j order: streams through rows of B */
		for (long k = 0; k < n; k++)
			for (long j = 0; j < n; j++)
				ref[i * n + j] += a[i * n + k] * b[k * n + j];
	CHECK(cudaMalloc(&da, bytes));
	CHECK(cudaMalloc(&db, bytes));
	CHECK(cudaMalloc(&dc, bytes));
	CHECK(cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice));

	timer_init(&t, &o);
	dim3 grid((unsigned)((n + TILE - 1) / TILE), (unsigned)((n + TILE - 1) / TILE)), block(TILE, TILE);
	for (long it = 0; it < o.iters; it++) {
		timer_begin(&t);
		gemm_tiled<<<grid, block>>>(da, db, dc, (int)n);
		timer_end(&t);
	}
	CHECK(cudaDeviceSynchronize());
	timer_loop_end(&t);
	CHECK(cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost));
	timer_fini(&t);
	printf("gemm: n=%ld launches=%ld grid=%ux%u block=%dx%d\n", n, o.iters, grid.x, grid.y, TILE, TILE);
	int rc = example_finish("gemm", c, ref, bytes);
	CHECK(cudaFree(da));
	CHECK(cudaFree(db));
	CHECK(cudaFree(dc));
	free(a), free(b), free(c), free(ref);
	return rc;
}
