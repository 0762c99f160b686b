#!/usr/bin/env python3
"""Single-operator models for bench/run.py's "Single operators" table, with
their inputs (Debian's python: numpy and onnx).

usage: op_models.py DIR

Writes DIR/topk.onnx (TopK of 5 along the last dim of [N, 32000] float32
scores, N dynamic: the top classes of a large classifier) and its inputs
DIR/topk.<kind>.b<N>.npy for N in 1, 32: `random` (standard normal rows:
few entries beat the 5th best so far) and `ascending` (each row 0, 1, ...:
every entry does, the worst case of a scan that keeps the best so far)."""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

CLASSES, K, BATCHES = 32000, 5, (1, 32)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
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
            np.save(os.path.join(out, f"topk.{kind}.b{batch}.npy"), values.astype(np.float32))


if __name__ == "__main__":
    main()
