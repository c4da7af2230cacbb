/* SPDX-License-Identifier: MIT */
/*
 * vecadd_kernel.cuh - the vector-add kernel, shared by vecadd.cu (runtime
 * API, compiled into the fatbin) and the driver-API examples (compiled to
 * PTX at build time and embedded as a string).  extern "C" so that the
 * driver API finds it by its plain name.
 */
extern "C" __global__ void vecadd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}
