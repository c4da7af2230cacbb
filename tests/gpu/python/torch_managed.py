# The PyTorch training loop of torch_train.py with its data set in CUDA
# managed memory, for uvmtrace (tests/gpu/hosttools.sh): the data set
# (ROWS x DIM float32, 64 MiB) is allocated with cuMemAllocManaged, written
# by the host (its pages are then in host memory), read by the GPU one
# batch per optimizer step through a zero-copy tensor (GPU page faults
# migrate it to the device, every row exactly once over the loop), and read
# back by the host at the end (CPU faults migrate it back).  Prints, on its
# last line, the steps and the managed bytes the GPU touched and the host
# read back.
import ctypes

import numpy as np
import torch

ROWS, DIM, CLASSES, STEPS = 65536, 256, 10, 32
BATCH = ROWS // STEPS
NBYTES = ROWS * DIM * 4
torch.manual_seed(0)
torch.zeros(1, device="cuda")  # the primary context, current on this thread
drv = ctypes.CDLL("libcuda.so.1")
ptr = ctypes.c_uint64()
rc = drv.cuMemAllocManaged(ctypes.byref(ptr), ctypes.c_size_t(NBYTES), ctypes.c_uint(1))
assert rc == 0, f"cuMemAllocManaged = {rc}"
host = np.frombuffer((ctypes.c_float * (ROWS * DIM)).from_address(ptr.value),
                     dtype=np.float32).reshape(ROWS, DIM)
host[:] = np.random.default_rng(0).standard_normal((ROWS, DIM), dtype=np.float32)


class Managed:
    """The data set as the GPU sees it (the CUDA array interface: no copy)."""
    __cuda_array_interface__ = {"shape": (ROWS, DIM), "typestr": "<f4",
                                "data": (ptr.value, False), "version": 2}


data = torch.as_tensor(Managed(), device="cuda")
assert data.data_ptr() == ptr.value, "torch copied the managed data set"
model = torch.nn.Sequential(
    torch.nn.Linear(DIM, 512), torch.nn.ReLU(),
    torch.nn.Linear(512, 256), torch.nn.ReLU(),
    torch.nn.Linear(256, CLASSES)).to("cuda")
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, foreach=False)
w_true = torch.randn(DIM, CLASSES, device="cuda")
for step in range(STEPS):
    x = data[step * BATCH:(step + 1) * BATCH]
    y = (x @ w_true).argmax(1)
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
torch.cuda.synchronize()
checksum = float(host.astype(np.float64).sum())  # the host reads it all back
print(f"torch_managed: loss={loss.item():.4f} checksum={checksum:.3f}")
assert drv.cuMemFree_v2(ctypes.c_uint64(ptr.value)) == 0
print(f"torch_managed: steps={STEPS} managed_bytes={NBYTES} gpu_touched_bytes={NBYTES} "
      f"host_read_bytes={NBYTES}")
