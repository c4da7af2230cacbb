#!/usr/bin/env python3
# numba_kernels.py - real Numba PTX for the PTX corpus (tests/ptx_corpus/
# numba_*.ptx), made without a GPU by numba.cuda.compile_ptx:
#
#   NUMBA_FORCE_CUDA_CC=7.5 CUDA_HOME=DIR python3 numba_kernels.py OUTDIR
#
# Made with Debian's python3-numba 0.56.4 and the CUDA 13.0 toolkit's
# libNVVM.  Numba 0.56 looks for libNVVM in $CUDA_HOME/nvvm/lib64 and for
# libdevice in $CUDA_HOME/nvvm/libdevice (CUDA 13 keeps libnvvm.so in
# lib/: DIR is a folder of links to the toolkit's files), and knows CUDA
# only up to 11.x: it tags its IR as NVVM IR 1.6, which CUDA 13's libNVVM
# refuses ("IR version 1.6 incompatible with current version 2.0").  The
# one change made here is that tag, to 2.0 (what numba-cuda writes for
# CUDA 12 and later); the IR and everything else is Numba's own.
import math
import sys

import numba
from llvmlite import ir
from numba import cuda
from numba.cuda.cudadrv import nvvm


def add_ir_version(mod):
    i32 = ir.IntType(32)
    mod.add_named_metadata("nvvmir.version",
                           mod.add_metadata([i32(2), i32(0), i32(3), i32(1)]))


nvvm.add_ir_version = add_ir_version


def saxpy(out, a, x, y):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def block_sum(out, x):
    # a shared-memory tree per block, one atomic add per block
    buf = cuda.shared.array(256, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    s = 128
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        cuda.atomic.add(out, 0, buf[0])


def softplus_2d(out, x):
    # 2-D grid, strided loop, a libdevice call (math.exp, math.log1p)
    r, c = cuda.grid(2)
    sr, sc = cuda.gridsize(2)
    for i in range(r, x.shape[0], sr):
        for j in range(c, x.shape[1], sc):
            out[i, j] = math.log1p(math.exp(x[i, j]))


f32 = numba.float32
KERNELS = {
    "numba_saxpy": (saxpy, (f32[:], f32, f32[:], f32[:])),
    "numba_block_sum": (block_sum, (f32[:], f32[:])),
    "numba_softplus_2d": (softplus_2d, (f32[:, :], f32[:, :])),
}

if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    for name, (fn, sig) in KERNELS.items():
        ptx, _ = cuda.compile_ptx(fn, sig, cc=(7, 5))
        with open(f"{out}/{name}.ptx", "w") as f:
            f.write(ptx)
        print(f"{out}/{name}.ptx: {len(ptx)} bytes, numba {numba.__version__}")
