#!/usr/bin/env python3
"""Writes a model whose weight lives in a side file (ONNX external data)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
w = numpy_helper.from_array(np.arange(256, dtype=np.float32).reshape(16, 16), "weight")
graph = helper.make_graph(
    [helper.make_node("MatMul", ["x", "weight"], ["y"], name="proj")], "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 16])], [w])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.save_model(model, os.path.join(out, "model.onnx"), save_as_external_data=True,
                all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)
