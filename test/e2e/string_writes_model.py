"""string_writes_model.py OUT.onnx

Writes a model whose host code writes two string results to the GPU one
after the other, with no read between them: y1 = Cast(c1) and
y2 = Cast(c2) to strings, c1 and c2 constants (read in place, not copied
back), and y3 = x + 1 so that the model has an input. ctest
`cuda-device-strings` runs it on the driver stand-in, whose copies from
pinned memory are asynchronous: a write that reused the staging memory of
the one before it, before that copy was done, would show in y1.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

c1 = numpy_helper.from_array(np.array([1.5, 2.25, -3.0], np.float32), "c1")
c2 = numpy_helper.from_array(np.array([10.0, 20.5, 0.125], np.float32), "c2")
one = numpy_helper.from_array(np.array([1.0], np.float32), "one")
nodes = [
    helper.make_node("Cast", ["c1"], ["y1"], to=TensorProto.STRING),
    helper.make_node("Cast", ["c2"], ["y2"], to=TensorProto.STRING),
    helper.make_node("Add", ["x", "one"], ["y3"]),
]
graph = helper.make_graph(
    nodes, "string_writes", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
    [helper.make_tensor_value_info("y1", TensorProto.STRING, [3]),
     helper.make_tensor_value_info("y2", TensorProto.STRING, [3]),
     helper.make_tensor_value_info("y3", TensorProto.FLOAT, [3])],
    [c1, c2, one])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
