# A small PyTorch training loop and an inference pass: cuBLAS GEMMs,
# elementwise and reduction kernels, an optimizer step.  Deterministic
# (fixed seed, deterministic algorithms), so the instrumented run's
# checksum must equal the plain run's.
import hashlib
import torch

torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
torch.backends.cuda.matmul.allow_tf32 = False
dev = "cuda"
model = torch.nn.Sequential(
    torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(256, 512, device=dev)
y = torch.randint(0, 10, (256,), device=dev)
for step in range(20):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
with torch.no_grad():
    pred = model(torch.randn(64, 512, device=dev)).argmax(1)
torch.cuda.synchronize()
print(f"torch_mlp: loss={loss.item():.6f} torch={torch.__version__}")
state = b"".join(p.detach().cpu().numpy().tobytes() for p in model.parameters())
print("checksum:", hashlib.sha256(state + pred.cpu().numpy().tobytes()).hexdigest()[:16])
