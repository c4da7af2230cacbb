# What the host tools' PyTorch workloads share (tests/gpu/hosttools.sh):
# the planted leak, the marker op and the copy accounting.
#
# Every host<->device copy the scripts make goes through to_dev()/to_host(),
# which add the tensor's bytes to the totals printed at the end, so the
# script knows exactly what cudatrace must report (HtoD/DtoH bytes).
#
# The leak is a driver allocation made through ctypes and never freed.
# PyTorch's caching allocator keeps what it got from cudaMalloc and calls
# cuMemAlloc rarely, so a tensor cannot be planted as a leak: the check is
# at the driver level (cudatrace's leaks are driver allocations that were
# never freed; PyTorch's own cached blocks show up too).  Two leaks: one
# through cudart's cudaMalloc when a libcudart is loaded in the process (it
# reaches cuMemAlloc through the pointers cuGetProcAddress handed it), one
# through libcuda's cuMemAlloc_v2 (through dlsym, as ctypes finds it).
import ctypes
import torch

LEAK_BYTES = 3 * 2**20 + 12345   # odd, to be recognisable in the leak list
DRIVER_LEAK_BYTES = 5 * 2**20 + 4321  # the same, through libcuda itself
FREED_BYTES = 2**20 + 777        # allocated and freed: must not be a leak

copies = {"htod": 0, "dtoh": 0}
marker_calls = 0
sync_calls = 0
cudart_leak = False


def to_dev(t, dev="cuda"):
    copies["htod"] += t.element_size() * t.nelement()
    return t.to(dev)


def module_to_dev(m, dev="cuda"):
    """Module.to copies every parameter and buffer once (non_blocking=False)."""
    copies["htod"] += sum(t.element_size() * t.nelement() for t in m.state_dict().values())
    return m.to(dev)


def to_host(t):
    copies["dtoh"] += t.element_size() * t.nelement()
    return t.cpu()


def marker(t):
    """One launch of the erfinv kernel: a name no other op of these scripts
    has, a kernel PyTorch ships precompiled (launched through cudart, like
    most of its kernels; not JIT-compiled at run time)."""
    global marker_calls
    marker_calls += 1
    with torch.no_grad():
        return torch.erfinv(torch.tanh(t))


def synchronize():
    global sync_calls
    sync_calls += 1
    torch.cuda.synchronize()


def _loaded_lib(stem):
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if "/" + stem in path and ".so" in path:
                return path
    return None


def plant_leak():
    """Allocates LEAK_BYTES through cudart's cudaMalloc (when a libcudart is
    loaded) and DRIVER_LEAK_BYTES through libcuda's cuMemAlloc_v2, never
    frees them; allocates and frees FREED_BYTES.  Returns the APIs used."""
    global cudart_leak
    torch.zeros(1, device="cuda")  # context current on this thread
    used = []
    path = _loaded_lib("libcudart")
    if path:
        rt, ptr = ctypes.CDLL(path), ctypes.c_void_p()
        for n in (LEAK_BYTES, FREED_BYTES):
            rc = rt.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(n))
            assert rc == 0, f"cudaMalloc({n}) = {rc}"
        assert rt.cudaFree(ptr) == 0
        used.append("cudart " + path)
        cudart_leak = True
    drv, dptr = ctypes.CDLL("libcuda.so.1"), ctypes.c_uint64()
    sizes = (DRIVER_LEAK_BYTES,) if path else (DRIVER_LEAK_BYTES, FREED_BYTES)
    for n in sizes:
        rc = drv.cuMemAlloc_v2(ctypes.byref(dptr), ctypes.c_size_t(n))
        assert rc == 0, f"cuMemAlloc_v2({n}) = {rc}"
    if not path:
        assert drv.cuMemFree_v2(dptr) == 0
    used.append("driver")
    return " and ".join(used)


def report(name, steps):
    print(f"{name}: steps={steps} marker_launches={marker_calls} sync_calls={sync_calls} "
          f"htod_bytes={copies['htod']} dtoh_bytes={copies['dtoh']} "
          f"leak_bytes={LEAK_BYTES if cudart_leak else 0} driver_leak_bytes={DRIVER_LEAK_BYTES} "
          f"freed_bytes={FREED_BYTES}")
