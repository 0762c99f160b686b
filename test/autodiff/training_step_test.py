"""Compiled training steps follow PyTorch's training, step by step.

training_step_test.py KILN WORK_DIR      (python with the `kiln` module, torch and onnx)
For each model (an MLP, a small CNN, the CNN with batch normalisation in
training form, a transformer encoder block) and each
optimiser setting: the model is built in PyTorch with seed 0, exported to
ONNX (opset 17, the batch fixed), compiled with `kiln compile --train`,
and trained for 10 steps on the same batches as PyTorch trains its copy
(cross-entropy, SGD with momentum and weight decay, or Adam, with and
without gradient clipping, and with gradient accumulation over 2 or 3
steps). Every step's loss must be within 1e-4
relative of PyTorch's, and the parameters after the last step within 1e-4
relative (of their largest magnitude) of PyTorch's, read through
session.parameter(name), as are batch norms' running statistics. Prints one line per run and "N passed, N failed".
"""
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn as nn

import kiln

KILN, WORK = sys.argv[1:3]
os.makedirs(WORK, exist_ok=True)
BATCH, STEPS = 8, 10


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10)), (1, 8, 8)


def cnn():
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(16 * 2 * 2, 10)), (1, 8, 8)


def cnn_bn():
    # Batch norms after the ReLUs: PyTorch's ONNX export (eval mode) folds a
    # batch norm that directly follows a convolution into it.
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.BatchNorm2d(8), nn.MaxPool2d(2),
                          nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.ReLU(), nn.BatchNorm2d(16),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 2 * 2, 10))
    # Distinct values (the export merges equal initializers, tying them).
    with torch.no_grad():
        for norm in (model[2], model[6]):
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-0.1, 0.1)
            norm.running_mean.uniform_(-0.1, 0.1)
            norm.running_var.uniform_(0.5, 1.5)
    return model, (1, 8, 8)


class Encoder(nn.Module):
    """A transformer encoder block written out (attention, layer norms, GELU MLP)."""

    def __init__(self, d=16, heads=2, seq=6, classes=10):
        super().__init__()
        self.d, self.heads, self.seq = d, heads, seq
        # No bias: the keys' bias has a zero gradient in exact arithmetic
        # (softmax ignores a shift shared by all keys), so Adam would
        # normalise rounding noise into full-size steps on both sides.
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d)
        self.norm1 = nn.LayerNorm(d)
        self.norm2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)
        self.head = nn.Linear(d, classes)
        # Distinct values: torch's ONNX export merges initializers that are
        # equal (both norms' ones and zeros), which would tie them.
        with torch.no_grad():
            for norm in (self.norm1, self.norm2):
                norm.weight.uniform_(0.5, 1.5)
                norm.bias.uniform_(-0.1, 0.1)

    def forward(self, x):
        b, s, d = x.shape
        h = self.heads
        q, k, v = self.qkv(x).reshape(b, s, 3, h, d // h).permute(2, 0, 3, 1, 4)
        att = torch.softmax(q @ k.transpose(-1, -2) / (d // h) ** 0.5, -1)
        y = (att @ v).transpose(1, 2).reshape(b, s, d)
        x = self.norm1(x + self.proj(y))
        x = self.norm2(x + self.fc2(torch.nn.functional.gelu(self.fc1(x))))
        return self.head(x.mean(1))


def encoder():
    return Encoder(), (6, 16)


# (name, model, optimiser, clip, gradient accumulation)
RUNS = [
    ("mlp", mlp, "sgd(lr=0.05,momentum=0.9,weight_decay=0.0001)", None, 1),
    ("mlp", mlp, "adam(lr=0.01)", 1.0, 1),
    ("mlp", mlp, "sgd(lr=0.1,momentum=0.9)", 0.5, 2),
    ("cnn", cnn, "sgd(lr=0.05,momentum=0.9)", None, 1),
    ("cnn", cnn, "adam(lr=0.003,weight_decay=0.001)", 0.5, 1),
    ("cnn", cnn, "adam(lr=0.003)", None, 3),
    ("cnn_bn", cnn_bn, "sgd(lr=0.01,momentum=0.9)", None, 1),
    ("cnn_bn", cnn_bn, "adam(lr=0.003)", 1.0, 1),
    ("encoder", encoder, "adam(lr=0.003)", None, 1),
    ("encoder", encoder, "sgd(lr=0.1,momentum=0.5)", 1.0, 1),
]


def torch_optimizer(spec, params):
    name, args = spec.split("(")
    kwargs = {k: float(v) for k, v in (a.split("=") for a in args.rstrip(")").split(",") if a)}
    return (torch.optim.SGD if name == "sgd" else torch.optim.Adam)(params, **kwargs)


passed = failed = 0
for index, (name, make, optimizer, clip, accum) in enumerate(RUNS):
    torch.manual_seed(0)
    model, shape = make()
    model.train()
    rng = np.random.default_rng(index)
    xs = [rng.standard_normal((BATCH, *shape)).astype(np.float32) for _ in range(STEPS)]
    ts = [rng.integers(0, 10, BATCH).astype(np.int64) for _ in range(STEPS)]
    onnx_path = os.path.join(WORK, f"{name}.onnx")
    torch.onnx.export(model, torch.from_numpy(xs[0]), onnx_path, input_names=["x"],
                      output_names=["logits"], opset_version=17, do_constant_folding=False)
    artifact = os.path.join(WORK, f"{name}-{index}.so")
    cmd = [KILN, "compile", onnx_path, "-o", artifact, "--quiet", "--train",
           "--loss=cross-entropy", f"--optimizer={optimizer}"]
    if clip:
        cmd.append(f"--clip-grad-norm={clip}")
    if accum > 1:
        cmd.append(f"--grad-accum={accum}")
    p = subprocess.run(cmd, capture_output=True, text=True)
    what = (f"{name} {optimizer}{f' clip {clip}' if clip else ''}"
            f"{f' accumulating {accum} steps' if accum > 1 else ''}")
    if p.returncode != 0:
        failed += 1
        print(f"FAIL {what}: kiln compile --train: {(p.stdout + p.stderr)[-800:]}")
        continue
    session = kiln.load(artifact).session(threads=2)
    opt = torch_optimizer(optimizer, model.parameters())
    opt.zero_grad()
    worst_loss = 0.0
    problems = []
    for step in range(STEPS):
        loss = float(session.run({"x": xs[step], "target": ts[step]})["loss"])
        want = torch.nn.functional.cross_entropy(model(torch.from_numpy(xs[step])),
                                                 torch.from_numpy(ts[step]))
        (want / accum).backward()  # accumulation: the mean of the steps' gradients
        if (step + 1) % accum == 0:
            if clip:
                torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            opt.step()
            opt.zero_grad()
        rel = abs(loss - want.item()) / max(abs(want.item()), 1e-12)
        worst_loss = max(worst_loss, rel)
        if rel > 1e-4:
            problems.append(f"step {step}: loss {loss:.7g} vs torch {want.item():.7g}")
    # The parameters after the last step, by their ONNX initializer names.
    worst_param = 0.0
    # Parameters, and batch norms' running statistics (session-owned too).
    state = dict(model.named_parameters())
    state.update({n: b for n, b in model.named_buffers() if "running" in n})
    compared = 0
    for n, _, _ in kiln.load(artifact).parameters:
        if n not in state:
            continue
        got, want = session.parameter(n), state[n].detach().numpy()
        err = np.abs(got - want).max() / max(np.abs(want).max(), 1e-12)
        worst_param = max(worst_param, err)
        compared += 1
        if got.shape != want.shape or err > 1e-4:
            problems.append(f"parameter {n}: relative error {err:.1e}")
    if compared != len(state):
        problems.append(f"{compared} of {len(state)} torch parameters found among kiln's")
    if problems:
        failed += 1
        print(f"FAIL {what}: " + "; ".join(problems[:4]))
    else:
        passed += 1
        print(f"ok {what}: {STEPS} steps, loss {loss:.4f}; worst loss error {worst_loss:.1e}, "
              f"parameters {worst_param:.1e} ({compared} compared)")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
