# A CuPy RawKernel (compiled by NVRTC at run time), launched 3 times.
# Prints the launch shape as the nvcc examples do, and a checksum.  The
# inputs are copied from the host, so that saxpy is the only kernel that
# runs (CuPy's own kernels: cupy_elementwise.py).
import hashlib
import numpy as np
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
x = cp.asarray(np.arange(n, dtype=np.float32))
y = cp.asarray(np.ones(n, dtype=np.float32))
out = cp.empty_like(x)
print(f"cupy_rawkernel: launches=3 grid={grid} block={block}")
for _ in range(3):
    k((grid,), (block,), (x, y, out, cp.float32(2.0), cp.int32(n)))
cp.cuda.runtime.deviceSynchronize()
h = out.get()
assert (h[:4] == [1, 3, 5, 7]).all()
print("checksum:", hashlib.sha256(h.tobytes()).hexdigest()[:16])
