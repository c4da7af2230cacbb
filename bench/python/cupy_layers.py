#!/usr/bin/env python3
# cupy_layers - a CuPy application on managed memory for the memory-policy
# bench (bench/mem_policy_bench.sh with W=bench/python/cupy_layers.py
# PATTERNS=layers): every array comes from cudaMallocManaged
# (cupy.cuda.malloc_managed as CuPy's allocator), 24 layers of weights
# (the footprint -n MiB) are applied forward then backward each pass (DNN
# training's block-periodic pattern) by a kernel CuPy generates and
# compiles with NVRTC (to PTX with CUPY_COMPILE_WITH_PTX=1, so that the
# agent can instrument it).  The same command line and output lines as
# examples/cuda/uvm_workload:
#
#   cupy_layers.py -pattern layers -n 384 -iters 2
import argparse
import ctypes
import hashlib
import time

import cupy as cp
import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("-pattern", default="layers", choices=["layers"])
ap.add_argument("-n", type=int, default=384, help="MiB of managed weights")
ap.add_argument("-iters", type=int, default=2, help="passes (forward + backward)")
a = ap.parse_args()

cp.cuda.set_allocator(cp.cuda.malloc_managed)
LAYERS = 24
per = (a.n << 20) // 4 // LAYERS
# the weights: written on the host (so the first pass migrates them in)
ws = []
for i in range(LAYERS):
    w = cp.empty(per, dtype=cp.float32)
    # managed memory has one address for both sides: the CPU writes it
    np.ctypeslib.as_array((ctypes.c_float * per).from_address(w.data.ptr))[:] = 1.0 + i / 1024.0
    ws.append(w)
h = cp.zeros(per, dtype=cp.float32)
layer = cp.ElementwiseKernel("float32 w", "float32 h", "h = h * w * 0.5f + 0.5f", "gx_layer")
# warm-up on a small array: compiling (and an agent's instrumentation) stays
# out of time_ms
layer(cp.ones(1024, dtype=cp.float32), cp.ones(1024, dtype=cp.float32))
cp.cuda.runtime.deviceSynchronize()
t0 = time.perf_counter()
launches = 0
for it in range(a.iters):
    for l in list(range(LAYERS)) + list(range(LAYERS - 1, -1, -1)):
        layer(ws[l], h)
        launches += 1
cp.cuda.runtime.deviceSynchronize()
ms = (time.perf_counter() - t0) * 1e3
out = h.get()
print("cupy_layers: pattern=layers bytes=%d launches=%d" % (per * 4 * LAYERS, launches))
print("time_ms: %.1f" % ms)
print("checksum: 0x%s" % hashlib.sha256(out.tobytes()).hexdigest()[:16])
if np.isfinite(out).all() and out.min() > 0:
    print("result: ok (finite, positive)")
else:
    print("cupy_layers: MISMATCH: non-finite or non-positive values")
    raise SystemExit(1)
