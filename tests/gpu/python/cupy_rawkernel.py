# A CuPy RawKernel (compiled by NVRTC at run time), launched 3 times.
# Prints the launch shape as the nvcc examples do, and a checksum.
import hashlib
import cupy as cp

src = r'''
extern "C" __global__ void saxpy(const float *x, const float *y, float *out, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = a * x[i] + y[i];
}
'''
n = 1 << 20
block = 256
grid = (n + block - 1) // block
k = cp.RawKernel(src, "saxpy")
x = cp.arange(n, dtype=cp.float32)
y = cp.ones(n, dtype=cp.float32)
out = cp.empty_like(x)
print(f"cupy_rawkernel: launches=3 grid={grid} block={block}")
for _ in range(3):
    k((grid,), (block,), (x, y, out, cp.float32(2.0), cp.int32(n)))
cp.cuda.runtime.deviceSynchronize()
h = out.get()
assert (h[:4] == [1, 3, 5, 7]).all()
print("checksum:", hashlib.sha256(h.tobytes()).hexdigest()[:16])
