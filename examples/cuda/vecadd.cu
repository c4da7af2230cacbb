/* SPDX-License-Identifier: MIT */
/*
 * vecadd - c = a + b over n floats, 256 threads per block, launched -iters
 * times.  The overhead benchmarks' small kernel (a few microseconds).
 */
#include "example_rt.cuh"
#include "vecadd_kernel.cuh"

int main(int argc, char **argv)
{
	struct example_opts o = example_parse(argc, argv, 1 << 20, 1L << 28, "elements");
	size_t bytes = (size_t)o.n * sizeof(float);
	float *a = (float *)malloc(bytes), *b = (float *)malloc(bytes);
	float *c = (float *)malloc(bytes), *ref = (float *)malloc(bytes);
	float *da, *db, *dc;
	struct launch_timer t;

	if (!a || !b || !c || !ref)
		return perror("malloc"), 1;
	for (long i = 0; i < o.n; i++) {
		a[i] = example_value(i, 1);
		b[i] = example_value(i, 2);
		ref[i] = a[i] + b[i];
	}
	CHECK(cudaMalloc(&da, bytes));
	CHECK(cudaMalloc(&db, bytes));
	CHECK(cudaMalloc(&dc, bytes));
	CHECK(cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice));

	timer_init(&t, &o);
	unsigned blocks = (unsigned)((o.n + 255) / 256);
	for (long it = 0; it < o.iters; it++) {
		timer_begin(&t);
		vecadd<<<blocks, 256>>>(da, db, dc, (int)o.n);
		timer_end(&t);
	}
	CHECK(cudaDeviceSynchronize());
	timer_loop_end(&t);
	CHECK(cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost));
	timer_fini(&t);
	printf("vecadd: n=%ld launches=%ld grid=%u block=256\n", o.n, o.iters, blocks);
	int rc = example_finish("vecadd", c, ref, bytes);
	CHECK(cudaFree(da));
	CHECK(cudaFree(db));
	CHECK(cudaFree(dc));
	free(a), free(b), free(c), free(ref);
	return rc;
}
