# CuPy's own kernels (elementwise, reduction: NVRTC modules CuPy generates,
# with CuPy's headers), no launch shape: python.sh checks that the agent
# instrumented some of them and that the result is the plain run's.
import hashlib
import cupy as cp

n = 1 << 20
x = cp.arange(n, dtype=cp.float32)
y = cp.ones(n, dtype=cp.float32)
z = x * 2.0 + y
s = cp.sum(z)
cp.cuda.runtime.deviceSynchronize()
h = z.get()
assert h[3] == 7.0
print("cupy_elementwise: sum", float(s.get()))
print("checksum:", hashlib.sha256(h.tobytes()).hexdigest()[:16])
