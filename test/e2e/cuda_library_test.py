#!/usr/bin/env python3
"""The CUDA device's library calls, checked numerically without a GPU:
small ONNX models whose whole work is library calls -- matmuls (a linear
layer with bias and ReLU, a batched matmul of two inputs, a residual added
in place, a rank-3 input over a weight matrix) and convolutions (bias and
ReLU; groups, strides and dilations; a residual) -- are compiled with
--target=cuda and run through the runtime's CUDA device on the driver
stand-in and the cuBLASLt and cuDNN stand-ins (test/e2e/*_stand_in.c: the
libraries' documented arithmetic on host memory), against NumPy. This
checks the runtime's mapping of Kiln's calls onto the libraries (operands,
leading dims, batch strides, descriptors, bias, epilogue, beta) and the
compiler's claims, and that only deterministic cuDNN algorithms run unless
the artifact was compiled with --allow-nondeterministic; the libraries
themselves run on a GPU in test/gpu/run.sh.

usage: cuda_library_test.py KILN DRIVER_STAND_IN CUBLASLT_STAND_IN CUDNN_STAND_IN WORK
Ends with `N passed, N failed`.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

kiln, driver, blas, dnn, work = sys.argv[1:6]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(0)
passed = failed = 0


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"PASS: {what}")
    else:
        failed += 1
        print(f"FAIL: {what}\n{detail}")


def model(name, nodes, inputs, outputs, initializers):
    graph = helper.make_graph(nodes, name, inputs, outputs,
                              [numpy_helper.from_array(v, k) for k, v in initializers.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path = os.path.join(work, f"{name}.onnx")
    onnx.save(m, path)
    return path


def tensor(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def case(name, path, feeds, expected, calls, extra=(), algorithms=None):
    """`algorithms`: the cuDNN algorithms the run must have picked (the
    stand-in records each call's), e.g. {1}: never the nondeterministic 4."""
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
               KILN_CUDNN_LIBRARY=dnn, KILN_CUDNN_STAND_IN_ALGORITHMS=log)
    report = subprocess.run([kiln, "inspect", so, "--kernels"], capture_output=True,
                            text=True, env=env).stdout
    n = report.count("cuBLASLt") + report.count("cuDNN")
    check(n == calls and f"kernels: {calls}" in report,
          f"{name}: {calls} library call(s) and nothing else", report)
    args = [kiln, "run", so]
    for k, v in feeds.items():
        f = os.path.join(work, f"{name}.{k}.npy")
        np.save(f, v)
        args += ["--input", f"{k}={f}"]
    f = os.path.join(work, f"{name}.expected.npy")
    np.save(f, expected)
    args += ["--expected", f"y={f}", "--max-relative-error", "1e-5"]
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


# A convolution with bias and ReLU (cudnnConvolutionBiasActivationForward).
w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
b = rng.standard_normal(8).astype(np.float32)
x = rng.standard_normal((2, 3, 7, 7)).astype(np.float32)
path = model("conv_relu", [conv_node(["x", "w", "b"], "c", pads=[1, 1, 1, 1]),
                           helper.make_node("Relu", ["c"], ["y"])],
             [tensor("x", ["n", 3, 7, 7])], [tensor("y", ["n", 8, 7, 7])], {"w": w, "b": b})
expected = np.maximum(conv2d(x, w, pad=1) + b[None, :, None, None], 0)
case("conv_relu", path, {"x": x}, expected, 1, algorithms={1})
# --allow-nondeterministic lifts the filter: the heuristic's first, the
# stand-in's nondeterministic algorithm 4, runs.
case("conv_relu_any", path, {"x": x}, expected, 1, extra=["--allow-nondeterministic"],
     algorithms={4})
p = subprocess.run([kiln, "inspect", os.path.join(work, "conv_relu_any.so")],
                   capture_output=True, text=True)
check("nondeterministic algorithms allowed" in p.stdout,
      "--allow-nondeterministic: kiln inspect says so", p.stdout + p.stderr)
p = subprocess.run([kiln, "compile", path, "-q", "--allow-nondeterministic", "-o",
                    os.path.join(work, "cpu.so")], capture_output=True, text=True)
check(p.returncode != 0 and "no setting 'allow-nondeterministic'" in p.stderr,
      "--allow-nondeterministic refused for the cpu target", p.stdout + p.stderr)

# Groups, strides, dilations, no bias (cudnnConvolutionForward).
w = rng.standard_normal((6, 2, 3, 3)).astype(np.float32)
x = rng.standard_normal((1, 4, 11, 11)).astype(np.float32)
path = model("conv_grouped", [conv_node(["x", "w"], "y", pads=[2, 2, 2, 2], strides=[2, 2],
                                        dilations=[2, 2], group=2)],
             [tensor("x", [1, 4, 11, 11])], [tensor("y", [1, 6, 6, 6])], {"w": w})
case("conv_grouped", path, {"x": x}, conv2d(x, w, stride=2, pad=2, dilation=2, groups=2), 1,
     algorithms={1})

# A residual: conv2(x) + b2 + conv1(x), the first call's output taken in
# place as z.
w1 = rng.standard_normal((4, 4, 1, 1)).astype(np.float32)
w2 = rng.standard_normal((4, 4, 3, 3)).astype(np.float32)
b2 = rng.standard_normal(4).astype(np.float32)
x = rng.standard_normal((1, 4, 5, 5)).astype(np.float32)
path = model("conv_residual", [conv_node(["x", "w1"], "r"),
                               conv_node(["x", "w2", "b2"], "c", pads=[1, 1, 1, 1]),
                               helper.make_node("Add", ["c", "r"], ["y"])],
             [tensor("x", [1, 4, 5, 5])], [tensor("y", [1, 4, 5, 5])],
             {"w1": w1, "w2": w2, "b2": b2})
case("conv_residual", path, {"x": x},
     conv2d(x, w2, pad=1) + b2[None, :, None, None] + conv2d(x, w1), 2, algorithms={1})
# With a bias and no activation cuDNN's fused call takes only the implicit
# precomputed GEMM (1), allowed or not; the plain call takes the first (4).
case("conv_residual_any", path, {"x": x},
     conv2d(x, w2, pad=1) + b2[None, :, None, None] + conv2d(x, w1), 2,
     extra=["--allow-nondeterministic"], algorithms={1, 4})

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
