# A Numba kernel (numba-cuda JIT links PTX with cuLinkAddData).
import hashlib
import numpy as np
from numba import cuda

@cuda.jit
def add(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]

n = 1 << 20
x = np.arange(n, dtype=np.float32)
y = np.ones(n, dtype=np.float32)
out = cuda.device_array_like(x)
grid = (n + 255) // 256
print(f"numba_add: launches=3 grid={grid} block=256")
dx, dy = cuda.to_device(x), cuda.to_device(y)
for _ in range(3):
    add[grid, 256](dx, dy, out)
cuda.synchronize()
h = out.copy_to_host()
print("checksum:", hashlib.sha256(h.tobytes()).hexdigest()[:16])
