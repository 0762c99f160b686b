#!/usr/bin/env python3
"""Models on a dynamic batch, each compiled once and run at a batch of 2
and of 0: both runs succeed (no crash, no error), and the batch of 0 gives
the batch of 2's output dims with the batch at 0 (a reduction over the
batch: its identity). A batch of 0 reaches every kernel and library call
with empty operands; GRU and LSTM died of SIGFPE in oneDNN there.

usage: empty_batch_test.py KILN WORK_DIR [--emulate-gpu]
With --emulate-gpu, compiled with --target=cuda --emulate-gpu (the CUDA
backend's loop nests as mapped onto blocks and threads, run on the CPU).
Prints "N passed, N failed"; exits 1 on a failure.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

KILN = sys.argv[1]
W = sys.argv[2]
FLAGS = ["--target=cuda", "--emulate-gpu"] if "--emulate-gpu" in sys.argv[3:] else []
os.makedirs(W, exist_ok=True)
rng = np.random.default_rng(0)
F = TensorProto.FLOAT


def const(name, a):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(a, name))


def model(name, nodes, shape, opset=18):
    """x: float [n] + shape, n known only at run time; y: the output."""
    inputs = [helper.make_tensor_value_info("x", F, ["n"] + list(shape))]
    g = helper.make_graph(nodes, name, inputs, [helper.make_tensor_value_info("y", F, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    p = os.path.join(W, name + ".onnx")
    onnx.save(m, p)
    return p

cases = []


def case(name, nodes, shape, batch_axis=0, empty=None, **kw):
    """`batch_axis`: the output dim that is the batch (None: none; then
    `empty` is the output at a batch of 0)."""
    cases.append((name, model(name, nodes, shape, **kw), shape, batch_axis, empty))


w3 = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
case("conv", [const("w", w3), const("b", np.ones(4, np.float32)),
              helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1])], [3, 6, 6])
case("conv_relu_pool", [const("w", w3), helper.make_node("Conv", ["x", "w"], ["c"]),
                        helper.make_node("Relu", ["c"], ["r"]),
                        helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2],
                                         strides=[2, 2])], [3, 6, 6])
case("depthwise", [const("w", rng.standard_normal((3, 1, 3, 3)).astype(np.float32)),
                   helper.make_node("Conv", ["x", "w"], ["y"], group=3, pads=[1, 1, 1, 1])],
     [3, 6, 6])
case("avgpool", [helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3],
                                  pads=[1, 1, 1, 1])], [3, 6, 6])
case("gap", [helper.make_node("GlobalAveragePool", ["x"], ["y"])], [3, 6, 6])
case("batchnorm", [const("s", np.ones(3, np.float32)), const("b", np.zeros(3, np.float32)),
                   const("m", np.zeros(3, np.float32)), const("v", np.ones(3, np.float32)),
                   helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])],
     [3, 6, 6])
case("gemm", [const("w", rng.standard_normal((5, 8)).astype(np.float32)),
              const("b", np.ones(5, np.float32)),
              helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1)], [8])
case("layernorm", [const("s", np.ones(8, np.float32)), const("b", np.zeros(8, np.float32)),
                   helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"])], [4, 8])
case("logsoftmax", [helper.make_node("LogSoftmax", ["x"], ["y"], axis=-1)], [8])
case("reducemean", [const("a", np.array([1], np.int64)),
                    helper.make_node("ReduceMean", ["x", "a"], ["y"])], [4, 8])
case("concat", [helper.make_node("Relu", ["x"], ["r"]),
                helper.make_node("Concat", ["x", "r"], ["y"], axis=1)], [4])
case("transpose", [helper.make_node("Transpose", ["x"], ["y"], perm=[0, 2, 1])], [4, 8])
case("flatten", [helper.make_node("Flatten", ["x"], ["y"])], [3, 4])
case("resize", [const("s", np.array([1, 1, 2, 2], np.float32)),
                helper.make_node("Resize", ["x", "", "s"], ["y"], mode="nearest")], [3, 4, 4])
case("resize_linear", [const("s", np.array([1, 1, 2, 2], np.float32)),
                       helper.make_node("Resize", ["x", "", "s"], ["y"], mode="linear")],
     [3, 4, 4])
case("topk", [const("k", np.array([2], np.int64)),
              helper.make_node("TopK", ["x", "k"], ["y", "i"], axis=1)], [6])
case("cumsum", [const("a", np.array(1, np.int64)),
                helper.make_node("CumSum", ["x", "a"], ["y"])], [6])
case("instancenorm", [const("s", np.ones(3, np.float32)), const("b", np.zeros(3, np.float32)),
                      helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"])],
     [3, 4, 4])
case("bmm", [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["x", "t"], ["y"])], [4, 8])
case("convtranspose", [const("w", rng.standard_normal((3, 2, 3, 3)).astype(np.float32)),
                       helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2])],
     [3, 4, 4])
case("expand", [const("s", np.array([1, 3], np.int64)),
                helper.make_node("Expand", ["x", "s"], ["y"])], [1])
case("tile", [const("r", np.array([2, 2], np.int64)),
              helper.make_node("Tile", ["x", "r"], ["y"])], [3])
case("pad", [const("p", np.array([0, 1, 1, 0, 1, 1], np.int64)),
             helper.make_node("Pad", ["x", "p"], ["y"])], [3, 4])
case("pad_reflect_hw", [const("p", np.array([0, 1, 1, 0, 1, 1], np.int64)),
                        helper.make_node("Pad", ["x", "p"], ["y"], mode="reflect")], [3, 4])
case("depthtospace", [helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2)], [4, 2, 2])
case("gather_axis1", [const("i", np.array([2, 0], np.int64)),
                      helper.make_node("Gather", ["x", "i"], ["y"], axis=1)], [4])
case("gather_elements", [const("i", np.zeros((1, 2), np.int64)),
                         helper.make_node("Expand", ["i", "sh"], ["ie"]),
                         helper.make_node("Shape", ["x"], ["sx"]),
                         helper.make_node("Slice", ["sx", "z", "o"], ["n0"]),
                         const("z", np.array([0], np.int64)), const("o", np.array([1], np.int64)),
                         const("two", np.array([2], np.int64)),
                         helper.make_node("Concat", ["n0", "two"], ["sh"], axis=0),
                         helper.make_node("GatherElements", ["x", "ie"], ["y"], axis=1)], [4])
case("softmax_batch_axis", [helper.make_node("Softmax", ["x"], ["y"], axis=0)], [4])
case("reducesum_batch", [const("a", np.array([0], np.int64)),
                         helper.make_node("ReduceSum", ["x", "a"], ["y"], keepdims=0)], [4],
     batch_axis=None, empty=np.zeros(4, np.float32))
case("lstm", [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0, 2]),
              const("w", rng.standard_normal((1, 16, 3)).astype(np.float32)),
              const("r", rng.standard_normal((1, 16, 4)).astype(np.float32)),
              helper.make_node("LSTM", ["t", "w", "r"], ["y"], hidden_size=4)], [5, 3],
     batch_axis=2)
case("gru", [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0, 2]),
             const("w", rng.standard_normal((1, 12, 3)).astype(np.float32)),
             const("r", rng.standard_normal((1, 12, 4)).astype(np.float32)),
             helper.make_node("GRU", ["t", "w", "r"], ["y"], hidden_size=4)], [5, 3],
     batch_axis=2)
case("einsum", [helper.make_node("Einsum", ["x", "x"], ["y"], equation="bij,bkj->bik")], [3, 4])
case("qdq", [const("s", np.array(0.1, np.float32)), const("z", np.array(0, np.uint8)),
             helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])], [4])
case("maxpool_ceil", [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3],
                                       strides=[2, 2], ceil_mode=1)], [2, 5, 5])
case("lrn", [helper.make_node("LRN", ["x"], ["y"], size=3)], [4, 3, 3])
case("groupnorm", [const("s", np.ones(4, np.float32)), const("b", np.zeros(4, np.float32)),
                   helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2)],
     [4, 3, 3], opset=21)
case("where", [helper.make_node("Greater", ["x", "z"], ["g"]),
               const("z", np.array(0, np.float32)),
               helper.make_node("Where", ["g", "x", "z"], ["y"])], [4])
case("argmax", [helper.make_node("ArgMax", ["x"], ["a"], axis=1),
                helper.make_node("Cast", ["a"], ["y"], to=F)], [4])
case("split", [helper.make_node("Split", ["x"], ["a", "b"], axis=1, num_outputs=2),
               helper.make_node("Sub", ["a", "b"], ["y"])], [4])
case("slice_batch", [const("s", np.array([1], np.int64)), const("e", np.array([100], np.int64)),
                     const("a", np.array([0], np.int64)),
                     helper.make_node("Slice", ["x", "s", "e", "a"], ["y"])], [4])

case("gridsample", [helper.make_node("Transpose", ["x"], ["g0"], perm=[0, 2, 3, 1]),
                    const("st", np.array([0], np.int64)), const("en", np.array([2], np.int64)),
                    const("ax", np.array([3], np.int64)),
                    helper.make_node("Slice", ["g0", "st", "en", "ax"], ["g"]),
                    helper.make_node("Tanh", ["g"], ["gt"]),
                    helper.make_node("GridSample", ["x", "gt"], ["y"])], [3, 4, 4], opset=20)
case("onehot", [const("d", np.array(5, np.int64)), const("v", np.array([0, 1], np.float32)),
                helper.make_node("Cast", ["x"], ["xi"], to=TensorProto.INT64),
                helper.make_node("OneHot", ["xi", "d", "v"], ["y"])], [3])
case("hardmax", [helper.make_node("Hardmax", ["x"], ["y"], axis=-1)], [4])
case("reduce_l2", [const("a", np.array([1], np.int64)),
                   helper.make_node("ReduceL2", ["x", "a"], ["y"])], [4])
case("mean_var", [helper.make_node("MeanVarianceNormalization", ["x"], ["y"])], [3, 2, 2])
case("spacetodepth", [helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2)], [1, 4, 4])
case("resize_cubic", [const("s", np.array([1, 1, 2, 2], np.float32)),
                      helper.make_node("Resize", ["x", "", "s"], ["y"], mode="cubic")], [2, 3, 3])
case("conv_dilated_strided", [const("w", rng.standard_normal((2, 3, 3, 3)).astype(np.float32)),
                              helper.make_node("Conv", ["x", "w"], ["y"], dilations=[2, 2],
                                               strides=[2, 2])], [3, 7, 7])
case("conv1d", [const("w", rng.standard_normal((2, 3, 3)).astype(np.float32)),
                helper.make_node("Conv", ["x", "w"], ["y"])], [3, 7])
case("conv3d", [const("w", rng.standard_normal((2, 3, 2, 2, 2)).astype(np.float32)),
                helper.make_node("Conv", ["x", "w"], ["y"])], [3, 3, 3, 3])
case("maxpool_idx", [helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2])],
     [2, 4, 4])
case("lppool", [helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[2, 2])], [2, 4, 4])
case("globalmax", [helper.make_node("GlobalMaxPool", ["x"], ["y"])], [2, 4, 4])
case("rnn", [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0, 2]),
             const("w", rng.standard_normal((2, 4, 3)).astype(np.float32)),
             const("r", rng.standard_normal((2, 4, 4)).astype(np.float32)),
             helper.make_node("RNN", ["t", "w", "r"], ["y"], hidden_size=4,
                              direction="bidirectional")], [5, 3], batch_axis=2)
case("matmul_int", [helper.make_node("Cast", ["x"], ["q"], to=TensorProto.UINT8),
                    const("w", np.ones((4, 3), np.uint8)),
                    helper.make_node("MatMulInteger", ["q", "w"], ["m"]),
                    helper.make_node("Cast", ["m"], ["y"], to=F)], [4])
case("attention_like", [helper.make_node("MatMul", ["x", "xt"], ["s"]),
                        helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
                        helper.make_node("Softmax", ["s"], ["p"], axis=-1),
                        helper.make_node("MatMul", ["p", "x"], ["y"])], [4, 8])
case("elu_family", [helper.make_node("Celu", ["x"], ["a"]),
                    helper.make_node("Elu", ["a"], ["b"]),
                    helper.make_node("Selu", ["b"], ["y"])], [4])
case("prelu", [const("s", np.full((3, 1, 1), 0.1, np.float32)),
               helper.make_node("PRelu", ["x", "s"], ["y"])], [3, 2, 2])
case("dft", [helper.make_node("Unsqueeze", ["x", "ua"], ["u"]),
             const("ua", np.array([-1], np.int64)),
             helper.make_node("DFT", ["u", "", "ax"], ["y"]),
             const("ax", np.array(1, np.int64))], [8], opset=20)
case("trilu", [helper.make_node("Trilu", ["x"], ["y"])], [4, 4])
case("compress", [const("c", np.array([True, False, True, True])),
                  helper.make_node("Compress", ["x", "c"], ["y"], axis=1)], [4])
case("reverse_seq", [helper.make_node("ReverseSequence", ["x", "l"], ["y"], batch_axis=0,
                                      time_axis=1),
                     helper.make_node("Shape", ["x"], ["sh"]),
                     const("z", np.array([0], np.int64)), const("o", np.array([1], np.int64)),
                     helper.make_node("Slice", ["sh", "z", "o"], ["n"]),
                     const("two", np.array([2], np.int64)),
                     helper.make_node("Expand", ["two", "n"], ["l"])], [4, 2])
case("deconv_grouped", [const("w", rng.standard_normal((4, 1, 2, 2)).astype(np.float32)),
                        helper.make_node("ConvTranspose", ["x", "w"], ["y"], group=4)],
     [4, 3, 3])
case("conv_residual", [const("w", w3),
                       helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                       helper.make_node("Conv", ["c", "w2"], ["d"], pads=[1, 1, 1, 1]),
                       const("w2", rng.standard_normal((4, 4, 3, 3)).astype(np.float32)),
                       helper.make_node("Add", ["c", "d"], ["y"])], [3, 5, 5])
case("concat_channels", [const("w", w3), helper.make_node("Conv", ["x", "w"], ["a"]),
                         helper.make_node("Conv", ["x", "w"], ["b"]),
                         helper.make_node("Concat", ["a", "b"], ["y"], axis=1)], [3, 5, 5])
case("se_scale", [const("w", w3), helper.make_node("Conv", ["x", "w"], ["a"]),
                  helper.make_node("GlobalAveragePool", ["a"], ["g"]),
                  helper.make_node("Sigmoid", ["g"], ["s"]),
                  helper.make_node("Mul", ["a", "s"], ["y"])], [3, 5, 5])

passed = failed = 0
for name, path, shape, batch_axis, empty in cases:
    so = os.path.join(W, name + ".so")
    p = subprocess.run([KILN, "compile", path, "-o", so] + FLAGS, capture_output=True, text=True)
    problem = None
    if p.returncode != 0:
        problem = f"compile: {(p.stdout + p.stderr).strip()[-300:]}"
    shapes = {}
    for b in (2, 0):
        if problem:
            break
        x = rng.standard_normal([b] + shape).astype(np.float32)
        xp = os.path.join(W, f"{name}_x{b}.npy")
        np.save(xp, x)
        od = os.path.join(W, f"{name}_out{b}")
        p = subprocess.run([KILN, "run", so, "--input", f"x={xp}", "--output-dir", od],
                           capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            problem = f"batch {b}: exit {p.returncode}: {(p.stdout + p.stderr).strip()[-300:]}"
            break
        y = np.load(os.path.join(od, "y.npy"))
        shapes[b] = y.shape
        if b == 0 and batch_axis is not None:
            want = list(shapes[2])
            want[batch_axis] = 0
            if list(y.shape) != want:
                problem = f"batch 0 gave dims {list(y.shape)}, want {want}"
        elif b == 0 and not (y.shape == empty.shape and np.array_equal(y, empty)):
            problem = f"batch 0 gave {y}, want {empty}"
    if problem:
        print(f"FAIL: {name}: {problem}")
        failed += 1
    else:
        print(f"PASS: {name}")
        passed += 1
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
