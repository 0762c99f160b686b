#!/usr/bin/env python3
"""Writes examples' small CNN (conv-bn-relu, pool, linear) as an ONNX model
with fixed pseudo-random weights, and a sample input of batch 2:
make_small_cnn.py OUT.onnx [INPUT.npy]"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)


def weight(name, *shape):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.1).astype(np.float32), name)


inits = [weight("conv.w", 8, 3, 3, 3), weight("conv.b", 8),
         weight("bn.scale", 8), weight("bn.bias", 8), weight("bn.mean", 8),
         numpy_helper.from_array(np.ones(8, np.float32), "bn.var"),
         weight("fc.w", 10, 8), weight("fc.b", 10)]
nodes = [
    helper.make_node("Conv", ["image", "conv.w", "conv.b"], ["c"], name="conv",
                     pads=[1, 1, 1, 1]),
    helper.make_node("BatchNormalization", ["c", "bn.scale", "bn.bias", "bn.mean", "bn.var"],
                     ["n"], name="bn"),
    helper.make_node("Relu", ["n"], ["r"], name="relu"),
    helper.make_node("GlobalAveragePool", ["r"], ["p"], name="pool"),
    helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
    helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["logits"], name="fc", transB=1),
    helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
]
graph = helper.make_graph(
    nodes, "small_cnn",
    [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 3, 16, 16])],
    [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 10])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="kiln-examples")
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
if len(sys.argv) > 2:
    np.save(sys.argv[2], rng.standard_normal((2, 3, 16, 16)).astype(np.float32))
