#!/usr/bin/env python3
"""The CUDA device's library calls, checked numerically without a GPU:
small ONNX models whose whole work is library calls -- matmuls (a linear
layer with bias and ReLU, a batched matmul of two inputs, operands read
transposed (Q . K^T, a transposed lhs, both at once), a residual added
in place, a rank-3 input over a weight matrix) and convolutions (bias and
ReLU; groups, strides and dilations; a residual) -- are compiled with
--target=cuda and run through the runtime's CUDA device on the driver
stand-in and the cuBLASLt and cuDNN stand-ins (test/e2e/*_stand_in.c: the
libraries' documented arithmetic on host memory), against NumPy. This
checks the runtime's mapping of Kiln's calls onto the libraries (operands,
leading dims, batch strides, descriptors, bias, epilogue, beta) and the
compiler's claims, and that only deterministic cuDNN algorithms and
engines run unless the artifact was compiled with --allow-nondeterministic.
Convolutions run first as one fused graph of cuDNN's graph API (the
stand-in's engines 10: tensor cores, never taken; 11: nondeterministic;
12), and through its convolution API (algorithms 1 and 4, an activation
pass 100 + mode) with $KILN_CUDNN_GRAPH=0 or when no engine fuses the
graph ($KILN_CUDNN_STAND_IN_NO_FUSION=1); both are checked. The
libraries themselves run on a GPU in test/gpu/run.sh.

usage: cuda_library_test.py KILN DRIVER_STAND_IN CUBLASLT_STAND_IN CUDNN_STAND_IN WORK
Ends with `N passed, N failed`.
"""
import os
import re
import subprocess
import sys

import numpy as np
from onnx import helper

from e2e_checks import Suite, tensor

kiln, driver, blas, dnn, work = sys.argv[1:6]
tally = Suite(work, opset=13)
check, model = tally.check, tally.model
rng = np.random.default_rng(0)


def case(name, path, feeds, expected, calls, extra=(), algorithms=None, env_extra=None,
         kernels=None):
    """`kernels`: how many the model has in all when some are generated
    (the driver stand-in runs no generated kernel: then only the claims
    are checked)."""
    """`algorithms`: the cuDNN algorithms or engines the run must have
    picked (the stand-in records each call's), e.g. {1}: never the
    nondeterministic 4."""
    so = os.path.join(work, f"{name}.so")
    p = subprocess.run([kiln, "compile", path, "--target=cuda", "-q", "-o", so, *extra],
                       capture_output=True, text=True)
    if p.returncode != 0:
        check(False, f"{name}: compile", p.stdout + p.stderr)
        return
    log = os.path.join(work, f"{name}.algorithms")
    if os.path.exists(log):
        os.remove(log)
    env = dict(os.environ, KILN_CUDA_DRIVER=driver, KILN_CUBLASLT_LIBRARY=blas,
               KILN_CUDNN_LIBRARY=dnn, KILN_CUDNN_STAND_IN_ALGORITHMS=log, **(env_extra or {}))
    report = subprocess.run([kiln, "inspect", so, "--kernels"], capture_output=True,
                            text=True, env=env).stdout
    n = len(re.findall(r"^  \d+: (?:cuBLASLt|cuDNN) ", report, re.M))
    kernels = calls if kernels is None else kernels
    check(n == calls and f"kernels: {kernels}" in report,
          f"{name}: {calls} library call(s)" +
          (" and nothing else" if kernels == calls else f" of {kernels} kernels"), report)
    if kernels != calls:
        return
    args = tally.run_args(kiln, so, name, feeds, expected, 1e-5)
    p = subprocess.run(args, capture_output=True, text=True, env=env)
    check(p.returncode == 0, f"{name}: matches NumPy through the CUDA device",
          p.stdout + p.stderr)
    if algorithms is not None:
        ran = set()
        if os.path.exists(log):
            ran = {int(line) for line in open(log).read().split()}
        check(ran == algorithms, f"{name}: cuDNN ran algorithm(s) {sorted(algorithms)}",
              f"ran {sorted(ran)}")


# A linear layer: x [?, 64] . W [64, 32] + b, ReLU (bias and ReLU fused).
w = rng.standard_normal((64, 32)).astype(np.float32)
b = rng.standard_normal(32).astype(np.float32)
x = rng.standard_normal((5, 64)).astype(np.float32)
path = model("linear_relu", [helper.make_node("MatMul", ["x", "w"], ["m"]),
                             helper.make_node("Add", ["m", "b"], ["a"]),
                             helper.make_node("Relu", ["a"], ["y"])],
             [tensor("x", ["n", 64])], [tensor("y", ["n", 32])], {"w": w, "b": b})
case("linear_relu", path, {"x": x}, np.maximum(x @ w + b, 0), 1)

# Attention's shape: two inputs [2, 3, 8] . [2, 8, 5], a strided batch.
a = rng.standard_normal((2, 3, 8)).astype(np.float32)
c = rng.standard_normal((2, 8, 5)).astype(np.float32)
path = model("batched", [helper.make_node("MatMul", ["a", "c"], ["y"])],
             [tensor("a", [2, 3, 8]), tensor("c", [2, 8, 5])], [tensor("y", [2, 3, 5])], {})
case("batched", path, {"a": a, "c": c}, a @ c, 1)

# Operands read transposed (cuBLASLt's transpose flags): attention's
# Q . K^T, K [2, 5, 8] transposed in the model ([2, 8, 5]); a matrix
# lhs given transposed (x^T . W, x [8, 3]); both of a batch at once. The
# transposes are absorbed: one call and nothing else each.
q = rng.standard_normal((2, 3, 8)).astype(np.float32)
k = rng.standard_normal((2, 5, 8)).astype(np.float32)
path = model("rhs_transposed", [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
                                helper.make_node("MatMul", ["q", "kt"], ["y"])],
             [tensor("q", [2, 3, 8]), tensor("k", [2, 5, 8])], [tensor("y", [2, 3, 5])], {})
case("rhs_transposed", path, {"q": q, "k": k}, q @ k.transpose(0, 2, 1), 1)
xt = rng.standard_normal((8, 3)).astype(np.float32)
w = rng.standard_normal((8, 4)).astype(np.float32)
path = model("lhs_transposed", [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
                                helper.make_node("MatMul", ["t", "w"], ["y"])],
             [tensor("x", [8, 3])], [tensor("y", [3, 4])], {"w": w})
case("lhs_transposed", path, {"x": xt}, xt.T @ w, 1)
at = rng.standard_normal((2, 8, 3)).astype(np.float32)
path = model("both_transposed", [helper.make_node("Transpose", ["a"], ["ta"], perm=[0, 2, 1]),
                                 helper.make_node("Transpose", ["k"], ["tk"], perm=[0, 2, 1]),
                                 helper.make_node("MatMul", ["ta", "tk"], ["y"])],
             [tensor("a", [2, 8, 3]), tensor("k", [2, 5, 8])], [tensor("y", [2, 3, 5])], {})
case("both_transposed", path, {"a": at, "k": k},
     at.transpose(0, 2, 1) @ k.transpose(0, 2, 1), 1)

# A residual: x . W2 + (x . W1), the first call's output taken in place
# by the second (beta = 1).
w1 = rng.standard_normal((16, 16)).astype(np.float32)
w2 = rng.standard_normal((16, 16)).astype(np.float32)
x = rng.standard_normal((4, 16)).astype(np.float32)
path = model("residual", [helper.make_node("MatMul", ["x", "w1"], ["r"]),
                          helper.make_node("MatMul", ["x", "w2"], ["m"]),
                          helper.make_node("Add", ["m", "r"], ["y"])],
             [tensor("x", [4, 16])], [tensor("y", [4, 16])], {"w1": w1, "w2": w2})
case("residual", path, {"x": x}, x @ w2 + x @ w1, 2)

# A rank-3 input over a weight matrix: the leading dims fold into M.
w = rng.standard_normal((8, 4)).astype(np.float32)
b = rng.standard_normal(4).astype(np.float32)
x = rng.standard_normal((2, 3, 8)).astype(np.float32)
path = model("folded", [helper.make_node("MatMul", ["x", "w"], ["m"]),
                        helper.make_node("Add", ["m", "b"], ["y"])],
             [tensor("x", [2, 3, 8])], [tensor("y", [2, 3, 4])], {"w": w, "b": b})
case("folded", path, {"x": x}, x @ w + b, 1)


def conv2d(x, w, stride=1, pad=0, dilation=1, groups=1):
    n, c, h, wd = x.shape
    k, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - dilation * (kh - 1) - 1) // stride + 1
    ow = (wd + 2 * pad - dilation * (kw - 1) - 1) // stride + 1
    y = np.zeros((n, k, oh, ow), np.float64)
    per = k // groups
    for o in range(k):
        g = o // per
        for r in range(kh):
            for s_ in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg, r * dilation:r * dilation + stride * oh:stride,
                           s_ * dilation:s_ * dilation + stride * ow:stride]
                y[:, o] += np.einsum("nchw,c->nhw", patch, w[o, :, r, s_])
    return y.astype(np.float32)


def conv_node(inputs, output, **attrs):
    return helper.make_node("Conv", inputs, [output], **attrs)


# Convolutions run as one fused graph of cuDNN's graph API (the stand-in's
# engine 12: deterministic, no tensor cores) unless $KILN_CUDNN_GRAPH=0,
# then through the convolution API (algorithm 1; 4 is nondeterministic).
API = {"KILN_CUDNN_GRAPH": "0"}
NO_FUSION = {"KILN_CUDNN_STAND_IN_NO_FUSION": "1"}

# A convolution with bias and ReLU (API: cudnnConvolutionBiasActivationForward).
w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
b = rng.standard_normal(8).astype(np.float32)
x = rng.standard_normal((2, 3, 7, 7)).astype(np.float32)
path = model("conv_relu", [conv_node(["x", "w", "b"], "c", pads=[1, 1, 1, 1]),
                           helper.make_node("Relu", ["c"], ["y"])],
             [tensor("x", ["n", 3, 7, 7])], [tensor("y", ["n", 8, 7, 7])], {"w": w, "b": b})
expected = np.maximum(conv2d(x, w, pad=1) + b[None, :, None, None], 0)
case("conv_relu", path, {"x": x}, expected, 1, algorithms={12})
case("conv_relu_api", path, {"x": x}, expected, 1, algorithms={1}, env_extra=API)
# --allow-nondeterministic lifts the filter: the heuristic's first allowed,
# the stand-in's nondeterministic engine 11 (algorithm 4), runs; the
# tensor-core engine 10 never does.
case("conv_relu_any", path, {"x": x}, expected, 1, extra=["--allow-nondeterministic"],
     algorithms={11})
case("conv_relu_any_api", path, {"x": x}, expected, 1, extra=["--allow-nondeterministic"],
     algorithms={4}, env_extra=API)
p = subprocess.run([kiln, "inspect", os.path.join(work, "conv_relu_any.so")],
                   capture_output=True, text=True)
check("nondeterministic algorithms allowed" in p.stdout,
      "--allow-nondeterministic: kiln inspect says so", p.stdout + p.stderr)
p = subprocess.run([kiln, "compile", path, "-q", "--allow-nondeterministic", "-o",
                    os.path.join(work, "cpu.so")], capture_output=True, text=True)
check(p.returncode != 0 and "no setting 'allow-nondeterministic'" in p.stderr,
      "--allow-nondeterministic refused for the cpu target", p.stdout + p.stderr)

# Groups, strides, dilations, no bias (API: cudnnConvolutionForward).
w = rng.standard_normal((6, 2, 3, 3)).astype(np.float32)
x = rng.standard_normal((1, 4, 11, 11)).astype(np.float32)
path = model("conv_grouped", [conv_node(["x", "w"], "y", pads=[2, 2, 2, 2], strides=[2, 2],
                                        dilations=[2, 2], group=2)],
             [tensor("x", [1, 4, 11, 11])], [tensor("y", [1, 6, 6, 6])], {"w": w})
expected = conv2d(x, w, stride=2, pad=2, dilation=2, groups=2)
case("conv_grouped", path, {"x": x}, expected, 1, algorithms={12})
case("conv_grouped_api", path, {"x": x}, expected, 1, algorithms={1}, env_extra=API)

# A residual: conv2(x) + b2 + conv1(x), the first call's output taken in
# place (the graph: a second tensor on the output's memory; the API: z).
w1 = rng.standard_normal((4, 4, 1, 1)).astype(np.float32)
w2 = rng.standard_normal((4, 4, 3, 3)).astype(np.float32)
b2 = rng.standard_normal(4).astype(np.float32)
x = rng.standard_normal((1, 4, 5, 5)).astype(np.float32)
path = model("conv_residual", [conv_node(["x", "w1"], "r"),
                               conv_node(["x", "w2", "b2"], "c", pads=[1, 1, 1, 1]),
                               helper.make_node("Add", ["c", "r"], ["y"])],
             [tensor("x", [1, 4, 5, 5])], [tensor("y", [1, 4, 5, 5])],
             {"w1": w1, "w2": w2, "b2": b2})
expected = conv2d(x, w2, pad=1) + b2[None, :, None, None] + conv2d(x, w1)
case("conv_residual", path, {"x": x}, expected, 2, algorithms={12})
case("conv_residual_api", path, {"x": x}, expected, 2, algorithms={1}, env_extra=API)
# With a bias and no activation cuDNN's fused call takes only the implicit
# precomputed GEMM (1), allowed or not; the plain call takes the first (4).
case("conv_residual_any_api", path, {"x": x}, expected, 2,
     extra=["--allow-nondeterministic"], algorithms={1, 4}, env_extra=API)

# Epilogues only the graph fuses: bias then ReLU6 (a clip to [0, 6], as in
# mobilenet_v2), sigmoid with a residual, ReLU and tanh without a bias. When
# no engine fuses the graph, the convolution API runs the call and an
# activation pass in place (100 + cuDNN's mode: 3 clipped ReLU, 0 sigmoid,
# 1 ReLU, 2 tanh).
w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
b = rng.standard_normal(8).astype(np.float32)
x = rng.standard_normal((2, 3, 6, 6)).astype(np.float32) * 2
conv = conv2d(x, w, pad=1)
path = model("conv_relu6", [conv_node(["x", "w", "b"], "c", pads=[1, 1, 1, 1]),
                            helper.make_node("Clip", ["c", "lo", "hi"], ["y"])],
             [tensor("x", ["n", 3, 6, 6])], [tensor("y", ["n", 8, 6, 6])],
             {"w": w, "b": b, "lo": np.array(0, np.float32), "hi": np.array(6, np.float32)})
expected = np.clip(conv + b[None, :, None, None], 0, 6)
case("conv_relu6", path, {"x": x}, expected, 1, algorithms={12})
case("conv_relu6_unfused", path, {"x": x}, expected, 1, algorithms={1, 103},
     env_extra=NO_FUSION)
case("conv_relu6_api", path, {"x": x}, expected, 1, algorithms={1, 103}, env_extra=API)
# A plan whose first run fails is dropped for the convolution API.
case("conv_relu6_failed_run", path, {"x": x}, expected, 1, algorithms={1, 103},
     env_extra={"KILN_CUDNN_STAND_IN_FAIL_EXECUTE": "1"})
so = os.path.join(work, "conv_relu6.so")
for label, env_extra, want in [
        ("fused", {}, "cuDNN: 1 convolution plans as fused graphs, 0 through the convolution API"),
        ("unfused", NO_FUSION, "cuDNN: 0 convolution plans as fused graphs, 1 through the "
         "convolution API (first: call 0 at batch 1: cuDNN has no engine for the fused graph"),
        ("failed run", {"KILN_CUDNN_STAND_IN_FAIL_EXECUTE": "1"},
         "cuDNN: 0 convolution plans as fused graphs, 1 through the convolution API (first: "
         "call 0 at batch 1: its fused graph's plan failed its first run (status 5000)")]:
    env = dict(os.environ, KILN_CUDA_DRIVER=driver, KILN_CUBLASLT_LIBRARY=blas,
               KILN_CUDNN_LIBRARY=dnn, **env_extra)
    p = subprocess.run([kiln, "bench", so, "--runs", "2", "--warmup", "1"],
                       capture_output=True, text=True, env=env)
    check(p.returncode == 0 and want in p.stdout,
          f"conv_relu6 ({label}): kiln bench reports the cuDNN plans", p.stdout + p.stderr)
    check(re.search(r"KiB to the GPU and \d+ KiB back in all\n  GPU replays: host overhead "
                    r"[0-9.]+ us a replay \([0-9.]+ us of it copying inputs", p.stdout),
          f"conv_relu6 ({label}): kiln bench reports the bytes each way and the host overhead "
          "of a replay", p.stdout)
# A clip whose low bound is not 0 has no path through the convolution API:
# the convolution is the call, the clip a generated kernel (not run here).
path = model("conv_clip", [conv_node(["x", "w", "b"], "c", pads=[1, 1, 1, 1]),
                           helper.make_node("Clip", ["c", "lo", "hi"], ["y"])],
             [tensor("x", ["n", 3, 6, 6])], [tensor("y", ["n", 8, 6, 6])],
             {"w": w, "b": b, "lo": np.array(-1, np.float32), "hi": np.array(1, np.float32)})
case("conv_clip", path, {"x": x}, None, 1, kernels=2)

# Asymmetric pads (ONNX's SAME_UPPER at stride 2: 0 before, 1 after): the
# input padded by the difference first (a generated kernel, not run here),
# the convolution with bias and ReLU the call, its pads symmetric.
path = model("conv_same_upper", [conv_node(["x", "w", "b"], "c", pads=[0, 0, 1, 1],
                                           strides=[2, 2]),
                                 helper.make_node("Relu", ["c"], ["y"])],
             [tensor("x", ["n", 3, 6, 6])], [tensor("y", ["n", 8, 3, 3])], {"w": w, "b": b})
case("conv_same_upper", path, {"x": x}, None, 1, kernels=2)
# The call's input is the padded one ([n, 3, 7, 7]: 0 before, 1 after),
# the first of its operands (the call takes its kernel's operands in order).
p = subprocess.run([kiln, "compile", path, "--target=cuda", "--compile-to=linalg"],
                   capture_output=True, text=True)
call = re.search(r"kiln\.library_call \d+\(.*?\) .*?: \((tensor<[^>]*>)", p.stdout)
check(call is not None and call.group(1) == "tensor<?x3x7x7xf32>",
      "conv_same_upper: the call's first operand is the padded input",
      call.group(0) if call else p.stdout[-2000:] + p.stderr)

# Sigmoid after a bias and a residual (another call's output, in place).
w1 = rng.standard_normal((8, 3, 1, 1)).astype(np.float32)
path = model("conv_sigmoid", [conv_node(["x", "w1"], "r"),
                              conv_node(["x", "w", "b"], "c", pads=[1, 1, 1, 1]),
                              helper.make_node("Add", ["c", "r"], ["s"]),
                              helper.make_node("Sigmoid", ["s"], ["y"])],
             [tensor("x", [2, 3, 6, 6])], [tensor("y", [2, 8, 6, 6])],
             {"w": w, "b": b, "w1": w1})
expected = 1 / (1 + np.exp(-(conv + b[None, :, None, None] + conv2d(x, w1))))
case("conv_sigmoid", path, {"x": x}, expected, 2, algorithms={12})
case("conv_sigmoid_unfused", path, {"x": x}, expected, 2, algorithms={1, 100},
     env_extra=NO_FUSION)

for op, fn, mode in [("Relu", lambda v: np.maximum(v, 0), 101), ("Tanh", np.tanh, 102)]:
    name = f"conv_{op.lower()}_nobias"
    path = model(name, [conv_node(["x", "w"], "c", pads=[1, 1, 1, 1]),
                        helper.make_node(op, ["c"], ["y"])],
                 [tensor("x", [2, 3, 6, 6])], [tensor("y", [2, 8, 6, 6])], {"w": w})
    case(name, path, {"x": x}, fn(conv), 1, algorithms={12})
    case(name + "_unfused", path, {"x": x}, fn(conv), 1, algorithms={1, mode},
         env_extra=NO_FUSION)

# A fire module's expand convolutions joined along the channels: each call
# writes its output straight into its channels of the concatenation
# (cuDNN's output strided over the batch: kiln.output_into), so the model
# is its two calls and nothing else (no copy kernel), at a batch of 2; the
# tanh's activation pass runs in place on the strided output.
w1 = rng.standard_normal((4, 8, 1, 1)).astype(np.float32)
b1 = rng.standard_normal(4).astype(np.float32)
w3 = rng.standard_normal((6, 8, 3, 3)).astype(np.float32)
x = rng.standard_normal((2, 8, 6, 6)).astype(np.float32)
path = model("fire", [conv_node(["x", "w1", "b1"], "c1"),
                      helper.make_node("Relu", ["c1"], ["e1"]),
                      conv_node(["x", "w3"], "c3", pads=[1, 1, 1, 1]),
                      helper.make_node("Tanh", ["c3"], ["e3"]),
                      helper.make_node("Concat", ["e1", "e3"], ["y"], axis=1)],
             [tensor("x", ["n", 8, 6, 6])], [tensor("y", ["n", 10, 6, 6])],
             {"w1": w1, "b1": b1, "w3": w3})
expected = np.concatenate([np.maximum(conv2d(x, w1) + b1[None, :, None, None], 0),
                           np.tanh(conv2d(x, w3, pad=1))], axis=1)
case("fire", path, {"x": x}, expected, 2, algorithms={12})
case("fire_api", path, {"x": x}, expected, 2, algorithms={1, 102}, env_extra=API)
case("fire_unfused", path, {"x": x}, expected, 2, algorithms={1, 102}, env_extra=NO_FUSION)

tally.finish()
