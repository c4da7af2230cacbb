# A PyTorch training step on a real torch.nn model (a 4-layer transformer
# encoder, d_model 512, batch 32 x 128 tokens, AdamW), timed per step:
# cuBLAS GEMMs, fused attention, layer norms, elementwise and reduction
# kernels, the optimizer's multi-tensor kernels.  Prints one
# "step_ms: X" line per measured step (each step ends with a device
# synchronize), after WARMUP unmeasured steps.
#   python3 train_step.py [STEPS] [WARMUP]
import sys
import time
import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
warmup = int(sys.argv[2]) if len(sys.argv) > 2 else 20
torch.manual_seed(0)
dev = "cuda"
layer = torch.nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048,
                                         batch_first=True)
model = torch.nn.Sequential(torch.nn.Embedding(8192, 512),
                            torch.nn.TransformerEncoder(layer, num_layers=4),
                            torch.nn.Linear(512, 8192)).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
x = torch.randint(0, 8192, (32, 128), device=dev)
y = torch.randint(0, 8192, (32, 128), device=dev)


def step():
    opt.zero_grad(set_to_none=True)
    out = model(x)
    loss = torch.nn.functional.cross_entropy(out.reshape(-1, 8192), y.reshape(-1))
    loss.backward()
    opt.step()
    return loss


for _ in range(warmup):
    step()
torch.cuda.synchronize()
for _ in range(steps):
    t0 = time.perf_counter()
    loss = step()
    torch.cuda.synchronize()
    print(f"step_ms: {(time.perf_counter() - t0) * 1e3:.4f}")
print(f"train_step: steps={steps} loss={loss.item():.4f} torch={torch.__version__}")
