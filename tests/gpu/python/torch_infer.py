# A PyTorch inference loop for the host tools (tests/gpu/hosttools.sh): a
# small convolutional classifier in eval mode under inference_mode, batches
# of images copied to the GPU, predictions copied back.  Each batch launches
# the erfinv marker kernel once.  Prints the same last line as torch_train.py.
import sys
import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import hosttools_common as hc  # noqa: E402

BATCHES, BATCH = 40, 64
torch.manual_seed(1)
via = hc.plant_leak()
model = torch.nn.Sequential(
    torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
    torch.nn.Flatten(), torch.nn.Linear(32, 10)).eval()
model = hc.module_to_dev(model)
predicted = 0
with torch.inference_mode():
    for b in range(BATCHES):
        images = hc.to_dev(torch.randn(BATCH, 3, 32, 32))
        logits = model(images)
        hc.marker(logits)
        pred = hc.to_host(logits.argmax(1))
        predicted += pred.numel()
hc.synchronize()
print(f"torch_infer: batches={BATCHES} predicted={predicted} leak via {via}")
hc.report("torch_infer", BATCHES)
