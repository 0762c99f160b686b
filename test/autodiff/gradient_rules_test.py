"""Every gradient rule of kiln-differentiate, checked numerically.

gradient_rules_test.py KILN KILN_OPT WORK_DIR
For each case: a one-op (or few-op) kiln function in float64 is
differentiated by `kiln-opt --kiln-differentiate`, compiled by `kiln
compile` and run by `kiln run` on random inputs and a random cotangent c.
Two checks:
  - PyTorch autograd (torch.autograd on the same function, float64): every
    gradient within 1e-9 relative;
  - central finite differences along a random direction v of each input:
    <c, (f(x + eps v) - f(x - eps v)) / (2 eps)> against <grad, v>, within
    1e-6 relative (eps 1e-6; f from the same artifact's forward output).
Some cases run again in float32 (the types the models use, where
convolutions and matmuls go to oneDNN): against torch in float32 within
1e-4 relative, without finite differences.
Prints one line per case and "N passed, N failed".
"""
import concurrent.futures
import os
import subprocess
import sys
import zlib

import numpy as np
import torch

KILN, KILN_OPT, WORK = sys.argv[1:4]
os.makedirs(WORK, exist_ok=True)
T = "f64"


def ttype(shape):
    return "tensor<" + "".join(f"{d}x" for d in shape) + T + ">"


def positive(shape, rng):
    return rng.uniform(0.5, 2.0, shape)


def away_from_zero(shape, rng):
    return rng.uniform(0.2, 1.5, shape) * rng.choice([-1.0, 1.0], shape)


def normal(shape, rng):
    return rng.standard_normal(shape)


# name: (inputs [(name, shape, sampler)], result shape, body (kiln ops, %a %b ... -> %r), torch fn)
def unary(op, torch_fn, sampler=normal, shape=(3, 4)):
    return ([("a", shape, sampler)], shape,
            f"%r = kiln.{op} %a : ({ttype(shape)}) -> {ttype(shape)}", torch_fn)


def binary(op, torch_fn, sa=(3, 4), sb=(4,), out=(3, 4), sampler=normal):
    return ([("a", sa, sampler), ("b", sb, sampler)], out,
            f"%r = kiln.{op} %a, %b : ({ttype(sa)}, {ttype(sb)}) -> {ttype(out)}", torch_fn)


CASES = {
    "neg": unary("neg", lambda a: -a),
    "exp": unary("exp", torch.exp),
    "log": unary("log", torch.log, positive),
    "sqrt": unary("sqrt", torch.sqrt, positive),
    "rsqrt": unary("rsqrt", torch.rsqrt, positive),
    "reciprocal": unary("reciprocal", torch.reciprocal, away_from_zero),
    "relu": unary("relu", torch.relu, away_from_zero),
    "sigmoid": unary("sigmoid", torch.sigmoid),
    "tanh": unary("tanh", torch.tanh),
    "abs": unary("abs", torch.abs, away_from_zero),
    "sin": unary("sin", torch.sin),
    "cos": unary("cos", torch.cos),
    "atan": unary("atan", torch.atan),
    "erf": unary("erf", torch.erf),
    "floor": unary("floor", torch.floor, lambda s, r: r.uniform(0.1, 0.9, s) + r.integers(-3, 3, s)),
    "gelu": unary("gelu", torch.nn.functional.gelu),
    "gelu_tanh": ([("a", (3, 4), normal)], (3, 4),
                  f"%r = kiln.gelu %a approximation tanh : ({ttype((3, 4))}) -> {ttype((3, 4))}",
                  lambda a: torch.nn.functional.gelu(a, approximate="tanh")),
    "clip": ([("a", (3, 4), lambda s, r: r.choice([-1.7, -0.3, 0.2, 0.8, 1.6], s) + r.uniform(-0.05, 0.05, s))],
             (3, 4), f"%r = kiln.clip %a {{min = -1.0 : f64, max = 1.0 : f64}} : ({ttype((3, 4))}) -> {ttype((3, 4))}",
             lambda a: torch.clamp(a, -1.0, 1.0)),
    "add_broadcast": binary("add", torch.add),
    "add_both_broadcast": binary("add", torch.add, sa=(3, 1), sb=(1, 4), out=(3, 4)),
    "sub_broadcast": binary("sub", torch.sub),
    "mul_broadcast": binary("mul", torch.mul, sa=(2, 3, 4), sb=(3, 1), out=(2, 3, 4)),
    "div": binary("div", torch.div, sb=(3, 4), sampler=away_from_zero),
    "pow": binary("pow", torch.pow, sb=(4,), sampler=positive),
    "max": binary("max", torch.maximum, sb=(3, 4)),
    "min": binary("min", torch.minimum, sb=(3, 4)),
    "select": ([("a", (3, 4), normal), ("b", (3, 4), normal)], (3, 4),
               "%c = kiln.compare gt, %a, %b : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xi1>\n"
               "    %m = kiln.mul %a, %a : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>\n"
               "    %r = kiln.select %c, %m, %b : (tensor<3x4xi1>, tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>",
               lambda a, b: torch.where(a > b, a * a, b)),
    "matmul": binary("matmul", torch.matmul, sa=(3, 5), sb=(5, 4), out=(3, 4)),
    "matmul_batched_broadcast": binary("matmul", torch.matmul, sa=(2, 3, 5), sb=(5, 4), out=(2, 3, 4)),
    "matmul_batched": binary("matmul", torch.matmul, sa=(2, 3, 5), sb=(2, 5, 4), out=(2, 3, 4)),
    # A weight shared by every leading index: one flattened product.
    "matmul_shared_weight_rank4": binary("matmul", torch.matmul, sa=(2, 2, 3, 5), sb=(5, 4),
                                         out=(2, 2, 3, 4)),
    "reduce_sum": ([("a", (3, 4, 5), normal)], (3, 5),
                   f"%r = kiln.reduce_sum %a {{axes = array<i64: 1>}} : ({ttype((3, 4, 5))}) -> {ttype((3, 5))}",
                   lambda a: a.sum(1)),
    "reduce_sum_keepdims": ([("a", (3, 4, 5), normal)], (1, 4, 1),
                            f"%r = kiln.reduce_sum %a {{axes = array<i64: 0, 2>, keepdims = true}} : ({ttype((3, 4, 5))}) -> {ttype((1, 4, 1))}",
                            lambda a: a.sum((0, 2), keepdim=True)),
    "reduce_mean": ([("a", (3, 4), normal)], (),
                    f"%r = kiln.reduce_mean %a {{axes = array<i64: 0, 1>}} : ({ttype((3, 4))}) -> {ttype(())}",
                    lambda a: a.mean()),
    "softmax": ([("a", (3, 5), normal)], (3, 5),
                f"%r = kiln.softmax %a {{axis = 1 : i64}} : ({ttype((3, 5))}) -> {ttype((3, 5))}",
                lambda a: torch.softmax(a, 1)),
    "log_softmax": ([("a", (3, 5), normal)], (3, 5),
                    f"%r = kiln.log_softmax %a {{axis = 0 : i64}} : ({ttype((3, 5))}) -> {ttype((3, 5))}",
                    lambda a: torch.log_softmax(a, 0)),
    "reshape": ([("a", (3, 4), normal)], (2, 6),
                f"%r = kiln.reshape %a {{shape = array<i64: 2, 6>}} : ({ttype((3, 4))}) -> {ttype((2, 6))}",
                lambda a: a.reshape(2, 6)),
    "transpose": ([("a", (2, 3, 4), normal)], (4, 2, 3),
                  f"%r = kiln.transpose %a {{permutation = array<i64: 2, 0, 1>}} : ({ttype((2, 3, 4))}) -> {ttype((4, 2, 3))}",
                  lambda a: a.permute(2, 0, 1)),
    "expand": ([("a", (3, 1), normal)], (2, 3, 4),
               f"%r = kiln.expand %a {{shape = array<i64: 2, 3, 4>}} : ({ttype((3, 1))}) -> {ttype((2, 3, 4))}",
               lambda a: a.expand(2, 3, 4)),
    "concat": ([("a", (2, 3), normal), ("b", (2, 2), normal)], (2, 5),
               f"%r = kiln.concat %a, %b {{axis = 1 : i64}} : ({ttype((2, 3))}, {ttype((2, 2))}) -> {ttype((2, 5))}",
               lambda a, b: torch.cat([a, b], 1)),
    "reduce_max": ([("a", (3, 4, 5), normal)], (3, 5),
                   f"%r = kiln.reduce_max %a {{axes = array<i64: 1>}} : ({ttype((3, 4, 5))}) -> {ttype((3, 5))}",
                   lambda a: a.amax(1)),
    "reduce_min_keepdims": ([("a", (3, 4), normal)], (3, 1),
                            f"%r = kiln.reduce_min %a {{axes = array<i64: 1>, keepdims = true}} : ({ttype((3, 4))}) -> {ttype((3, 1))}",
                            lambda a: a.amin(1, keepdim=True)),
    "split": ([("a", (4, 6), normal)], (4, 7),
              f"%p:3 = kiln.split %a {{axis = 1 : i64, sizes = array<i64: 1, 2, 3>}} : ({ttype((4, 6))}) -> ({ttype((4, 1))}, {ttype((4, 2))}, {ttype((4, 3))})\n"
              f"    %q = kiln.tanh %p#0 : ({ttype((4, 1))}) -> {ttype((4, 1))}\n"
              f"    %r = kiln.concat %p#2, %q, %p#2 {{axis = 1 : i64}} : ({ttype((4, 3))}, {ttype((4, 1))}, {ttype((4, 3))}) -> {ttype((4, 7))}",
              lambda a: torch.cat([a[:, 3:], torch.tanh(a[:, :1]), a[:, 3:]], 1)),
    "slice": ([("a", (4, 6), normal)], (2, 3),
              f"%r = kiln.slice %a {{starts = array<i64: 1, -4>, ends = array<i64: 3, 5>, steps = array<i64: 1, 1>}} : ({ttype((4, 6))}) -> {ttype((2, 3))}",
              lambda a: a[1:3, 2:5]),
    "pad": ([("a", (2, 3), normal)], (3, 6),
            f"%r = kiln.pad %a {{pads = array<i64: 0, 1, 1, 2>}} : ({ttype((2, 3))}) -> {ttype((3, 6))}",
            lambda a: torch.nn.functional.pad(a, (1, 2, 0, 1))),
    "gather_embedding": ([("table", (7, 4), normal)], (2, 3, 4),
                         "%i = kiln.constant dense<[[0, 3, 6], [3, -1, 2]]> : tensor<2x3xi64>\n"
                         f"    %r = kiln.gather %table, %i {{axis = 0 : i64}} : ({ttype((7, 4))}, tensor<2x3xi64>) -> {ttype((2, 3, 4))}",
                         lambda t: t[torch.tensor([[0, 3, 6], [3, 6, 2]])]),
    "conv": ([("x", (2, 3, 6, 6), normal), ("w", (4, 3, 3, 3), normal)], (2, 4, 6, 6),
             f"%r = kiln.conv %x, %w {{strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64}} : ({ttype((2, 3, 6, 6))}, {ttype((4, 3, 3, 3))}) -> {ttype((2, 4, 6, 6))}",
             lambda x, w: torch.nn.functional.conv2d(x, w, padding=1)),
    "conv_stride2_uncovered": ([("x", (1, 2, 8, 7), normal), ("w", (3, 2, 3, 2), normal)], (1, 3, 4, 3),
                               f"%r = kiln.conv %x, %w {{strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64}} : ({ttype((1, 2, 8, 7))}, {ttype((3, 2, 3, 2))}) -> {ttype((1, 3, 4, 3))}",
                               lambda x, w: torch.nn.functional.conv2d(torch.nn.functional.pad(x, (0, 0, 1, 0)), w, stride=2)),
    "conv_depthwise_stride2": ([("x", (2, 3, 7, 7), normal), ("w", (3, 1, 3, 3), normal)], (2, 3, 4, 4),
                               f"%r = kiln.conv %x, %w {{strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 3 : i64}} : ({ttype((2, 3, 7, 7))}, {ttype((3, 1, 3, 3))}) -> {ttype((2, 3, 4, 4))}",
                               lambda x, w: torch.nn.functional.conv2d(x, w, stride=2, padding=1, groups=3)),
    "conv_transpose_stride2": ([("x", (1, 2, 3, 3), normal), ("w", (2, 3, 3, 3), normal)], (1, 3, 6, 6),
                               f"%r = kiln.conv_transpose %x, %w {{strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 1>, groups = 1 : i64}} : ({ttype((1, 2, 3, 3))}, {ttype((2, 3, 3, 3))}) -> {ttype((1, 3, 6, 6))}",
                               lambda x, w: torch.nn.functional.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1)),
    "conv_transpose_1d_dilated": ([("x", (2, 4, 7), normal), ("w", (4, 6, 3), normal)], (2, 6, 20),
                                  f"%r = kiln.conv_transpose %x, %w {{strides = array<i64: 3>, pads = array<i64: 2, 2>, dilations = array<i64: 2>, output_padding = array<i64: 1>, groups = 1 : i64}} : ({ttype((2, 4, 7))}, {ttype((4, 6, 3))}) -> {ttype((2, 6, 20))}",
                                  lambda x, w: torch.nn.functional.conv_transpose1d(x, w, stride=3, padding=2, output_padding=1, dilation=2)),
    # Each kept value's gradient back at its index (along the last and a middle axis).
    "topk": ([("a", (3, 6), normal)], (3, 2),
             f"%r, %i = kiln.topk %a {{axis = 1 : i64, k = 2 : i64}} : ({ttype((3, 6))}) -> ({ttype((3, 2))}, tensor<3x2xi64>)",
             lambda a: torch.topk(a, 2, 1).values),
    "topk_select": ([("a", (3, 24), normal)], (3, 3),
                    f"%r, %i = kiln.topk %a {{axis = 1 : i64, k = 3 : i64, largest = false}} : ({ttype((3, 24))}) -> ({ttype((3, 3))}, tensor<3x3xi64>)",
                    lambda a: torch.topk(a, 3, 1, largest=False).values),
    "topk_middle_axis": ([("a", (2, 6, 3), normal)], (2, 3, 3),
                         f"%r, %i = kiln.topk %a {{axis = 1 : i64, k = 3 : i64}} : ({ttype((2, 6, 3))}) -> ({ttype((2, 3, 3))}, tensor<2x3x3xi64>)",
                         lambda a: torch.topk(a, 3, 1).values),
    "max_pool_2x2": ([("x", (2, 3, 4, 6), normal)], (2, 3, 2, 3),
                     f"%r = kiln.max_pool %x {{kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}} : ({ttype((2, 3, 4, 6))}) -> {ttype((2, 3, 2, 3))}",
                     lambda x: torch.nn.functional.max_pool2d(x, 2)),
    "max_pool_3x3_s2_p1": ([("x", (1, 2, 7, 7), normal)], (1, 2, 4, 4),
                           f"%r = kiln.max_pool %x {{kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>}} : ({ttype((1, 2, 7, 7))}) -> {ttype((1, 2, 4, 4))}",
                           lambda x: torch.nn.functional.max_pool2d(x, 3, 2, 1)),
    # ceil_mode: a fourth window per row reaching past the input (squeezenet's pools).
    "max_pool_3x3_s2_ceil": ([("x", (1, 2, 8, 8), normal)], (1, 2, 4, 4),
                             f"%r = kiln.max_pool %x {{kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true}} : ({ttype((1, 2, 8, 8))}) -> {ttype((1, 2, 4, 4))}",
                             lambda x: torch.nn.functional.max_pool2d(x, 3, 2, ceil_mode=True)),
    "avg_pool_exclude_pad": ([("x", (1, 2, 5, 5), normal)], (1, 2, 5, 5),
                             f"%r = kiln.avg_pool %x {{kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>}} : ({ttype((1, 2, 5, 5))}) -> {ttype((1, 2, 5, 5))}",
                             lambda x: torch.nn.functional.avg_pool2d(x, 3, 1, 1, count_include_pad=False)),
    "avg_pool_include_pad": ([("x", (1, 2, 6, 6), normal)], (1, 2, 3, 3),
                             f"%r = kiln.avg_pool %x {{kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, count_include_pad = true}} : ({ttype((1, 2, 6, 6))}) -> {ttype((1, 2, 3, 3))}",
                             lambda x: torch.nn.functional.avg_pool2d(torch.nn.functional.pad(x, (1, 0, 1, 0)), 3, 2)),
    "layer_norm": ([("x", (2, 3, 8), normal), ("g", (8,), normal), ("b", (8,), normal)], (2, 3, 8),
                   f"%r = kiln.layer_norm %x, %g, %b {{axis = 2 : i64, epsilon = 1.0e-05 : f32}} : ({ttype((2, 3, 8))}, {ttype((8,))}, {ttype((8,))}) -> {ttype((2, 3, 8))}",
                   lambda x, g, b: torch.nn.functional.layer_norm(x, (8,), g, b, 1e-5)),
    "batch_norm_inference": ([("x", (2, 3, 4, 4), normal), ("s", (3,), normal), ("b", (3,), normal),
                              ("m", (3,), normal), ("v", (3,), positive)], (2, 3, 4, 4),
                             f"%r = kiln.batch_norm %x, %s, %b, %m, %v {{epsilon = 1.0e-05 : f32}} : ({ttype((2, 3, 4, 4))}, {ttype((3,))}, {ttype((3,))}, {ttype((3,))}, {ttype((3,))}) -> {ttype((2, 3, 4, 4))}",
                             # torch's batch_norm takes no gradient for the statistics: the formula.
                             lambda x, s, b, m, v: (x - m[:, None, None]) / torch.sqrt(v[:, None, None] + 1e-5)
                             * s[:, None, None] + b[:, None, None]),
    # A value used twice: its gradients add up.
    "reuse": ([("a", (3, 4), normal)], (3, 4),
              f"%t = kiln.tanh %a : ({ttype((3, 4))}) -> {ttype((3, 4))}\n"
              f"    %r = kiln.mul %t, %a : ({ttype((3, 4))}, {ttype((3, 4))}) -> {ttype((3, 4))}",
              lambda a: torch.tanh(a) * a),
    # stop_gradient: the gradient flows only through the other use.
    "stop_gradient": ([("a", (3, 4), normal)], (3, 4),
                      f"%s = kiln.stop_gradient %a : ({ttype((3, 4))}) -> {ttype((3, 4))}\n"
                      f"    %r = kiln.mul %s, %a : ({ttype((3, 4))}, {ttype((3, 4))}) -> {ttype((3, 4))}",
                      lambda a: a.detach() * a),
    # The MLP's loss: matmul, bias, tanh, log_softmax, mean.
    "mlp_loss": ([("x", (4, 3), normal), ("w", (3, 2), normal), ("b", (2,), normal)], (),
                 f"%0 = kiln.matmul %x, %w : ({ttype((4, 3))}, {ttype((3, 2))}) -> {ttype((4, 2))}\n"
                 f"    %1 = kiln.add %0, %b : ({ttype((4, 2))}, {ttype((2,))}) -> {ttype((4, 2))}\n"
                 f"    %2 = kiln.tanh %1 : ({ttype((4, 2))}) -> {ttype((4, 2))}\n"
                 f"    %3 = kiln.log_softmax %2 {{axis = 1 : i64}} : ({ttype((4, 2))}) -> {ttype((4, 2))}\n"
                 f"    %r = kiln.reduce_mean %3 {{axes = array<i64: 0, 1>}} : ({ttype((4, 2))}) -> {ttype(())}",
                 lambda x, w, b: torch.log_softmax(torch.tanh(x @ w + b), 1).mean()),
}


# Cases whose gradient is deliberately not the function's derivative: only
# the torch check applies (torch's .detach() is the same rule).
NOT_THE_DERIVATIVE = {"stop_gradient"}


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {(p.stdout + p.stderr).strip()[-600:]}")
    return p.stdout


# Cases checked in float32 too: "<name>@f32".
FLOAT32 = ["matmul_batched", "conv", "conv_stride2_uncovered", "conv_depthwise_stride2",
           "conv_transpose_stride2",
           "max_pool_3x3_s2_p1", "avg_pool_exclude_pad", "layer_norm", "gather_embedding",
           "softmax", "mlp_loss"]


def check(case):
    name, _, precision = case.partition("@")
    f32 = precision == "f32"
    inputs, out_shape, body, torch_fn = CASES[name]
    dtype, torch_dtype = (np.float32, torch.float32) if f32 else (np.float64, torch.float64)
    work = os.path.join(WORK, case.replace("@", "_"))
    os.makedirs(work, exist_ok=True)
    # The same data every run (str hash() is salted per process).
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    args = ", ".join(f"%{n}: {ttype(s)} {{kiln.name = \"{n}\"}}" for n, s, _ in inputs)
    src = (f"module {{\n  func.func @main({args}) -> ({ttype(out_shape)} {{kiln.name = \"y\"}}) {{\n"
           f"    {body}\n    return %r : {ttype(out_shape)}\n  }}\n}}\n")
    if f32:
        src = src.replace("xf64>", "xf32>").replace("<f64>", "<f32>").replace(": f64}", ": f32}")
    open(f"{work}/f.mlir", "w").write(src)
    run([KILN_OPT, "--kiln-differentiate", f"{work}/f.mlir", "-o", f"{work}/vjp.mlir"])
    run([KILN, "compile", f"{work}/vjp.mlir", "-o", f"{work}/vjp.so", "--quiet"])
    xs = {n: sampler(s, rng).astype(dtype) for n, s, sampler in inputs}
    c = rng.standard_normal(out_shape).astype(dtype)

    def evaluate(values, tag):
        feed = []
        for n, v in list(values.items()) + [("grad_y", c)]:
            np.save(f"{work}/{tag}_{n}.npy", np.asarray(v, dtype))
            feed += ["--input", f"{n}={work}/{tag}_{n}.npy"]
        run([KILN, "run", f"{work}/vjp.so", *feed, "--output-dir", f"{work}/{tag}"])
        out = {"y": np.load(f"{work}/{tag}/y.npy")}
        for n in values:
            out[n] = np.load(f"{work}/{tag}/grad_{n}.npy")
        return out

    got = evaluate(xs, "at")
    # PyTorch autograd.
    tx = {n: torch.tensor(v, dtype=torch_dtype, requires_grad=True) for n, v in xs.items()}
    ty = torch_fn(*tx.values())
    ty.backward(torch.tensor(c, dtype=torch_dtype))
    problems = []
    tolerance = 1e-4 if f32 else 1e-9
    err_y = np.abs(got["y"] - ty.detach().numpy()).max()
    if err_y > tolerance * max(1.0, np.abs(ty.detach().numpy()).max()):
        problems.append(f"forward differs from torch by {err_y:.2e}")
    worst_torch = worst_fd = 0.0
    for n in xs:
        want = tx[n].grad.numpy()
        err = np.abs(got[n] - want).max() / max(np.abs(want).max(), 1e-12)
        worst_torch = max(worst_torch, err)
        if got[n].shape != want.shape or err > tolerance:
            problems.append(f"grad_{n} differs from torch autograd: relative {err:.2e}")
        if name in NOT_THE_DERIVATIVE or f32:
            continue
        # Central differences along a random direction of this input.
        v = rng.standard_normal(xs[n].shape)
        eps = 1e-6
        plus = evaluate({**xs, n: xs[n] + eps * v}, "plus")["y"]
        minus = evaluate({**xs, n: xs[n] - eps * v}, "minus")["y"]
        fd = float(np.sum(c * (plus - minus)) / (2 * eps))
        analytic = float(np.sum(got[n] * v))
        rel = abs(fd - analytic) / max(abs(analytic), abs(fd), 1e-8)
        worst_fd = max(worst_fd, rel)
        if rel > 1e-6:
            problems.append(f"grad_{n} vs finite differences: {analytic:.9g} vs {fd:.9g} (relative {rel:.2e})")
    return case, problems, worst_torch, worst_fd


passed = failed = 0
with concurrent.futures.ThreadPoolExecutor(2) as pool:
    futures = {pool.submit(check, n): n for n in list(CASES) + [f"{n}@f32" for n in FLOAT32]}
    for future in concurrent.futures.as_completed(futures):
        name = futures[future]
        try:
            _, problems, wt, wf = future.result()
        except Exception as e:  # a failed compile or run is a failed case
            problems, wt, wf = [str(e)], float("nan"), float("nan")
        if problems:
            failed += 1
            print(f"FAIL {name}: " + "; ".join(problems))
        else:
            passed += 1
            fd = ("not applicable (the rule stops the gradient on purpose)"
                  if name in NOT_THE_DERIVATIVE else
                  "not run in float32" if name.endswith("@f32") else f"{wf:.1e}")
            print(f"ok {name}: vs torch {wt:.1e}, vs finite differences {fd}")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
