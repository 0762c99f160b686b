#!/usr/bin/env python3
"""Single-operator models for bench/run.py's "Single operators" table, with
their inputs (Debian's python: numpy and onnx).

usage: op_models.py DIR

Writes DIR/ops.json, the cases [{"op", "model", "input", "batch", "file"}],
and for each operator its model and inputs:

  topk.onnx: TopK of 5 along the last dim of [N, 32000] float32 scores, N
  dynamic (the top classes of a large classifier); inputs for N in 1, 32:
  `random` (standard normal rows: few entries beat the 5th best so far) and
  `ascending` (each row 0, 1, ...: every entry does, the worst case of a
  scan that keeps the best so far).
  conv_transpose.onnx: ConvTranspose of [N, 64, 56, 56] to [N, 32, 112,
  112] (4 x 4 kernel, stride 2, pad 1: a decoder's upsampling), random
  weights; `random` inputs for N in 1, 8."""

import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

CLASSES, K, BATCHES = 32000, 5, (1, 32)


def conv_transpose(out, cases):
    rng = np.random.default_rng(1)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 64, 56, 56])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 32, 112, 112])
    w = numpy_helper.from_array((rng.standard_normal((64, 32, 4, 4)) * 0.05).astype(np.float32),
                                "w")
    b = numpy_helper.from_array(rng.standard_normal(32).astype(np.float32), "b")
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], strides=[2, 2],
                            pads=[1, 1, 1, 1], kernel_shape=[4, 4])
    graph = helper.make_graph([node], "conv_transpose", [x], [y], initializer=[w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, os.path.join(out, "conv_transpose.onnx"))
    for batch in (1, 8):
        name = f"conv_transpose.random.b{batch}.npy"
        np.save(os.path.join(out, name), rng.standard_normal((batch, 64, 56, 56)).astype(np.float32))
        cases.append({"op": "ConvTranspose 64 -> 32, 56 -> 112", "model": "conv_transpose",
                      "input": "random", "batch": batch, "file": name})


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    cases = []
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", CLASSES])
    v = helper.make_tensor_value_info("v", TensorProto.FLOAT, ["N", K])
    i = helper.make_tensor_value_info("i", TensorProto.INT64, ["N", K])
    k = helper.make_tensor("k", TensorProto.INT64, [1], [K])
    graph = helper.make_graph([helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1)],
                              "topk", [x], [v, i], initializer=[k])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, os.path.join(out, "topk.onnx"))
    rng = np.random.default_rng(0)
    for batch in BATCHES:
        inputs = {"random": rng.standard_normal((batch, CLASSES)),
                  "ascending": np.tile(np.arange(CLASSES, dtype=np.float64), (batch, 1))}
        for kind, values in inputs.items():
            name = f"topk.{kind}.b{batch}.npy"
            np.save(os.path.join(out, name), values.astype(np.float32))
            cases.append({"op": "TopK 5 of 32,000", "model": "topk", "input": kind,
                          "batch": batch, "file": name})
    cases.sort(key=lambda c: (c["input"] != "random", c["batch"]))
    conv_transpose(out, cases)
    with open(os.path.join(out, "ops.json"), "w") as f:
        json.dump(cases, f, indent=1)


if __name__ == "__main__":
    main()
