#!/usr/bin/env python3
"""Writes the seed corpora of Kiln's fuzz targets into OUT/<target>/.

  make_seeds.py SOURCE_DIR OUT [--kiln PATH]

onnx-import: ONNX's node test models (one per operator case, from
libonnx-testdata), a few small multi-node models written here (a conv net,
an attention block, a dynamic-batch MLP) and the bad-input corpus of
test/lit/frontends/onnx; tensor-files: the node tests' input tensors (.pb)
and .npy files of every dtype Kiln reads; kiln-ir: the lit tests' .mlir
files split at `// -----`, plus the small models imported by `kiln import`
when --kiln is given; descriptor: edit records for fuzz/descriptor.c.
Run with Debian's python3 (onnx, numpy)."""
import argparse
import glob
import io
import os
import random
import shutil
import struct
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

NODE_TESTS = "/usr/share/libonnx-testdata/data/node"


def small_models():
    """A few multi-node models with weights, small enough to fuzz fast."""
    r = np.random.default_rng(0)

    def init(name, shape, dtype=np.float32):
        return numpy_helper.from_array(r.standard_normal(shape).astype(dtype), name)

    models = {}
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["n"], name="bn"),
        helper.make_node("Relu", ["n"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Concat", ["p", "p"], ["cc"], axis=1),
        helper.make_node("GlobalAveragePool", ["cc"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1),
    ]
    inits = [init("w", (4, 3, 3, 3)), init("b", (4,)), init("s", (4,)), init("bb", (4,)),
             init("m", (4,)), numpy_helper.from_array(np.ones(4, np.float32), "v"),
             init("fw", (4, 8)), init("fb", (4,))]
    models["convnet.onnx"] = helper.make_graph(nodes, "convnet", [x], [y], inits)

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8])
    nodes = [
        helper.make_node("LayerNormalization", ["x", "g", "be"], ["ln"], axis=-1),
        helper.make_node("MatMul", ["ln", "wq"], ["q"]),
        helper.make_node("MatMul", ["ln", "wk"], ["k"]),
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["s"]),
        helper.make_node("Div", ["s", "scale"], ["ss"]),
        helper.make_node("Softmax", ["ss"], ["a"], axis=-1),
        helper.make_node("MatMul", ["a", "ln"], ["o"]),
        helper.make_node("Erf", ["o"], ["e"]),
        helper.make_node("Add", ["e", "x"], ["y"]),
    ]
    inits = [init("g", (8,)), init("be", (8,)), init("wq", (8, 8)), init("wk", (8, 8)),
             numpy_helper.from_array(np.array(2.0, np.float32), "scale")]
    models["attention.onnx"] = helper.make_graph(nodes, "attention", [x], [y], inits)

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 2])
    shape = helper.make_tensor_value_info("shape", TensorProto.INT64, [2])
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"]),
        helper.make_node("Add", ["h", "b1"], ["hb"]),
        helper.make_node("Sigmoid", ["hb"], ["s"]),
        helper.make_node("Shape", ["s"], ["shape"]),
        helper.make_node("Reshape", ["s", "shape"], ["rs"]),
        helper.make_node("ReduceMean", ["rs"], ["mean"], axes=[1], keepdims=1),
        helper.make_node("Sub", ["rs", "mean"], ["d"]),
        helper.make_node("MatMul", ["d", "w2"], ["y"]),
    ]
    inits = [init("w1", (16, 8)), init("b1", (8,)), init("w2", (8, 2))]
    models["mlp.onnx"] = helper.make_graph(nodes, "mlp", [x], [y], inits, value_info=[shape])
    return {name: helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
            for name, graph in models.items()}


def npy_seeds(out):
    arrays = {
        "f4.npy": np.arange(6, dtype=np.float32).reshape(2, 3),
        "f8.npy": np.linspace(0, 1, 5),
        "f2.npy": np.ones((2, 2), np.float16),
        "i8.npy": np.array([[1, -2], [3, 4]], np.int64),
        "i4.npy": np.arange(4, dtype=np.int32),
        "i2.npy": np.arange(3, dtype=np.int16),
        "i1.npy": np.array([-1, 0, 1], np.int8),
        "u1.npy": np.arange(7, dtype=np.uint8),
        "u2.npy": np.arange(2, dtype=np.uint16),
        "u4.npy": np.arange(2, dtype=np.uint32),
        "u8.npy": np.arange(2, dtype=np.uint64),
        "b1.npy": np.array([True, False]),
        "scalar.npy": np.array(3.5, np.float32),
        "empty.npy": np.zeros((0, 4), np.float32),
        "rank4.npy": np.zeros((1, 2, 2, 2), np.float32),
    }
    for name, a in arrays.items():
        np.save(os.path.join(out, name), a)
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.ones(3, np.float32), version=(2, 0))
    open(os.path.join(out, "v2.npy"), "wb").write(buffer.getvalue())


def checkpoint(tensors):
    """A Kiln checkpoint (runtime/src/state.c) of {name: array}."""
    codes = {np.dtype(np.float32): 1, np.dtype(np.float64): 2, np.dtype(np.int64): 5}
    out = bytearray(b"KILNCKPT" + struct.pack("<II", 1, len(tensors)))
    for name, a in tensors.items():
        raw = name.encode()
        out += struct.pack("<I", len(raw)) + raw + struct.pack("<ii", codes[a.dtype], a.ndim)
        out += struct.pack("<%dq" % a.ndim, *a.shape)
        out += bytes(-len(out) % 64) + a.tobytes()
    return bytes(out)


def checkpoint_seeds(out):
    r = np.random.default_rng(3)
    seeds = {
        "empty": {},
        "one": {"w": r.standard_normal((3, 4)).astype(np.float32)},
        "several": {"fc.weight": r.standard_normal((2, 5)).astype(np.float32),
                    "fc.bias": np.zeros(2, np.float32), "adam.step": np.float32(3) * np.ones((), np.float32),
                    "ids": np.arange(4, dtype=np.int64), "d": np.ones((1, 1, 2), np.float64)},
    }
    for name, tensors in seeds.items():
        open(os.path.join(out, name + ".kstate"), "wb").write(checkpoint(tensors))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("source")
    parser.add_argument("out")
    parser.add_argument("--kiln")
    args = parser.parse_args()
    targets = ["onnx-import", "tensor-files", "kiln-ir", "descriptor", "checkpoint"]
    for t in targets:
        shutil.rmtree(os.path.join(args.out, t), ignore_errors=True)
        os.makedirs(os.path.join(args.out, t))
    onnx_dir, tensor_dir, ir_dir, desc_dir = (os.path.join(args.out, t) for t in targets[:4])

    for case in sorted(glob.glob(os.path.join(NODE_TESTS, "*"))):
        name = os.path.basename(case)
        if os.path.exists(os.path.join(case, "model.onnx")):
            shutil.copy(os.path.join(case, "model.onnx"), os.path.join(onnx_dir, name + ".onnx"))
        first = os.path.join(case, "test_data_set_0", "input_0.pb")
        if os.path.exists(first) and os.path.getsize(first) <= 65536:
            shutil.copy(first, os.path.join(tensor_dir, name + ".pb"))
    small = small_models()
    for name, model in small.items():
        onnx.save(model, os.path.join(onnx_dir, "small-" + name))
    bad = os.path.join(args.out, "bad-models")
    subprocess.run([sys.executable, os.path.join(args.source, "test/lit/frontends/onnx/Inputs/make-bad-models.py"), bad],
                   check=True, stdout=subprocess.DEVNULL)
    for path in glob.glob(os.path.join(bad, "*.onnx")):
        if os.path.getsize(path) <= 65536:
            shutil.copy(path, os.path.join(onnx_dir, "bad-" + os.path.basename(path)))
    shutil.rmtree(bad)
    npy_seeds(tensor_dir)

    count = 0
    for path in sorted(glob.glob(os.path.join(args.source, "test/lit/**/*.mlir"), recursive=True)):
        text = open(path).read()
        for i, part in enumerate(text.split("// -----")):
            lines = [l for l in part.splitlines() if not l.lstrip().startswith("// RUN")]
            open(os.path.join(ir_dir, "%s-%d.mlir" % (os.path.basename(path)[:-5], i)), "w").write("\n".join(lines) + "\n")
            count += 1
    if args.kiln:
        for name in small:
            for suffix in (".mlir", ".mlirbc"):
                subprocess.run([args.kiln, "import", os.path.join(onnx_dir, "small-" + name), "-o",
                                os.path.join(ir_dir, "small-" + name[:-5] + suffix)], check=True)

    # Descriptor edits: model byte, then (field lo, field hi, byte, value).
    r = random.Random(7)
    for model in range(2):
        open(os.path.join(desc_dir, "model%d-unchanged" % model), "wb").write(bytes([model]))
        for k in range(8):
            edits = bytes(r.randrange(256) for _ in range(4 * (1 + k % 4)))
            open(os.path.join(desc_dir, "model%d-edits%d" % (model, k)), "wb").write(bytes([model]) + edits)
    checkpoint_seeds(os.path.join(args.out, "checkpoint"))
    sizes = {t: len(os.listdir(os.path.join(args.out, t))) for t in targets}
    print("seeds: " + ", ".join("%s %d" % kv for kv in sizes.items()))


if __name__ == "__main__":
    main()
