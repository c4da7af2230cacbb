#!/usr/bin/env bash
# Collect real PTX from the Python GPU stacks for the PTX corpus, on a
# machine with a GPU and python3 (triton + torch, cupy, numba-cuda: each
# one that imports is used, the others are named as skipped):
#
#   OUT=/some/dir tests/gpu/collect_ptx.sh
#
# Writes $OUT/ptx/{triton_*,cupy_*,numba_*}.ptx and $OUT/ptx/collect.log.
# Then, where the unit tests are built (build/tests) and ptxas is found,
# runs the parser and injector tests on those files too
# (GPUEXT_PTX_CORPUS_EXTRA), so that every collected kernel is parsed,
# printed, instrumented and assembled.  Copy the files into
# tests/ptx_corpus/ to keep them in the corpus.
set -u
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-build/gpu-out}
dir="$OUT/ptx"
mkdir -p "$dir"
export TRITON_CACHE_DIR="$dir/triton-cache"

# Triton's @jit reads the kernel's source with inspect: the script must be a
# file, not standard input.
cat > "$dir/collect.py" <<'EOF'
import glob, os, shutil, sys, traceback

d = sys.argv[1]
got = []

def save(name, ptx):
    if isinstance(ptx, bytes):
        ptx = ptx.decode()
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(ptx)
    got.append(name)
    print(f"wrote {path} ({len(ptx)} bytes)")

# Triton: a masked vector add and a row softmax (reductions), run once so
# that they are compiled; the PTX from the compiled kernel, and whatever
# .ptx the cache holds.
try:
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)

    @triton.jit
    def softmax_kernel(out, inp, stride, ncols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(inp + row * stride + cols, mask=cols < ncols, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        tl.store(out + row * stride + cols, e / tl.sum(e, axis=0), mask=cols < ncols)

    n = 98432
    x = torch.rand(n, device="cuda")
    y = torch.rand(n, device="cuda")
    o = torch.empty_like(x)
    k = add_kernel[(triton.cdiv(n, 1024),)](x, y, o, n, BLOCK=1024)
    assert torch.equal(o, x + y)
    save("triton_add.ptx", k.asm["ptx"])
    a = torch.randn(64, 781, device="cuda")
    s = torch.empty_like(a)
    k = softmax_kernel[(64,)](s, a, a.stride(0), 781, BLOCK=1024)
    assert torch.allclose(s, torch.softmax(a, dim=1), atol=1e-6)
    save("triton_softmax.ptx", k.asm["ptx"])
    print("triton", triton.__version__, "torch", torch.__version__)
except Exception:
    print("triton: skipped:")
    traceback.print_exc()
for i, p in enumerate(sorted(glob.glob(os.path.join(d, "triton-cache", "**", "*.ptx"),
                                       recursive=True))):
    shutil.copy(p, os.path.join(d, f"triton_cache_{i}.ptx"))
    got.append(f"triton_cache_{i}.ptx")

# CuPy: a RawKernel compiled by NVRTC to PTX for compute_90, run and
# checked; the PTX from NVRTC through cupy's bindings.
src = r'''
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}
'''
try:
    import cupy

    k = cupy.RawKernel(src, "saxpy", options=("-arch=compute_90",), backend="nvrtc")
    x = cupy.arange(1000, dtype=cupy.float32)
    y = cupy.ones(1000, dtype=cupy.float32)
    k((4,), (256,), (cupy.float32(2.0), x, y, cupy.int32(1000)))
    assert bool((y == 2 * x + 1).all())
    try:
        from cupy_backends.cuda.libs import nvrtc
    except ImportError:
        from cupy.cuda import nvrtc
    prog = nvrtc.createProgram(src, "saxpy.cu", [], [])
    nvrtc.compileProgram(prog, ["-arch=compute_90"])
    save("cupy_saxpy.ptx", nvrtc.getPTX(prog))
    nvrtc.destroyProgram(prog)
    print("cupy", cupy.__version__)
except Exception:
    print("cupy: skipped:")
    traceback.print_exc()

# Numba: the PTX of a kernel for the current device.
try:
    from numba import cuda
    import numpy as np

    def add(a, b, c):
        i = cuda.grid(1)
        if i < c.size:
            c[i] = a[i] + b[i]

    def hist(data, bins):
        i = cuda.grid(1)
        if i < data.size:
            cuda.atomic.add(bins, data[i] % bins.size, 1)

    ptx, _ = cuda.compile_ptx_for_current_device(add, "void(float32[:], float32[:], float32[:])")
    save("numba_add.ptx", ptx)
    ptx, _ = cuda.compile_ptx_for_current_device(hist, "void(int32[:], int32[:])")
    save("numba_hist.ptx", ptx)
    a = np.arange(100, dtype=np.float32)
    c = np.zeros_like(a)
    cuda.jit(add)[1, 128](a, a, c)
    assert (c == 2 * a).all()
    import numba
    print("numba", numba.__version__)
except Exception:
    print("numba: skipped:")
    traceback.print_exc()

print("collected:", " ".join(got) if got else "nothing")
EOF
python3 "$dir/collect.py" "$dir" 2>&1 | tee "$dir/collect.log"

status=0
for t in test_ptx_parse test_ptx_inject; do
	if [ -x build/tests/$t ] && [ -x /usr/local/cuda/bin/ptxas ]; then
		GPUEXT_PTX_CORPUS_EXTRA="$dir" build/tests/$t > "$dir/$t.log" 2>&1 || status=1
		tail -n 3 "$dir/$t.log"
	else
		echo "$t: not run (needs build/tests/$t and /usr/local/cuda/bin/ptxas)"
	fi
done
exit $status
