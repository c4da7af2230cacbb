// Hand-picked constructs for the PTX parser and injector.
#include <cuda_fp16.h>

__device__ float g_table[64] = {1.0f, 2.0f, 3.0f};
__constant__ int c_coef[4] = {1, 2, 3, 4};
__device__ unsigned g_counter;

__device__ __noinline__ float helper_scale(float x, int k)
{
	return x * (float)c_coef[k & 3] + g_table[k & 63];
}

extern "C" __global__ void vec4_copy(const float4 *in, float4 *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float4 v = __ldg(&in[i]);
		v.x += 1.0f;
		out[i] = v;
	}
}

extern "C" __global__ void __launch_bounds__(256, 2)
shared_reduce(const float *in, float *out, int n)
{
	__shared__ float buf[256];
	int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
	buf[t] = i < n ? in[i] : 0.0f;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (t < s)
			buf[t] += buf[t + s];
		__syncthreads();
	}
	if (t == 0)
		atomicAdd(out, buf[0]);
}

extern "C" __global__ void local_array(const int *idx, int *out, int n)
{
	int loc[32];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	for (int k = 0; k < 32; k++)
		loc[k] = k * i;
	if (i < n)
		out[i] = loc[idx[i] & 31];
}

extern "C" __global__ void atomics(unsigned *p, unsigned long long *q, int *r, double *d)
{
	unsigned i = threadIdx.x;
	atomicAdd(p, 1u);
	atomicCAS(p + 1, i, i + 1);
	atomicExch(p + 2, i);
	atomicMax(r, (int)i);
	atomicMin(r + 1, -(int)i);
	atomicAnd(p + 3, ~i);
	atomicOr(p + 4, i);
	atomicXor(p + 5, i);
	atomicInc(p + 6, 100u);
	atomicAdd(q, 2ull);
	atomicCAS(q + 1, 0ull, (unsigned long long)i);
	atomicAdd(d, 1.0);
	atomicAdd(&g_counter, 1u);
}

extern "C" __global__ void calls(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	x[i] = helper_scale(x[i], i);
	if (x[i] > 100.0f)
		return;
	x[i] = helper_scale(x[i], i + 1);
}

extern "C" __global__ void halfs(const __half2 *a, __half2 *b, const double2 *c, double *d, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		b[i] = __hadd2(a[i], a[i]);
		d[i] = c[i].x * c[i].y;
	}
}

// Generic pointers (no address-space inference possible).
extern "C" __global__ void generic_ptr(int **pp, int sel)
{
	__shared__ int s[32];
	int *p = sel ? pp[threadIdx.x] : &s[threadIdx.x & 31];
	*p = 5;
	__syncthreads();
	if (!sel)
		pp[0][threadIdx.x] = s[(threadIdx.x + 1) & 31];
}

template <typename T> __global__ void templated(T *x, T v)
{
	x[threadIdx.x] += v;
}
template __global__ void templated<int>(int *, int);
template __global__ void templated<double>(double *, double);

extern "C" __global__ void async_copy(const float *in, float *out)
{
	__shared__ float s[128];
#if __CUDA_ARCH__ >= 800
	unsigned sa = (unsigned)__cvta_generic_to_shared(&s[threadIdx.x]);
	asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(sa),
		     "l"(in + blockIdx.x * 128 + threadIdx.x));
	asm volatile("cp.async.wait_all;\n" ::);
#else
	s[threadIdx.x] = in[blockIdx.x * 128 + threadIdx.x];
#endif
	__syncthreads();
	out[blockIdx.x * 128 + threadIdx.x] = s[127 - threadIdx.x];
}

extern "C" __global__ void inline_asm(unsigned *out)
{
	unsigned v;
	asm("{\n\t.reg .pred p;\n\tsetp.eq.u32 p, %1, 0;\n\tselp.u32 %0, 1, 2, p;\n\t}" : "=r"(v)
	    : "r"(threadIdx.x));
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	out[threadIdx.x] = v + (unsigned)(t & 0);
	asm volatile("st.global.wb.u32 [%0+4], %1;" ::"l"(out + threadIdx.x * 2), "r"(v));
}

#include <cstdio>

// printf (vprintf extern, $str globals), cache-hinted and volatile
// accesses, block-scope atomics, dynamic shared memory.
extern "C" __global__ void hints_printf(float *x, volatile int *flag, unsigned *cnt)
{
	extern __shared__ float dyn[];
	unsigned t = threadIdx.x;
	dyn[t] = __ldcs(&x[t]) + __ldlu(&x[t + 32]) + __ldcg(&x[t + 64]);
	__syncthreads();
	__stcs(&x[t], dyn[(t + 1) % blockDim.x]);
	__stwt(&x[t + 32], 1.0f);
	atomicAdd_block(cnt, 1u);
	atomicAdd_system(cnt + 1, 1u);
	if (flag[0] == 12345)
		printf("thread %u sees %f\n", t, (double)x[t]);
	flag[1] = 1;
}

// An indirect call (.callprototype) through a device function pointer.
__device__ int twice(int x) { return 2 * x; }
__device__ int thrice(int x) { return 3 * x; }
typedef int (*int_fn)(int);
__device__ int_fn g_fns[2] = {twice, thrice};

extern "C" __global__ void indirect(int *out, int sel)
{
	out[threadIdx.x] = g_fns[sel & 1](out[threadIdx.x]);
}
