# A real PyTorch training loop for the host tools (tests/gpu/hosttools.sh):
# an MLP classifier, SGD with momentum, synthetic batches made on the host
# and copied to the GPU each step (no DataLoader), a known number of
# optimizer steps.  Each step launches the erfinv marker kernel once (a
# metric, no grad).  Prints, on its last line, the steps, marker launches,
# synchronize calls and the bytes it copied host->device and device->host
# (hosttools_common.py counts every copy), and the planted leak's size.
import sys
import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import hosttools_common as hc  # noqa: E402

STEPS, BATCH, DIM, CLASSES = 30, 128, 256, 10
torch.manual_seed(0)
via = hc.plant_leak()
model = torch.nn.Sequential(
    torch.nn.Linear(DIM, 512), torch.nn.ReLU(),
    torch.nn.Linear(512, 256), torch.nn.ReLU(),
    torch.nn.Linear(256, CLASSES))
model = hc.module_to_dev(model)  # the weights, copied once
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, foreach=False)
w_true = torch.randn(DIM, CLASSES)
optimizer_steps = 0
for step in range(STEPS):
    x_cpu = torch.randn(BATCH, DIM)
    y_cpu = (x_cpu @ w_true).argmax(1)
    x, y = hc.to_dev(x_cpu), hc.to_dev(y_cpu)
    opt.zero_grad(set_to_none=True)
    logits = model(x)
    loss = torch.nn.functional.cross_entropy(logits, y)
    loss.backward()
    opt.step()
    optimizer_steps += 1
    hc.marker(logits.detach())
    if step % 10 == 9:
        hc.synchronize()
final_loss = hc.to_host(loss.detach()).item()
hc.synchronize()
print(f"torch_train: optimizer_steps={optimizer_steps} loss={final_loss:.4f} leak via {via}")
hc.report("torch_train", optimizer_steps)
