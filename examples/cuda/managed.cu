/* SPDX-License-Identifier: MIT */
/*
 * managed - unified memory that moves: cudaMallocManaged of n MiB (256 by
 * default), written on the host (pages land in host memory), then a kernel
 * adds 1 to every int on the device (GPU page faults migrate every page
 * host -> device), then the host reads it all back (CPU faults migrate it
 * device -> host).  uvmtrace's GPU check compares the migrated bytes with
 * the n MiB touched each way.  No prefetch or advice: the faults are the
 * point.
 */
#include "example_rt.cuh"

__global__ void add_one(int *p, long n)
{
	for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
	     i += (long)gridDim.x * blockDim.x)
		p[i] += 1;
}

int main(int argc, char **argv)
{
	struct example_opts o = example_parse(argc, argv, 256, 4096, "MiB of managed memory");
	size_t bytes = (size_t)o.n << 20;
	long n = (long)(bytes / sizeof(int));
	int *p, *ref = (int *)malloc(bytes);

	if (!ref)
		return perror("malloc"), 1;
	CHECK(cudaMallocManaged(&p, bytes));
	for (long i = 0; i < n; i++)
		p[i] = ref[i] = (int)example_value((uint64_t)i, 3);
	unsigned blocks = 1024;
	for (long it = 0; it < o.iters; it++) {
		add_one<<<blocks, 256>>>(p, n);
		for (long i = 0; i < n; i++)
			ref[i] += 1;
	}
	CHECK(cudaDeviceSynchronize());
	printf("managed: bytes=%zu launches=%ld grid=%u block=256\n", bytes, o.iters, blocks);
	int rc = example_finish("managed", p, ref, bytes); /* the host reads it all */
	CHECK(cudaFree(p));
	free(ref);
	return rc;
}
