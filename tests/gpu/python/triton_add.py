# A Triton kernel (masked vector add), launched 3 times.  Triton compiles
# PTX to a cubin with its own ptxas and loads the cubin: a kernel with no
# PTX, which the agent must run unchanged with one notice.
import hashlib
import torch
import triton
import triton.language as tl

@triton.jit
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)

n = 1 << 20
x = torch.arange(n, device="cuda", dtype=torch.float32)
y = torch.ones(n, device="cuda", dtype=torch.float32)
o = torch.empty_like(x)
grid = triton.cdiv(n, 1024)
print(f"triton_add: launches=3 grid={grid} block=128")
for _ in range(3):
    add_kernel[(grid,)](x, y, o, n, BLOCK=1024, num_warps=4)
torch.cuda.synchronize()
assert torch.equal(o, x + y)
print("checksum:", hashlib.sha256(o.cpu().numpy().tobytes()).hexdigest()[:16])
