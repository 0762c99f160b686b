#!/usr/bin/env python3
"""The CUDA backend's loop nests on shapes the conformance suite does not
reach, numerically, without a GPU: small ONNX models compiled with
--target=cuda --emulate-gpu (the loop nests exactly as mapped onto blocks
and threads at the default 256 threads a block, run on the CPU) and run
with `kiln run` against NumPy:
- rows of a row kernel long enough for a whole block (a softmax over 5,000
  classes: a masked tail; a layer normalisation over 4,100), and a row
  under that (768: a warp), each checked to have taken the partition it
  should (compiled for the GPU, the PTX has a block's barrier and shared
  memory, or neither);
- a max pool whose initial fill folds into the pooling kernel (3 kernels in
  its PTX, not 4), at a dynamic batch of 1 and 3;
- vector accesses of 8-byte elements (int64 data cast to float) and an
  int64 mask beside float data;
- sizes decided at run time, read back from device memory by the host
  (one artifact, inputs of different contents and shapes: nothing frozen):
  NonZero of a comparison, a Reshape to a shape given as an input (and one
  that does not fit: a shape error), Unique;
  compiled for the GPU, `kiln compile` says the host reads them back;
- a class token expanded to the run-time batch as torch's exporter writes
  it (Shape, Gather, Concat with -1, Where, Expand: ViT): the batch is a
  dim of the input, so the host reads nothing back (before: 3 values, and
  no CUDA Graph), at a batch of 3, 1 and 0; ConstantOfShape of an input's
  shape likewise; ShuffleNet's channel shuffle (a reshape to a target
  with two run-time elements, computed on the host from the dims).

usage: gpu_emulated_models_test.py KILN WORK
Ends with `N passed, N failed`.
"""
import os
import re
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper

from e2e_checks import Suite, tensor

kiln, work = sys.argv[1:3]
tally = Suite(work, opset=17)
check, model = tally.check, tally.model
rng = np.random.default_rng(0)


EMULATE = ["--target=cuda", "--emulate-gpu"]


def block_rows(path):
    """Whether the model's PTX (--target=cuda, the same mapping not
    emulated) has a block's barrier and shared memory: its rows took
    blocks, not warps."""
    p = subprocess.run([kiln, "compile", path, "--target=cuda", "--compile-to=codegen"],
                       capture_output=True, text=True)
    return p.returncode == 0 and "bar.sync" in p.stdout and ".shared" in p.stdout, p.stderr


def case(name, path, feeds, expected, tolerance=1e-5, so=None):
    """`so`: an artifact compiled already (run again on other inputs)."""
    if so is None:
        so = os.path.join(work, f"{name}.so")
        p = subprocess.run([kiln, "compile", path, *EMULATE, "-q", "-o", so],
                           capture_output=True, text=True)
        if p.returncode != 0:
            check(False, f"{name}: compile", p.stdout + p.stderr)
            return
    if expected.dtype.kind == "f":
        expected = expected.astype(np.float32)
    args = tally.run_args(kiln, so, name, feeds, expected, tolerance)
    p = subprocess.run(args, capture_output=True, text=True)
    check(p.returncode == 0, f"{name}: matches NumPy", p.stdout + p.stderr)


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def layer_norm(x, g, b, eps=1e-5):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b


# Softmax over 5,000 classes: a block a row (5,000 = 19 x 256 + 136).
x = rng.standard_normal((3, 5000)).astype(np.float32) * 4
path = model("softmax_5000", [helper.make_node("Softmax", ["x"], ["y"], axis=-1)],
             [tensor("x", [3, 5000])], [tensor("y", [3, 5000])])
block, log = block_rows(path)
check(block, "softmax_5000: the rows take a block (a barrier in the PTX)", log)
case("softmax_5000", path, {"x": x}, softmax(x.astype(np.float64)))

# Layer normalisation over 4,100 (a block) and over 768 (a warp).
for n, threads in [(4100, 256), (768, 32)]:
    name = f"layer_norm_{n}"
    g = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    x = rng.standard_normal((2, n)).astype(np.float32) + 3
    path = model(name, [helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"],
                                         axis=-1, epsilon=1e-5)],
                 [tensor("x", [2, n])], [tensor("y", [2, n])], {"g": g, "b": b})
    block, log = block_rows(path)
    check(block == (threads == 256),
          f"{name}: the rows take {'a block (a barrier' if threads == 256 else 'a warp (no barrier'}"
          " in the PTX)", log)
    case(name, path, {"x": x}, layer_norm(x.astype(np.float64), g, b), 1e-4)

# A max pool (3 x 3, stride 2, pads 1) at a dynamic batch: its fill folds
# into the pooling kernel; batch 1 and 3.
path = model("max_pool", [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3],
                                           strides=[2, 2], pads=[1, 1, 1, 1])],
             [tensor("x", ["n", 3, 17, 17])], [tensor("y", ["n", 3, 9, 9])])
p = subprocess.run([kiln, "compile", path, "--target=cuda", "--compile-to=codegen"],
                   capture_output=True, text=True)
kernels = set(re.findall(r"\.visible \.entry (\w+)", p.stdout))
check(len(kernels) == 3, "max_pool: 3 kernels (the padding's fill, the copy into it, the pool "
      "with its own initial fill)", f"{sorted(kernels)}\n{p.stderr}")
for batch in (1, 3):
    x = rng.standard_normal((batch, 3, 17, 17)).astype(np.float32)
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    y = np.full((batch, 3, 9, 9), -np.inf, np.float32)
    for i in range(3):
        for j in range(3):
            y = np.maximum(y, padded[:, :, i:i + 17:2, j:j + 17:2])
    case(f"max_pool_batch{batch}", path, {"x": x}, y)

# 8-byte elements: int64 data cast to float and scaled (2 a thread), and
# an int64 mask choosing between float data and a constant.
a = rng.integers(-1000, 1000, (4, 64)).astype(np.int64)
m = rng.integers(0, 2, (4, 64)).astype(np.int64)
v = rng.standard_normal((4, 64)).astype(np.float32)
path = model("int64_cast", [helper.make_node("Cast", ["a"], ["f"], to=TensorProto.FLOAT),
                            helper.make_node("Mul", ["f", "s"], ["y"])],
             [tensor("a", [4, 64], TensorProto.INT64)], [tensor("y", [4, 64])],
             {"s": np.array(0.5, np.float32)})
case("int64_cast", path, {"a": a}, a.astype(np.float32) * 0.5)
path = model("int64_mask", [helper.make_node("Cast", ["m"], ["k"], to=TensorProto.BOOL),
                            helper.make_node("Where", ["k", "v", "c"], ["y"])],
             [tensor("m", [4, 64], TensorProto.INT64), tensor("v", [4, 64])],
             [tensor("y", [4, 64])], {"c": np.array(-1e9, np.float32)})
case("int64_mask", path, {"m": m, "v": v}, np.where(m != 0, v, np.float32(-1e9)))


def reads_back(path):
    """Whether `kiln compile --target=cuda` of `path` says the host reads
    values back from the GPU."""
    p = subprocess.run([kiln, "compile", path, "--target=cuda", "--gpu=sm_90", "-o",
                        os.path.join(work, "reads.so")], capture_output=True, text=True)
    return p.returncode == 0 and "the host reads" in p.stdout, p.stdout + p.stderr


# Sizes decided at run time: NonZero of x > 0.5 (its count sizes the
# output), one artifact run on inputs of other contents and batches.
path = model("nonzero", [helper.make_node("Greater", ["x", "half"], ["g"]),
                         helper.make_node("NonZero", ["g"], ["y"])],
             [tensor("x", ["n", 7])], [tensor("y", [2, "k"], TensorProto.INT64)],
             {"half": np.array(0.5, np.float32)})
ok, log = reads_back(path)
check(ok, "nonzero: compiled for the GPU, the host reads the count back", log)
so = os.path.join(work, "nonzero_0.so")
for k, (n, density) in enumerate([(3, 0.5), (5, 0.9), (2, 0.0)]):
    x = (rng.random((n, 7)) + (0.5 if density == 0.0 else 0.0)).astype(np.float32)
    x[rng.random((n, 7)) > density] = 0.0
    case(f"nonzero_{k}", path if k == 0 else None, {"x": x},
         np.array(np.nonzero(x > 0.5), np.int64), so=None if k == 0 else so)

# A Reshape to a shape given as an input (read when the model runs).
path = model("reshape_input", [helper.make_node("Reshape", ["x", "shape"], ["r"]),
                               helper.make_node("Mul", ["r", "two"], ["y"])],
             [tensor("x", [4, 6]), tensor("shape", [2], TensorProto.INT64)],
             [tensor("y", ["a", "b"])], {"two": np.array(2.0, np.float32)})
x = rng.standard_normal((4, 6)).astype(np.float32)
for k, shape in enumerate([(3, 8), (12, 2), (1, 24)]):
    case(f"reshape_input_{k}", path if k == 0 else None,
         {"x": x, "shape": np.array(shape, np.int64)}, 2 * x.reshape(shape),
         so=None if k == 0 else os.path.join(work, "reshape_input_0.so"))

# A shape that does not fit the data: an error naming it, no crash.
np.save(os.path.join(work, "bad_shape.npy"), np.array([5, 7], np.int64))
np.save(os.path.join(work, "bad_shape.x.npy"), x)
p = subprocess.run([kiln, "run", os.path.join(work, "reshape_input_0.so"), "--input",
                    f"x={os.path.join(work, 'bad_shape.x.npy')}", "--input",
                    f"shape={os.path.join(work, 'bad_shape.npy')}"], capture_output=True, text=True)
check(p.returncode == 1 and "KILN_ERROR_SHAPE" in p.stderr,
      "reshape_input: a shape of 5 x 7 for 24 elements is a shape error", p.stdout + p.stderr)

# Unique (sorted): its number of distinct values sizes the output.
path = model("unique", [helper.make_node("Unique", ["x"], ["y"], sorted=1)],
             [tensor("x", [12])], [tensor("y", ["u"])])
for k in range(2):
    x = rng.integers(0, 4 + 4 * k, 12).astype(np.float32)
    case(f"unique_{k}", path if k == 0 else None, {"x": x}, np.unique(x),
         so=None if k == 0 else os.path.join(work, "unique_0.so"))

# A class token expanded to the batch and put before the patches, as
# torch's exporter writes x.expand(n, -1, -1) (torchvision's ViT).
token = rng.standard_normal((1, 1, 6)).astype(np.float32)
i64 = lambda *v: np.array(v, np.int64)
path = model("class_token", [
    helper.make_node("Shape", ["x"], ["s"]),
    helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
    helper.make_node("Unsqueeze", ["n", "zeros"], ["n1"]),
    helper.make_node("Concat", ["n1", "minus1", "minus1"], ["t"], axis=0),
    helper.make_node("Equal", ["t", "minus1"], ["e"]),
    helper.make_node("Where", ["e", "ones", "t"], ["t2"]),
    helper.make_node("Expand", ["token", "t2"], ["c"]),
    helper.make_node("Concat", ["c", "x"], ["y"], axis=1)],
    [tensor("x", ["n", 4, 6])], [tensor("y", ["n", 5, 6])],
    {"zero": np.array(0, np.int64), "zeros": i64(0), "minus1": i64(-1), "ones": i64(1, 1, 1),
     "token": token})
_, log = reads_back(path)
check("compiled " in log and "the host reads" not in log,
      "class_token: compiled for the GPU, the host reads nothing back", log)
for k, n in enumerate([3, 1, 0]):
    x = rng.standard_normal((n, 4, 6)).astype(np.float32)
    want = np.concatenate([np.broadcast_to(token, (n, 1, 6)), x], axis=1)
    case(f"class_token_{k}", path if k == 0 else None, {"x": x}, want,
         so=None if k == 0 else os.path.join(work, "class_token_0.so"))

# ConstantOfShape of a dynamic tensor's shape (torch.ones(x.shape), as
# attention masks are made): the same, no read back.
path = model("constant_of_shape", [
    helper.make_node("Shape", ["x"], ["s"]),
    helper.make_node("ConstantOfShape", ["s"], ["c"],
                     value=helper.make_tensor("v", TensorProto.FLOAT, [1], [2.0])),
    helper.make_node("Add", ["c", "x"], ["y"])],
    [tensor("x", ["n", 5])], [tensor("y", ["n", 5])])
_, log = reads_back(path)
check("compiled " in log and "the host reads" not in log,
      "constant_of_shape: compiled for the GPU, the host reads nothing back", log)
for k, n in enumerate([2, 0]):
    x = rng.standard_normal((n, 5)).astype(np.float32)
    case(f"constant_of_shape_{k}", path if k == 0 else None, {"x": x}, x + 2,
         so=None if k == 0 else os.path.join(work, "constant_of_shape_0.so"))

# ShuffleNet's channel shuffle as torch's exporter writes it:
# x.view(n, 2, c // 2, h, w).transpose(1, 2).reshape(n, -1, h, w), the
# targets from Shape -> Gather -> Unsqueeze -> Concat. Two run-time
# elements (n and the -1) made it a reshape to a shape computed in
# kernels and read back (shufflenet_v2_x0_5: 67 values a run); computed
# on the host from the dims, nothing is read back.
def dim_of(x, d, out):
    return [helper.make_node("Shape", [x], [out + "_s"]),
            helper.make_node("Gather", [out + "_s", f"i{d}"], [out + "_g"], axis=0),
            helper.make_node("Unsqueeze", [out + "_g", "zeros"], [out])]


path = model("channel_shuffle", dim_of("x", 0, "n") + [
    helper.make_node("Concat", ["n", "two", "three", "hw", "hw"], ["t1"], axis=0),
    helper.make_node("Reshape", ["x", "t1"], ["r"]),
    helper.make_node("Transpose", ["r"], ["p"], perm=[0, 2, 1, 3, 4]),
    helper.make_node("Concat", ["n", "minus1", "hw", "hw"], ["t2"], axis=0),
    helper.make_node("Reshape", ["p", "t2"], ["y"])],
    [tensor("x", ["n", 6, 4, 4])], [tensor("y", ["n", 6, 4, 4])],
    {"i0": np.array(0, np.int64), "zeros": i64(0), "two": i64(2), "three": i64(3),
     "hw": i64(4), "minus1": i64(-1)})
_, log = reads_back(path)
check("compiled " in log and "the host reads" not in log,
      "channel_shuffle: compiled for the GPU, the host reads nothing back", log)
# (Not a batch of 0: a -1 beside a 0 has no size, for torch as for ONNX.)
for k, n in enumerate([3, 1, 2]):
    x = rng.standard_normal((n, 6, 4, 4)).astype(np.float32)
    want = x.reshape(n, 2, 3, 4, 4).transpose(0, 2, 1, 3, 4).reshape(n, 6, 4, 4)
    case(f"channel_shuffle_{k}", path if k == 0 else None, {"x": x}, want,
         so=None if k == 0 else os.path.join(work, "channel_shuffle_0.so"))

tally.finish()