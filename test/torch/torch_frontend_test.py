#!/usr/bin/env python3
"""The PyTorch frontend, end to end (run with the venv scripts/torch-venv.sh
makes).

  torch_frontend_test.py models --kiln KILN --work DIR
      torchvision resnet18, mobilenet_v2, squeezenet1_1, efficientnet_b0,
      mobilenet_v3_small (random weights, eval mode), a 2-layer BERT-style encoder and a
      GPT-style decoder (test/torch/transformer_models.py), a UNet-style
      network and torchvision's LR-ASPP segmentation model
      (test/torch/segmentation_models.py), swin_t and maxvit_t, each traced with
      a dynamic batch, compiled once and run at batch 1 and 8 against
      PyTorch (max abs error / max |want| <= 1e-4).
  torch_frontend_test.py checks --kiln KILN --work DIR --onnx-resnet18-bn FILE
      refusals (unsupported ops listed all at once with their lines, a
      branch on data, a module in training mode), the command line
      (`python3 -m kiln_torch compile/ops`), `pip install` of the package,
      the traced resnet18 against the ONNX-imported one (the same kiln ops
      with the same types after the graph phase), division and remainder
      with mixed signs, upsampling, pads, transposed convolutions and group
      and instance norms of other ranks and sizes, advanced indexing,
      index_select, slice_scatter, fmod and full_like, and the composed
      math, reductions, pools, LSTM and GRU against PyTorch.
Prints "N passed, N failed"."""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(SOURCE, "frontends", "torch"))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import torch  # noqa: E402

import kiln_torch  # noqa: E402

passed = failed = 0


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"PASS: {what}", flush=True)
    else:
        failed += 1
        print(f"FAIL: {what} {detail}", flush=True)


def randomize_batch_norms(model):
    """Running statistics and affine parameters away from their initial
    values, so that folding them is visible (and checked)."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.num_features) * 0.1)
                m.running_var.copy_(torch.rand(m.num_features) + 0.5)
                m.weight.copy_(torch.rand(m.num_features) + 0.5)
                m.bias.copy_(torch.randn(m.num_features) * 0.1)
    return model


def run_kiln(kiln, artifact, inputs, want, work):
    args = []
    for i, t in enumerate(inputs):
        path = os.path.join(work, f"input{i}.npy")
        np.save(path, t.numpy())
        args += ["--input", f"@{i}={path}"]
    expected = os.path.join(work, "want.npy")
    np.save(expected, want)
    result = subprocess.run([kiln, "run", artifact] + args +
                            ["--expected", f"output={expected}", "--max-relative-error", "1e-4"],
                            capture_output=True, text=True)
    lines = (result.stdout.strip() or result.stderr.strip()).splitlines()
    return result.returncode == 0, lines[-1] if lines else ""


def models(args):
    import torchvision
    from segmentation_models import LRASPP, UNet
    from transformer_models import Decoder, Encoder

    def tokens(batch):
        ids = torch.randint(0, 1000, (batch, 16))
        mask = torch.cat([torch.ones(batch, 12, dtype=torch.int64),
                          torch.zeros(batch, 4, dtype=torch.int64)], 1)
        return ids, mask

    image = lambda batch: (torch.randn(batch, 3, 224, 224),)  # noqa: E731
    cases = [("resnet18", lambda: randomize_batch_norms(torchvision.models.resnet18()), image),
             ("mobilenet_v2", lambda: randomize_batch_norms(torchvision.models.mobilenet_v2()),
              image),
             ("squeezenet1_1", torchvision.models.squeezenet1_1, image),
             ("efficientnet_b0",
              lambda: randomize_batch_norms(torchvision.models.efficientnet_b0()), image),
             # HardSwish and HardSigmoid, traced as the ONNX importer writes them.
             ("mobilenet_v3_small",
              lambda: randomize_batch_norms(torchvision.models.mobilenet_v3_small()), image),
             ("bert_encoder", Encoder, tokens),
             ("gpt_decoder", Decoder, lambda batch: (tokens(batch)[0],)),
             # Group / instance norms, transposed convolutions, upsampling, pads.
             ("unet_style", UNet, lambda batch: (torch.randn(batch, 3, 32, 32),)),
             ("lraspp_mobilenet_v3_large", lambda: randomize_batch_norms(LRASPP()),
              lambda batch: (torch.randn(batch, 3, 160, 160),)),
             # Shifted windows (roll, the attention mask built by slice
             # assignments) and relative-position tables (advanced indexing).
             ("swin_t", torchvision.models.swin_t, image),
             ("maxvit_t", lambda: randomize_batch_norms(torchvision.models.maxvit_t()), image)]
    for name, build, make_inputs in cases:
        torch.manual_seed(0)
        model = build().eval()
        artifact = os.path.join(args.work, name + ".so")
        try:
            kiln_torch.compile(model, make_inputs(1), artifact)
            ok, detail = True, ""
        except kiln_torch.KilnTorchError as error:
            ok, detail = False, str(error)
        check(ok, f"{name} traces and compiles with a dynamic batch", detail)
        if not ok:
            continue
        for batch in (1, 8):
            inputs = make_inputs(batch)
            with torch.no_grad():
                want = model(*inputs).numpy()
            ok, detail = run_kiln(args.kiln, artifact, inputs, want, args.work)
            check(ok, f"{name} at batch {batch} matches PyTorch: {detail}")


def refusals(args):
    from torch import nn

    class Unsupported(nn.Module):
        def forward(self, x):
            y = torch.fft.rfft(x).abs()
            z = torch.special.bessel_j0(x)
            return y.sum() + z

    class DataDependent(nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x * 2
            return x

    class Training(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn, self.drop = nn.BatchNorm1d(4), nn.Dropout(0.1)

        def forward(self, x):
            return self.drop(self.bn(x))

    this = os.path.abspath(__file__)
    lines = {text: i + 1 for i, text in enumerate(open(this).read().splitlines())}

    def line_of(code):
        return next(n for text, n in lines.items() if text.strip() == code)

    def refused(model, **options):
        try:
            kiln_torch.to_ir(model, (torch.randn(2, 4),), **options)
            return ""
        except kiln_torch.KilnTorchError as error:
            return str(error)

    message = refused(Unsupported().eval())
    check(f"unsupported op aten._fft_r2c.default (1 use):\n  {this}:"
          f"{line_of('y = torch.fft.rfft(x).abs()')} (forward): y = torch.fft.rfft(x).abs()"
          in message and
          f"unsupported op aten.special_bessel_j0.default (1 use):\n  {this}:"
          f"{line_of('z = torch.special.bessel_j0(x)')} (forward)" in message,
          "every unsupported op is listed with its source line, all at once", message)
    message = refused(DataDependent().eval())
    check(f"control flow depends on tensor values at {this}:{line_of('if x.sum() > 0:')} in "
          "forward: `if x.sum() > 0:`" in message,
          "a branch on tensor values is refused with its line", message)
    message = refused(Training())
    check("the module is in training mode; these layers behave differently in training: "
          "bn (BatchNorm1d), drop (Dropout). Call module.eval()" in message,
          "a module in training mode is refused, naming its BatchNorm and Dropout", message)
    class TrainingNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm1d(4)

        def forward(self, x):
            return torch.relu(self.bn(x))

    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        message = refused(TrainingNorm(), allow_training_mode=True)
    check(message == "" and any("bn (BatchNorm1d) is traced in training mode" in str(w.message)
                                for w in caught) and
          any("bn.running_mean (buffer mutation)" in str(w.message) for w in caught),
          "allow_training_mode traces BatchNorm with batch statistics, warning per layer and "
          "that the running statistics' update is not kept", message)
    message = refused(Training(), allow_training_mode=True)
    check("Dropout in training mode draws random numbers" in message,
          "Dropout in training mode is refused even then", message)

    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("calls", torch.zeros(1))

        def forward(self, x):
            self.calls.add_(1)
            return x * 2

    message = refused(Counter().eval())
    check("the module updates state in place: calls (buffer mutation)" in message,
          "an in-place update of a buffer is refused, naming it", message)


def command_line(args):
    env = dict(os.environ, PYTHONPATH=os.path.join(SOURCE, "frontends", "torch"), KILN=args.kiln)
    result = subprocess.run([sys.executable, "-m", "kiln_torch", "ops"], capture_output=True,
                            text=True, env=env)
    ops = result.stdout.split()
    check(result.returncode == 0 and "aten.convolution.default" in ops and
          "aten.scaled_dot_product_attention.default" in ops,
          f"python3 -m kiln_torch ops lists the supported ops ({len(ops)})", result.stderr)
    factory = os.path.join(args.work, "my_models.py")
    with open(factory, "w") as f:
        f.write("import torch\n\ndef make_model():\n"
                "    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(),"
                " torch.nn.Flatten(), torch.nn.Linear(8 * 6 * 6, 10)).eval()\n")
    artifact = os.path.join(args.work, "cli.so")
    result = subprocess.run([sys.executable, "-m", "kiln_torch", "compile",
                             f"{factory}:make_model", "--example-shape", "1x3x8x8", "-o", artifact],
                            capture_output=True, text=True, env=env)
    check(result.returncode == 0 and os.path.exists(artifact) and "compiled" in result.stdout,
          "python3 -m kiln_torch compile FILE.py:FUNCTION writes an artifact", result.stderr)
    ir = os.path.join(args.work, "cli.mlir")
    result = subprocess.run([sys.executable, "-m", "kiln_torch", "export", f"{factory}:make_model",
                             "--example-shape", "1x3x8x8", "-o", ir, "--external-weights"],
                            capture_output=True, text=True, env=env)
    compiled = subprocess.run([args.kiln, "compile", ir, "-o", artifact, "-q"],
                              capture_output=True, text=True)
    check(result.returncode == 0 and os.path.getsize(os.path.join(args.work, "cli.weights")) > 0
          and compiled.returncode == 0,
          "python3 -m kiln_torch export --external-weights writes kiln IR and its weights file, "
          "which kiln compile takes", result.stderr + compiled.stderr)
    with tempfile.TemporaryDirectory() as target, tempfile.TemporaryDirectory() as copy:
        # pip builds in the folder it installs from: a copy keeps the
        # source tree clean.
        import shutil
        package = os.path.join(copy, "torch")
        shutil.copytree(os.path.join(SOURCE, "frontends", "torch"), package,
                        ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
        result = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                                 "--disable-pip-version-check", "--target", target, package],
                                capture_output=True, text=True)
        imported = subprocess.run([sys.executable, "-c", "import kiln_torch; print(kiln_torch.__file__)"],
                                  capture_output=True, text=True,
                                  env=dict(os.environ, PYTHONPATH=target))
        check(result.returncode == 0 and imported.stdout.startswith(target),
              "the package installs with pip", result.stderr + imported.stderr)


def arithmetic(args):
    """Division and remainder with mixed signs against PyTorch, on int64 and
    float32: remainder and floor division take the divisor's sign (Python's
    rule; kiln.rem keeps the dividend's), trunc rounds toward zero."""
    class Binary(torch.nn.Module):
        def __init__(self, f):
            super().__init__()
            self.f = f

        def forward(self, a, b):
            return self.f(a, b)

    cases = [("remainder", torch.remainder), ("%", lambda a, b: a % b),
             ("floor division", lambda a, b: torch.div(a, b, rounding_mode="floor")),
             ("//", lambda a, b: a // b),
             ("trunc division", lambda a, b: torch.div(a, b, rounding_mode="trunc"))]
    operands = {"int64": (torch.tensor([[7, -7, 7, -7, 6, -6, 0, 5, -1]]),
                          torch.tensor([[2, 2, -2, -2, 3, -3, 4, 5, 9]])),
                "float32": (torch.tensor([[5.5, -5.5, 5.5, -5.5, 4.0, -4.0, 0.0, 1.25, -0.5]]),
                            torch.tensor([[2.0, 2.0, -2.0, -2.0, 2.0, 2.0, 3.0, 0.5, 9.0]]))}
    for i, (name, f) in enumerate(cases):
        for dtype, (a, b) in operands.items():
            artifact = os.path.join(args.work, f"arithmetic{i}_{dtype}.so")
            try:
                kiln_torch.compile(Binary(f).eval(), (a, b), artifact)
                ok, detail = True, ""
            except kiln_torch.KilnTorchError as error:
                ok, detail = False, str(error)
            if ok:
                ok, detail = run_kiln(args.kiln, artifact, (a, b), f(a, b).numpy(), args.work)
            check(ok, f"{name} on {dtype} with mixed signs matches PyTorch", detail)


def resampling(args):
    """Upsampling to sizes that are no multiple of the input's (and down),
    by scale factors, in 1-D, 2-D and 3-D, nearest and linear with and
    without align_corners; transposed convolutions in 1-D and 3-D; group
    norm over one group and one channel a group: each against PyTorch."""
    import torch.nn.functional as F
    cases = [
        ("nearest 2-D to 45x7", (2, 3, 32, 10),
         lambda x: F.interpolate(x, size=(45, 7), mode="nearest")),
        ("nearest 2-D by 1.5", (2, 3, 10, 12),
         lambda x: F.interpolate(x, scale_factor=1.5, mode="nearest")),
        ("bilinear 2-D down to 24x5", (2, 3, 64, 11),
         lambda x: F.interpolate(x, size=(24, 5), mode="bilinear")),
        ("bilinear 2-D by 2.5, align_corners", (2, 3, 6, 7),
         lambda x: F.interpolate(x, scale_factor=2.5, mode="bilinear", align_corners=True)),
        ("linear 1-D to 17", (2, 4, 9), lambda x: F.interpolate(x, size=17, mode="linear")),
        ("nearest 1-D by 3", (2, 4, 5), lambda x: F.interpolate(x, scale_factor=3)),
        ("trilinear 3-D to 5x6x7", (2, 2, 3, 4, 5),
         lambda x: F.interpolate(x, size=(5, 6, 7), mode="trilinear")),
        ("nearest 3-D to 6x3x9", (2, 2, 3, 4, 5),
         lambda x: F.interpolate(x, size=(6, 3, 9), mode="nearest")),
        # Through torch's decompositions into the table's ops.
        ("bicubic", (2, 3, 6, 7), lambda x: F.interpolate(x, size=(9, 11), mode="bicubic")),
        ("bicubic, align_corners", (2, 3, 6, 7),
         lambda x: F.interpolate(x, size=(9, 11), mode="bicubic", align_corners=True)),
        ("nearest-exact", (2, 3, 6, 7),
         lambda x: F.interpolate(x, size=(9, 11), mode="nearest-exact")),
        ("area", (2, 3, 10, 7), lambda x: F.interpolate(x, size=(4, 3), mode="area")),
        ("pixel shuffle and unshuffle", (2, 8, 4, 4),
         lambda x: F.pixel_unshuffle(F.pixel_shuffle(x, 2), 2) + x),
        ("unfold", (2, 3, 6, 6), lambda x: F.unfold(x, 3, padding=1, stride=2)),
        ("roll", (2, 7), lambda x: torch.roll(x, 3, 1)),
        ("einsum", (2, 4, 5), lambda x: torch.einsum("bij,bkj->bik", x, x)),
        ("mish, SELU, CELU", (2, 7), lambda x: F.mish(x) + F.selu(x) + F.celu(x)),
        ("GLU, logsigmoid", (2, 8), lambda x: F.glu(x, 1).sum(1, True) + F.logsigmoid(x)),
        ("RMS norm", (2, 8), lambda x: F.rms_norm(x, (8,))),
        ("logsumexp, normalize", (2, 8),
         lambda x: torch.logsumexp(x, 1, True) + F.normalize(x, dim=1)),
        ("max_pool1d, avg_pool1d", (2, 3, 9), lambda x: F.max_pool1d(x, 2) + F.avg_pool1d(x, 2)),
        ("reflect pad 1-D and replicate pad 3-D", (2, 2, 3, 4, 5),
         lambda x: F.pad(F.pad(x.flatten(2), (2, 3), mode="reflect").reshape(-1, 2, 5, 13)
                         .unsqueeze(2), (1, 0, 2, 1, 0, 1), mode="replicate")),
    ]
    torch.manual_seed(0)
    modules = [("transposed convolution 1-D, stride 3, dilation 2", (2, 4, 7),
                torch.nn.ConvTranspose1d(4, 6, 3, stride=3, padding=2, output_padding=1,
                                         dilation=2)),
               ("transposed convolution 3-D, groups 2", (2, 4, 3, 4, 2),
                torch.nn.ConvTranspose3d(4, 6, (2, 3, 2), stride=(2, 1, 2), groups=2)),
               ("transposed convolution 3-D by output phase, strides (2, 1, 3)", (2, 4, 3, 4, 2),
                torch.nn.ConvTranspose3d(4, 6, (3, 2, 4), stride=(2, 1, 3), padding=(1, 0, 2),
                                         output_padding=(1, 0, 2))),
               ("transposed convolution 1-D by output phase, kernel a multiple of the stride",
                (2, 4, 7), torch.nn.ConvTranspose1d(4, 6, 4, stride=2, padding=1)),
               ("group norm, one group", (2, 6, 5, 5), torch.nn.GroupNorm(1, 6)),
               ("group norm, a channel a group", (2, 6, 5, 5), torch.nn.GroupNorm(6, 6)),
               ("instance norm 1-D", (3, 4, 9), torch.nn.InstanceNorm1d(4, affine=True))]
    cases += [(name, shape, m.eval()) for name, shape, m in modules]
    against_torch(args, "resampling", cases)


def indexing(args):
    """Advanced indexing by one, two adjacent and two separated index
    tensors (negative entries too), index_select, slice_scatter, fmod,
    full_like (the ops of swin's shifted windows and maxvit's relative
    positions), gather, scatters, index_put (fold), topk, sort, median and
    kthvalue against PyTorch."""
    rows = torch.tensor([[0, -1], [2, 1]])
    cols = torch.tensor([3, -2])
    targets = torch.tensor([[0, 3, 3]])

    def with_nan(x):
        """x with a NaN in column 4 of every row (the log of a negative)."""
        return torch.where(torch.arange(x.shape[1]) == 4, torch.log(-x.abs() - 1), x)

    def put_rows(x):
        y = x.clone()
        y[:, torch.tensor([0, 3, 3, -1])] = x[:, :4] * 10
        return y

    cases = [("x[:, rows]", (2, 5, 4), lambda x: x[:, rows]),
             ("x[:, rows, cols]", (2, 5, 4, 3), lambda x: x[:, rows, cols]),
             ("x[:, rows, :, cols]", (2, 5, 3, 4), lambda x: x[:, rows, :, cols]),
             ("index_select", (2, 6, 3), lambda x: torch.index_select(x, 1, cols + 2)),
             ("slice_scatter", (2, 6, 3),
              lambda x: torch.slice_scatter(x, x[:, :2] * 10, 1, 3, 5)),
             ("fmod", (2, 7), lambda x: torch.fmod(x * 5, 1.5) + torch.fmod(x * 5, -2.0)),
             ("full_like", (2, 7), lambda x: x[0] + torch.full_like(x[0], 2.5)),
             ("gather by constant indices", (2, 5, 3),
              lambda x: torch.gather(x, 1, torch.tensor([[[0, 4, 1], [2, 2, 0]]]).expand(
                  x.shape[0], 2, 3))),
             ("gather by computed indices, smaller than the input", (2, 5, 3),
              lambda x: torch.gather(x, 2, (x[:, :, :2] > 0).long())),
             ("topk, largest and smallest", (3, 9, 2),
              lambda x: torch.topk(x, 3, 1).values + torch.topk(x, 3, 1).indices
              + torch.topk(x, 3, 1, largest=False)[0] * torch.topk(x, 3, 1, largest=False)[1]),
             ("topk of 5 over 5,000 entries", (2, 5000),
              lambda x: torch.topk(x, 5, 1).values * torch.topk(x, 5, 1).indices
              + torch.topk(x, 5, 1, largest=False)[1]),
             ("topk of 700 over 5,000 entries", (2, 5000),
              lambda x: torch.topk(x, 700, 1).values + torch.topk(x, 700, 1).indices),
             ("topk and stable sort with a NaN: first for the largest, last for the smallest",
              (2, 9), lambda x: torch.cat([
                  torch.topk(with_nan(x), 3, 1).indices,
                  torch.topk(with_nan(x), 3, 1, largest=False).indices,
                  torch.sort(with_nan(x), dim=1, stable=True).indices,
                  torch.sort(with_nan(x), dim=1, descending=True, stable=True).indices], 1).float()
              + torch.nan_to_num(torch.topk(with_nan(x), 2, 1).values, nan=7.0).sum()),
             ("sort, argsort", (2, 9), lambda x: torch.sort(x, 1).values
              + torch.sort(x, 1, descending=True).indices + torch.argsort(x, 1)),
             ("scatter (the last of equal targets wins), of a value", (2, 5),
              lambda x: x.scatter(1, targets.expand(x.shape[0], 3), x[:, 1:4] * 10)
              + x.scatter(1, targets.expand(x.shape[0], 3), 7.0)),
             ("scatter_add, scatter_reduce", (2, 5),
              lambda x: x.scatter_add(1, (x[:, :3] > 0).long() * 2, x[:, :3])
              + x.scatter_reduce(1, (x[:, :3] > 0).long(), x[:, 2:], "amax")
              + x.scatter_reduce(1, (x[:, :3] > 0).long(), x[:, 2:], "mean", include_self=False)
              + x.scatter_reduce(1, (x[:, :3] > 0).long(), x[:, 2:], "prod")),
             ("scatter of 3-D along its last dim", (2, 3, 4),
              lambda x: x.scatter(2, torch.tensor([[[3, 0], [1, 2], [0, 0]]]).expand(
                  x.shape[0], 3, 2), -x[:, :, :2])),
             ("scatter_add along dim 0", (3, 4),
              lambda x: torch.zeros(5, 4).scatter_add(0, torch.tensor([[0, 4, 2, 2], [1, 1, 0, 4]]),
                                                      torch.ones(2, 4)) + x.sum()),
             ("x[:, i] = v (the last of equal targets wins)", (2, 6), put_rows),
             ("index_put accumulating", (2, 6, 3),
              lambda x: torch.ops.aten.index_put(x, [None, targets[0]], x[:, :3] * 2, True)),
             ("fold (index_put accumulating)", (2, 12, 20),
              lambda x: torch.nn.functional.fold(x, (6, 7), (2, 3), dilation=(1, 2),
                                                 padding=(1, 1), stride=(2, 1))),
             ("median, kthvalue", (2, 9),
              lambda x: torch.median(x, 1).values + torch.median(x, 1).indices
              + torch.kthvalue(x, 3, 1).values * torch.kthvalue(x, 3, 1)[1]),
             ("median of an even count, keepdim", (3, 8, 2),
              lambda x: torch.median(x, 1, keepdim=True).values + torch.median(x, 1, True)[1]),
             ("stable sort with ties, both directions", (2, 9),
              lambda x: torch.sort(torch.round(x), dim=1, stable=True).indices.float()
              + torch.sort(torch.round(x), dim=1, descending=True, stable=True).indices)]
    against_torch(args, "indexing", cases)


def math_and_reductions(args):
    """Unary math composed from kiln's ops (tan, asin, acos, sinh, cosh,
    expm1 near 0, log2, log10, exp2, trunc, atan2 in all four quadrants,
    isnan, isinf), clamps by tensors, reductions returning values and
    indices, variance and standard deviation, products, any / all, running
    products, 3-D pools, adaptive pools with overlapping windows, flips,
    fills of the batch's size, LSTM and GRU, and dtype casts (torch's
    metadata checks) against PyTorch."""
    import torch.nn.functional as F
    tiny = torch.tensor([1e-8, -3e-7, 1e-3, -0.5, 2.0, 0.0])
    cases = [
        ("tan, sinh, cosh", (2, 9), lambda x: torch.tan(x) + torch.sinh(x) * torch.cosh(x)),
        ("asin, acos", (2, 9), lambda x: torch.asin(x.clamp(-0.99, 0.99)) +
         2 * torch.acos(x.clamp(-0.99, 0.99))),
        ("expm1 near 0", (2, 6), lambda x: torch.expm1(x * 0 + tiny) * 1e6),
        ("log2, log10, exp2", (2, 9), lambda x: torch.log2(x.abs() + 0.1) +
         torch.log10(x.abs() + 0.1) + torch.exp2(x)),
        ("trunc", (2, 9), lambda x: torch.trunc(x * 4)),
        ("atan2", (2, 9), lambda x: torch.atan2(x, x.flip(1)) + torch.atan2(x * 0, x) * 0.5
         + torch.atan2(x, x * 0) * 0.25 + torch.atan2(x * 0, x * 0 - 1) * 0.125),
        ("isnan, isinf", (2, 9), lambda x: torch.isnan(torch.log(x)).float() +
         2 * torch.isinf(torch.log(x.abs() * (x > 0))).float()),
        ("clamp by tensors", (2, 9), lambda x: torch.clamp(x, min=x.flip(1) - 0.3,
                                                          max=x.flip(1) + 0.3)),
        ("max and min with indices", (2, 5, 7), lambda x: x.max(1).values + x.max(2)[1].sum()
         + x.min(-1, keepdim=True).values.sum(1) + x.min(1).indices.float()),
        ("var, std, var_mean", (3, 5, 7), lambda x: x.var(1) + x.std((1, 2), keepdim=True).sum()
         + torch.var(x, 2, unbiased=False).sum() + torch.var_mean(x, 1)[1]),
        ("prod", (2, 5, 3), lambda x: x.prod(1) + x.prod()),
        ("any, all", (2, 5, 3), lambda x: (x > 0).any(1).float() + (x > -1).all(2).float().sum()
         + torch.all(x > -5).float()),
        ("cumprod", (2, 6), lambda x: torch.cumprod(x, 1) * 2),
        ("sum and mean with a dtype", (2, 6), lambda x: x.sum(1, dtype=torch.float64).float() +
         (x * 10).int().sum(1).float()),
        ("max_pool3d, avg_pool3d", (2, 2, 6, 6, 4), lambda x: F.max_pool3d(x, 2, 2) +
         F.avg_pool3d(x, 2, 2, padding=(1, 0, 0))[:, :, :3]),
        ("adaptive pools, overlapping windows", (2, 3, 10, 7),
         lambda x: F.adaptive_avg_pool2d(x, (3, 4)) + F.adaptive_max_pool2d(x, (3, 4))),
        ("flip", (2, 3, 5), lambda x: torch.flip(x, [0, 2])),
        ("zeros, ones and full of the batch's size", (3, 4),
         lambda x: x + torch.zeros_like(x) + torch.ones(x.shape[0], 4) * 2
         + x.new_full(x.shape, 3)),
        ("bitwise xor", (2, 8), lambda x: ((x > 0) ^ (x > 0.5)).float()),
    ]
    torch.manual_seed(0)
    modules = [("LSTM, 2 layers", (2, 5, 6), torch.nn.LSTM(6, 4, 2, batch_first=True)),
               ("GRU, bidirectional", (2, 5, 6), torch.nn.GRU(6, 4, batch_first=True,
                                                            bidirectional=True))]

    class First(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, x):
            return self.m(x)[0]

    cases += [(name, shape, First(m).eval()) for name, shape, m in modules]
    against_torch(args, "math", cases)


def weights_file(args):
    """export(..., external_weights=True) writes the weights raw beside the
    text (kiln_torch.compile's own way) and `kiln compile` makes the same
    artifact of it, byte for byte, as of the text with the weights as hex."""
    import torchvision
    torch.manual_seed(0)
    model = randomize_batch_norms(torchvision.models.resnet18()).eval()
    example = torch.randn(1, 3, 224, 224)
    artifacts = []
    for way, external in (("hex", False), ("file", True)):
        folder = os.path.join(args.work, f"weights-{way}")
        os.makedirs(folder, exist_ok=True)
        kiln_torch.export(model, (example,), os.path.join(folder, "model.mlir"),
                          external_weights=external)
        artifacts.append(os.path.join(folder, "model.so"))
        subprocess.run([args.kiln, "compile", "model.mlir", "-o", "model.so", "-q"], cwd=folder,
                       check=True)
    text = os.path.getsize(os.path.join(args.work, "weights-file", "model.mlir"))
    weights = os.path.join(args.work, "weights-file", "model.weights")
    same = open(artifacts[0], "rb").read() == open(artifacts[1], "rb").read()
    check(same and os.path.getsize(weights) >= 44_000_000 and text < 1_000_000,
          "weights in a file beside the text give the artifact the weights as hex give",
          f"same bytes: {same}, text {text} bytes")


def bags_and_buckets(args):
    """EmbeddingBag (sum, mean, max; padding_idx; per-sample weights) in
    its 2-D form (bags of equal size, the batch dynamic: three batch sizes
    on one artifact) and its 1-D form with offsets (empty bags, the last
    offset included or not), bucketize and searchsorted (NaN and infinite
    elements, both sides), histc (fixed and data bounds, one value
    everywhere, dynamic batch; a NaN in the data: PyTorch raises, Kiln's
    counts are all NaN) against PyTorch."""
    from torch import nn
    torch.manual_seed(0)

    def compiled(name, model, example, **options):
        artifact = os.path.join(args.work, f"{name}.so")
        try:
            kiln_torch.compile(model.eval(), example, artifact, **options)
            return artifact
        except kiln_torch.KilnTorchError as error:
            check(False, f"{name} converts", str(error))
            return None

    def matches(name, artifact, runs, model):
        results = []
        for inputs in runs:
            with torch.no_grad():
                want = model(*inputs).numpy()
            results.append(run_kiln(args.kiln, artifact, inputs, want, args.work))
        check(all(ok for ok, _ in results), f"{name} matches PyTorch",
              "; ".join(detail for ok, detail in results if not ok))

    class Bags2d(nn.Module):
        def __init__(self, mode, padding):
            super().__init__()
            self.bag = nn.EmbeddingBag(40, 6, mode=mode, padding_idx=padding)

        def forward(self, x):
            return self.bag(x)

    x = torch.randint(0, 40, (4, 5))
    x[0, :], x[1, 2] = 3, 3  # a bag of padding alone, one with some
    for mode in ("sum", "mean", "max"):
        for padding in (None, 3):
            model = Bags2d(mode, padding)
            name = f"EmbeddingBag 2-D {mode}" + (" with padding_idx" if padding else "")
            artifact = compiled(f"bag2d_{mode}_{padding}", model, (x,))
            if artifact:
                matches(name, artifact, [(x,), (torch.randint(0, 40, (7, 5)),), (x[:1],)],
                        model)

    class Weighted2d(nn.Module):
        def __init__(self):
            super().__init__()
            self.bag = nn.EmbeddingBag(40, 6, mode="sum")

        def forward(self, x):
            return self.bag((x.abs() * 10).long() % 40, per_sample_weights=x)

    w, model = torch.randn(3, 4), Weighted2d()
    artifact = compiled("bag2d_weighted", model, (w,))
    if artifact:
        matches("EmbeddingBag 2-D with per-sample weights", artifact, [(w,), (torch.randn(6, 4),)],
                model)

    class Bags1d(nn.Module):
        def __init__(self, mode, padding, last):
            super().__init__()
            self.bag = nn.EmbeddingBag(40, 6, mode=mode, padding_idx=padding,
                                       include_last_offset=last)
            self.weighted = mode == "sum"

        def forward(self, indices, offsets, weights):
            return self.bag(indices, offsets,
                            per_sample_weights=weights if self.weighted else None)

    indices = torch.randint(0, 40, (10,))
    indices[4:6] = 3
    weights = torch.rand(10)
    for mode, padding, last in (("sum", 3, False), ("mean", 3, True), ("max", None, False),
                                ("max", 3, True)):
        offsets = torch.tensor([0, 3, 3, 7] + ([10] if last else []))
        empty = torch.tensor([0, 0, 5, 10, 10][:len(offsets)])
        model = Bags1d(mode, padding, last)
        name = (f"EmbeddingBag 1-D {mode} with offsets" + (" and padding_idx" if padding else "") +
                (", the last offset included" if last else ""))
        artifact = compiled(f"bag1d_{mode}_{padding}_{last}", model, (indices, offsets, weights),
                            dynamic_batch=False)
        if artifact:
            matches(name, artifact, [(indices, offsets, weights),
                                     (indices.flip(0), empty, weights * 2)], model)

    bounds = torch.tensor([-1.0, 0.0, 0.0, 2.0])

    class Buckets(nn.Module):
        def forward(self, x):
            return (torch.bucketize(x, bounds) * 100 +
                    torch.bucketize(x, bounds, right=True, out_int32=True) * 10 +
                    torch.searchsorted(bounds, x, side="right")).float()

    special = torch.tensor([[float("nan"), -2, -1, 0, 1], [2, 3, float("inf"), float("-inf"), .5]])
    artifact = compiled("buckets", Buckets(), (special,))
    if artifact:
        matches("bucketize and searchsorted", artifact, [(special,), (torch.randn(5, 5) * 2,)],
                Buckets())

    class Histograms(nn.Module):
        def forward(self, x):
            return (torch.histc(x, 7) * 1000 + torch.histc(x * 3, 7, -3, 3) +
                    torch.histc(x, bins=5, min=-1, max=1).sum() * 10)

    edges = torch.tensor([[-1, -0.6, -0.2, 0.2, 0.6], [1.0, 0.4, -0.4, 2, -3],
                          [0.5, 0.0, 1e-7, -1e-7, 0.8]])
    artifact = compiled("histograms", Histograms(), (edges,))
    if artifact:
        matches("histc", artifact, [(edges,), (torch.randn(3, 5),), (torch.full((3, 5), 2.0),),
                                    (torch.randn(1, 5),), (torch.randn(7, 5),)], Histograms())
        nan = edges.clone()
        nan[2, 0] = float("nan")
        path = os.path.join(args.work, "nan.npy")
        np.save(path, nan.numpy())
        out = os.path.join(args.work, "histc-nan")
        result = subprocess.run([args.kiln, "run", artifact, "--input", f"@0={path}",
                                 "--output-dir", out], capture_output=True, text=True)
        got = np.load(os.path.join(out, "output.npy")) if result.returncode == 0 else None
        check(got is not None and np.isnan(got).all(),
              "histc over data bounds with a NaN element (PyTorch raises) gives NaN counts",
              f"{got} {result.stderr.strip()[-200:]}")


def against_torch(args, label, cases):
    """Each (name, input shape, function or module) traced, compiled and
    run on a random input against PyTorch."""
    class Fn(torch.nn.Module):
        def __init__(self, f):
            super().__init__()
            self.f = f

        def forward(self, x):
            return self.f(x)

    torch.manual_seed(0)
    for i, (name, shape, f) in enumerate(cases):
        model = f if isinstance(f, torch.nn.Module) else Fn(f).eval()
        x = torch.randn(*shape)
        artifact = os.path.join(args.work, f"{label}{i}.so")
        try:
            kiln_torch.compile(model, (x,), artifact)
            ok, detail = True, ""
        except kiln_torch.KilnTorchError as error:
            ok, detail = False, str(error)
        if ok:
            with torch.no_grad():
                want = model(x).numpy()
            ok, detail = run_kiln(args.kiln, artifact, (x,), want, args.work)
        check(ok, f"{name} matches PyTorch", detail)


def same_as_onnx(args):
    """The traced resnet18 and the ONNX one (same architecture, other random
    weights) give the same kiln ops with the same types after the graph
    phase: a multiset of 'op (operand types) -> result type' lines."""
    import torchvision
    torch.manual_seed(0)
    traced = os.path.join(args.work, "resnet18.mlir")
    kiln_torch.export(randomize_batch_norms(torchvision.models.resnet18()).eval(),
                      (torch.randn(1, 3, 224, 224),), traced)

    def ops(path, extra):
        out = subprocess.run([args.kiln, "import", path, "--compile-to=graph"] + extra,
                             capture_output=True, text=True).stdout
        found = []
        for line in out.splitlines():
            m = re.search(r"(kiln\.\w+) .*: (\(.*\) -> tensor<[^>]*>)", line)
            if m and "kiln.constant" not in line:
                found.append(f"{m.group(1)} {m.group(2)}")
        return sorted(found)

    a, b = ops(traced, []), ops(args.onnx_resnet18_bn, ["--dynamic-batch"])
    import difflib
    diff = "\n".join(list(difflib.unified_diff(b, a, "onnx", "traced", lineterm=""))[:20])
    check(a == b and len(a) > 50,
          f"traced and ONNX-imported resnet18 give the same {len(a)} kiln ops after the graph phase",
          diff)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("suite", choices=["models", "checks"])
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--onnx-resnet18-bn")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    os.environ["KILN"] = args.kiln
    if args.suite == "models":
        models(args)
    else:
        refusals(args)
        command_line(args)
        same_as_onnx(args)
        arithmetic(args)
        resampling(args)
        indexing(args)
        math_and_reductions(args)
        bags_and_buckets(args)
        weights_file(args)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
