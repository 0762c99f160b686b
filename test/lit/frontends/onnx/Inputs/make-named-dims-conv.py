#!/usr/bin/env python3
"""Writes a Conv + MaxPool model whose input is declared [N, 3, H, W]
(dims named, sizes unknown) into a folder, with an input of
[2, 3, 12, 10] and NumPy's result for it, for named-dims.test."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)
w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
graph = helper.make_graph(
    [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
     helper.make_node("MaxPool", ["c"], ["y"], name="pool", kernel_shape=[2, 2],
                      strides=[2, 2])],
    "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4, None, None])],
    [numpy_helper.from_array(w, "w")])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
          os.path.join(out, "model.onnx"))

x = rng.standard_normal((2, 3, 12, 10)).astype(np.float32)
padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
conv = np.zeros((2, 4, 12, 10), np.float32)
for i in range(3):
    for j in range(3):
        conv += np.einsum("nchw,oc->nohw", padded[:, :, i:i + 12, j:j + 10], w[:, :, i, j])
y = conv.reshape(2, 4, 6, 2, 5, 2).max(axis=(3, 5))
np.save(os.path.join(out, "x.npy"), x)
np.save(os.path.join(out, "y.npy"), y)
