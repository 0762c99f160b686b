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
session.parameter(name), as are batch norms' running statistics. Then the
artifact's inference entry (session.inference()) on the trained parameters
matches the PyTorch model in eval mode within 1e-4, and checkpoints
(save_state / load_state, damaged files refused, `kiln export-weights`
into the ONNX model) round-trip. Runs marked gpu-emulated compile the step
for the CUDA target's loop nests as mapped onto GPU blocks and threads,
run on the CPU (--target=cuda --emulate-gpu): the backward pass's and the
optimiser's kernels checked against PyTorch the same way.
A run's data must keep PyTorch's trajectory away from the kinks of its
ReLUs and max pools (no ReLU input, and no gap between a pool window's
largest and second largest value, under KINK): within it, float32 rounding
that differs between the two (summation order, exp and log polynomials)
may fall on either side, route the gradient differently, and part the two
trajectories for good. A run whose data comes that close fails as such
(choose other data: a data=N flag seeds its batches).
Prints one line per run and "N passed, N failed".
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
# Activations here are of order 1 (float32 spacing ~1e-7 to 5e-7): a few
# roundings' worth of difference, times a margin.
KINK = 2e-6


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


def kiln_uniform(seed, counter, shape):
    """kiln.random_uniform's numbers (docs/Training.md), in NumPy."""
    i = np.arange(int(np.prod(shape)), dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = (np.uint64(seed) * np.uint64(0xD1B54A32D192ED03)
             + np.uint64(counter) * np.uint64(0x9E3779B97F4A7C15) + i)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    return ((x >> np.uint64(40)).astype(np.float32) * np.float32(2.0**-24)).reshape(shape)


class KilnDropout(nn.Module):
    """PyTorch's dropout with the masks a Kiln training step draws: dropout
    `index` of the model at step `step` (seed --dropout-seed + index)."""

    def __init__(self, p, index):
        super().__init__()
        self.p, self.index, self.step = p, index, 0

    def forward(self, x):
        if not self.training:
            return x
        keep = kiln_uniform(self.index, self.step, tuple(x.shape)) >= np.float32(self.p)
        mask = keep.astype(np.float32) * np.float32(1.0 / (1.0 - self.p))
        return x * torch.from_numpy(mask)


def cnn_bn_dropout():
    # Exported in training mode (Dropout kept, batch norms with
    # training_mode = 1, not folded into the convolutions). No bias before
    # the batch norm: its gradient is zero in exact arithmetic, which Adam
    # would normalise from rounding noise into full-size steps.
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Dropout(0.25), nn.Flatten(),
                          nn.Linear(8 * 4 * 4, 32), nn.ReLU(), nn.Dropout(0.5), nn.Linear(32, 10))
    with torch.no_grad():
        norm = model[1]
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


# (name, model, optimiser, clip, gradient accumulation[, "remat" (--remat),
# "gpu-emulated" (--target=cuda --emulate-gpu), "data=N" (batches seeded N,
# not the run's index)])
RUNS = [
    ("mlp", mlp, "sgd(lr=0.05,momentum=0.9,weight_decay=0.0001)", None, 1),
    ("mlp", mlp, "adam(lr=0.01)", 1.0, 1),
    ("mlp", mlp, "sgd(lr=0.1,momentum=0.9)", 0.5, 2),
    ("cnn", cnn, "sgd(lr=0.05,momentum=0.9)", None, 1),
    ("cnn", cnn, "adam(lr=0.003,weight_decay=0.001)", 0.5, 1),
    ("cnn", cnn, "adam(lr=0.003)", None, 3),
    ("cnn_bn", cnn_bn, "sgd(lr=0.01,momentum=0.9)", None, 1),
    ("cnn_bn", cnn_bn, "adam(lr=0.003)", 1.0, 1),
    # Seeded 8, a ReLU input of step 1 lay 8.5e-7 from zero (see KINK).
    ("cnn_bn", cnn_bn, "adam(lr=0.003)", None, 1, "remat", "data=37"),
    ("encoder", encoder, "adam(lr=0.003)", None, 1),
    ("encoder", encoder, "sgd(lr=0.1,momentum=0.5)", 1.0, 1),
    ("encoder", encoder, "adam(lr=0.003)", 0.5, 2, "remat"),
    ("cnn_bn_dropout", cnn_bn_dropout, "sgd(lr=0.01,momentum=0.9)", None, 1),
    ("cnn_bn_dropout", cnn_bn_dropout, "adam(lr=0.003)", 1.0, 2),
    ("cnn_bn", cnn_bn, "adam(lr=0.003)", 1.0, 1, "gpu-emulated"),
    ("encoder", encoder, "sgd(lr=0.1,momentum=0.5)", 1.0, 2, "gpu-emulated"),
]


def torch_optimizer(spec, params):
    name, args = spec.split("(")
    kwargs = {k: float(v) for k, v in (a.split("=") for a in args.rstrip(")").split(",") if a)}
    return (torch.optim.SGD if name == "sgd" else torch.optim.Adam)(params, **kwargs)


def watch_kinks(model):
    """Forward hooks that keep the closest any ReLU input came to zero and
    any max pool's largest value to its window's second largest (exact ties
    and exact zeros left out: both sides compute those alike), with the
    step. Returns the record: the caller sets "step" before each step."""
    closest = {"distance": float("inf"), "where": "", "step": 0}

    def note(distance, where):
        if distance.numel() and distance.min().item() < closest["distance"]:
            closest.update(distance=distance.min().item(),
                           where=f"{where} at step {closest['step']}")

    def relu(module, inputs, output):
        x = inputs[0].detach().abs()
        note(x[x != 0], "a ReLU input from zero")

    def pool(module, inputs, output):
        pad = module.padding if isinstance(module.padding, tuple) else (module.padding,) * 2
        x = torch.nn.functional.pad(inputs[0].detach(), (pad[1], pad[1], pad[0], pad[0]),
                                    value=-float("inf"))
        cols = torch.nn.functional.unfold(x, module.kernel_size, stride=module.stride)
        cols = cols.reshape(x.shape[0], x.shape[1], -1, cols.shape[-1])
        top = cols.topk(2, dim=2).values
        gap = top[:, :, 0] - top[:, :, 1]
        note(gap[gap != 0], "a max pool's largest value from its second")

    for m in model.modules():
        if isinstance(m, nn.ReLU):
            m.register_forward_hook(relu)
        elif isinstance(m, nn.MaxPool2d):
            m.register_forward_hook(pool)
    return closest


def check_checkpoint(artifact, session, infer, x_eval, x, t, onnx_path, inferred, export):
    """Checkpoints: a session loaded from session.save_state's file takes
    the same next step; a damaged file is refused and changes nothing; the
    inference entry of a fresh session computes the same after loading;
    `kiln export-weights` writes the values into the ONNX model, which
    compiled for inference gives the same outputs."""
    problems = []
    path = artifact + ".kstate"
    session.save_state(path)
    other = kiln.load(artifact).session(threads=2)
    fresh_infer = other.inference()
    first = other.model.parameters[0][0]
    before = np.array(other.parameter(first))
    data = open(path, "rb").read()
    for cut in (0, 9, 20, len(data) // 2, len(data) - 1):
        with open(path + ".bad", "wb") as f:
            f.write(data[:cut])
        try:
            other.load_state(path + ".bad")
            problems.append(f"a checkpoint cut at {cut} bytes was accepted")
        except kiln.Error:
            pass
    if not np.array_equal(before, other.parameter(first)):
        problems.append("a refused checkpoint changed a parameter")
    other.load_state(path)
    if np.abs(fresh_infer.run({"x": x_eval})["logits"] - inferred).max() > 0:
        problems.append("the inference entry differs after loading the checkpoint")
    a = float(session.run({"x": x, "target": t})["loss"])
    b = float(other.run({"x": x, "target": t})["loss"])
    if a != b:
        problems.append(f"the step after loading the checkpoint: loss {b} vs {a}")
    if export:
        trained = artifact + ".trained.onnx"
        p = subprocess.run([KILN, "export-weights", onnx_path, path, "-o", trained, "--inference"],
                           capture_output=True, text=True)
        compiled = artifact + ".trained.so"
        q = p.returncode == 0 and subprocess.run(
            [KILN, "compile", trained, "-o", compiled, "--quiet"], capture_output=True, text=True)
        if p.returncode != 0 or q.returncode != 0:
            problems.append(f"export-weights + compile failed: {(p.stdout + p.stderr)[-300:]}"
                            f"{(q.stdout + q.stderr)[-300:] if q else ''}")
        else:
            got = kiln.load(compiled).session(threads=2).run({"x": x_eval})["logits"]
            err = np.abs(got - inferred).max() / np.abs(inferred).max()
            if err > 1e-5:
                problems.append(f"the exported model differs from the inference entry: {err:.1e}")
    return problems


exported = set()
passed = failed = 0
def saved_bytes(artifact):
    """The activations saved for the backward pass, as `kiln inspect --memory` says."""
    out = subprocess.run([KILN, "inspect", artifact, "--memory"], capture_output=True,
                         text=True).stdout
    line = next((l for l in out.splitlines() if "saved for the backward pass" in l), None)
    return float(line.split(",")[1].split()[0]) if line else None


for index, (name, make, optimizer, clip, accum, *flags) in enumerate(RUNS):
    remat, emulated = "remat" in flags, "gpu-emulated" in flags
    seed = next((int(f[5:]) for f in flags if f.startswith("data=")), index)
    torch.manual_seed(0)
    model, shape = make()
    model.train()
    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal((BATCH, *shape)).astype(np.float32) for _ in range(STEPS)]
    ts = [rng.integers(0, 10, BATCH).astype(np.int64) for _ in range(STEPS)]
    onnx_path = os.path.join(WORK, f"{name}.onnx")
    drops = [i for i, m in enumerate(model.modules()) if isinstance(m, nn.Dropout)]
    mode = torch.onnx.TrainingMode.TRAINING if drops else torch.onnx.TrainingMode.EVAL
    torch.onnx.export(model, torch.from_numpy(xs[0]), onnx_path, input_names=["x"],
                      output_names=["logits"], opset_version=17, do_constant_folding=False,
                      training=mode)
    model.train()
    # PyTorch's copy draws Kiln's masks (dropout k: seed k).
    kiln_drops = []
    if drops:
        positions = [i for i, m in enumerate(model) if isinstance(m, nn.Dropout)]
        for k, i in enumerate(positions):
            model[i] = KilnDropout(model[i].p, k)
            kiln_drops.append(model[i])
    artifact = os.path.join(WORK, f"{name}-{index}.so")
    cmd = [KILN, "compile", onnx_path, "-o", artifact, "--quiet", "--train",
           "--loss=cross-entropy", f"--optimizer={optimizer}"]
    if clip:
        cmd.append(f"--clip-grad-norm={clip}")
    if accum > 1:
        cmd.append(f"--grad-accum={accum}")
    if emulated:
        cmd += ["--target=cuda", "--emulate-gpu"]
    p = subprocess.run(cmd + (["--remat"] if remat else []), capture_output=True, text=True)
    what = (f"{name} {optimizer}{f' clip {clip}' if clip else ''}"
            f"{f' accumulating {accum} steps' if accum > 1 else ''}{' --remat' if remat else ''}"
            f"{' (CUDA loop nests, emulated)' if emulated else ''}")
    if p.returncode != 0:
        failed += 1
        print(f"FAIL {what}: kiln compile --train: {(p.stdout + p.stderr)[-800:]}")
        continue
    remat_note = ""
    if remat:
        # The same step without --remat saves more for the backward pass.
        plain = artifact[:-3] + "-plain.so"
        q = subprocess.run(cmd[:4] + [plain] + cmd[5:], capture_output=True, text=True)
        before, after = saved_bytes(plain), saved_bytes(artifact)
        if q.returncode != 0 or before is None or after is None or not after < before:
            failed += 1
            print(f"FAIL {what}: saved activations {before} KiB without --remat, {after} with")
            continue
        remat_note = f"; saved activations {before} -> {after} KiB"
    session = kiln.load(artifact).session(threads=2)
    opt = torch_optimizer(optimizer, model.parameters())
    opt.zero_grad()
    worst_loss = 0.0
    problems = []
    kink = watch_kinks(model)
    for step in range(STEPS):
        kink["step"] = step
        for d in kiln_drops:
            d.step = step
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
    if kink["distance"] < KINK:
        # The comparison after that step says nothing about Kiln: the data is at fault.
        problems.insert(0, f"the run's data takes {kink['where']} within "
                           f"{kink['distance']:.1e} "
                           f"(under KINK = {KINK:g}): choose other data (data=N)")
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
    # The artifact's inference entry, on the trained parameters (and batch
    # norms' running statistics), against the PyTorch model in eval mode.
    model.eval()
    x_eval = rng.standard_normal((BATCH, *shape)).astype(np.float32)
    with torch.no_grad():
        want = model(torch.from_numpy(x_eval)).numpy()
    infer = session.inference()
    got = infer.run({"x": x_eval})["logits"]
    infer_err = np.abs(got - want).max() / np.abs(want).max()
    if infer_err > 1e-4:
        problems.append(f"inference entry: relative error {infer_err:.1e}")
    problems += check_checkpoint(artifact, session, infer, x_eval, xs[0], ts[0], onnx_path,
                                 got, name not in exported)
    exported.add(name)
    if problems:
        failed += 1
        print(f"FAIL {what}: " + "; ".join(problems[:4]))
    else:
        passed += 1
        print(f"ok {what}: {STEPS} steps, loss {loss:.4f}; worst loss error {worst_loss:.1e}, "
              f"parameters {worst_param:.1e} ({compared} compared); inference entry "
              f"{infer_err:.1e}; checkpoint round trip{remat_note}")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
