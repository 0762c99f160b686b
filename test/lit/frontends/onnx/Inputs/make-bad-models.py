#!/usr/bin/env python3
"""Writes the bad-input corpus for bad-input.test into a folder: models
that are malformed in one way each. Built from ONNX's helpers at test time
so no binary is committed; none of them passes onnx.checker on purpose."""
import os
import random
import sys

import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def save(name, graph, opset=17, domains=()):
    imports = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in domains]
    model = helper.make_model(graph, opset_imports=imports)
    onnx.save(model, os.path.join(out, name))
    return model


def vi(name, dtype=TensorProto.FLOAT, shape=(2,)):
    return helper.make_tensor_value_info(name, dtype, list(shape))


good = save("good.onnx", helper.make_graph(
    [helper.make_node("Relu", ["x"], ["y"], name="relu0")], "g", [vi("x")], [vi("y")]))
data = good.SerializeToString()
open(os.path.join(out, "truncated.onnx"), "wb").write(data[: len(data) // 2])
r = random.Random(11)
open(os.path.join(out, "random.onnx"), "wb").write(bytes(r.randrange(256) for _ in range(2048)))
open(os.path.join(out, "empty.onnx"), "wb").write(b"")

# A node reads a name nothing defines (a missing initializer).
save("missing-initializer.onnx", helper.make_graph(
    [helper.make_node("Add", ["x", "bias"], ["y"], name="add_bias")], "g", [vi("x")], [vi("y")]))
# Two nodes feed each other.
save("cycle.onnx", helper.make_graph(
    [helper.make_node("Add", ["x", "b"], ["a"], name="first"),
     helper.make_node("Relu", ["a"], ["b"], name="second")], "g", [vi("x")], [vi("a")]))
# An output nobody produces.
save("dangling-output.onnx", helper.make_graph(
    [helper.make_node("Relu", ["x"], ["y"], name="relu0")], "g", [vi("x")], [vi("z")]))
# No outputs at all (it compiled into an artifact the runtime refused to load).
save("no-outputs.onnx", helper.make_graph(
    [helper.make_node("Relu", ["x"], ["y"], name="relu0")], "g", [vi("x")], []))
# ReduceMax's axes as an attribute at opset 18, where they are an input
# (it reduced over every axis: the attribute was ignored).
save("moved-attribute.onnx", helper.make_graph(
    [helper.make_node("ReduceMax", ["x"], ["y"], name="max_rows", axes=[1], keepdims=0)], "g",
    [vi("x", shape=(2, 3))], [vi("y")]), opset=18)
# An attribute no opset of ReduceSum has (axes misspelled): it was
# ignored, so the node summed over every axis.
save("unknown-attribute.onnx", helper.make_graph(
    [helper.make_node("ReduceSum", ["x"], ["y"], name="sum_rows", axis=[1], keepdims=0)], "g",
    [vi("x", shape=(2, 3))], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]),
    opset=11)
# Relu with a second input: it was ignored.
save("extra-input.onnx", helper.make_graph(
    [helper.make_node("Relu", ["x", "x2"], ["y"], name="relu_two")], "g",
    [vi("x"), vi("x2")], [vi("y")]))
# ConvTranspose's kernel_shape contradicting its weight [1, 1, 3, 3]:
# ignored before.
save("convtranspose-kernel.onnx", helper.make_graph(
    [helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up", kernel_shape=[2, 2])], "g",
    [vi("x", shape=(1, 1, 4, 4))], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    [helper.make_tensor("w", TensorProto.FLOAT, [1, 1, 3, 3], [1.0] * 9)]))
# Dropout before opset 7 with is_test = 0 asks for the training form.
save("dropout-training.onnx", helper.make_graph(
    [helper.make_node("Dropout", ["x"], ["y"], name="drop", is_test=0)], "g",
    [vi("x")], [vi("y")]), opset=6)
# float + int64.
save("type-mismatch.onnx", helper.make_graph(
    [helper.make_node("Add", ["x", "i"], ["y"], name="mixed_add")], "g",
    [vi("x"), vi("i", TensorProto.INT64)], [vi("y")]))
# Shapes that do not broadcast.
save("shape-mismatch.onnx", helper.make_graph(
    [helper.make_node("Mul", ["x", "w"], ["y"], name="bad_mul")], "g",
    [vi("x", shape=(2, 3)), vi("w", shape=(4,))], [vi("y", shape=(2, 3))]))
# A domain Kiln does not know, imported by the model.
save("unknown-domain.onnx", helper.make_graph(
    [helper.make_node("FusedThing", ["x"], ["y"], name="vendor_op", domain="com.example")],
    "g", [vi("x")], [vi("y")]), domains=["com.example"])
# A node in a domain the model does not import.
save("unimported-domain.onnx", helper.make_graph(
    [helper.make_node("Relu", ["x"], ["y"], name="relu0", domain="com.other")],
    "g", [vi("x")], [vi("y")]))
# An opset newer than Kiln knows.
save("future-opset.onnx", helper.make_graph(
    [helper.make_node("Relu", ["x"], ["y"])], "g", [vi("x")], [vi("y")]), opset=99)
# Two unsupported ops and one unsupported attribute, all to be listed.
save("several-unsupported.onnx", helper.make_graph(
    [helper.make_node("RandomUniformLike", ["x"], ["u"], name="uniform"),
     helper.make_node("Bernoulli", ["x"], ["n"], name="bernoulli"),
     helper.make_node("LpPool", ["img"], ["p"], name="lp_pool_ceil", kernel_shape=[3, 3],
                      strides=[2, 2], ceil_mode=1)],
    "g", [vi("x"), vi("img", shape=(1, 1, 4, 4))],
    [vi("u"), vi("n"), vi("p", shape=(1, 1, 2, 2))]), opset=18)
# An initializer whose data does not match its dims.
bad_init = helper.make_tensor("w", TensorProto.FLOAT, [2], [1.0, 2.0])
bad_init.dims[0] = 3
save("bad-initializer.onnx", helper.make_graph(
    [helper.make_node("Add", ["x", "w"], ["y"])], "g", [vi("x", shape=(3,))],
    [vi("y", shape=(3,))], [bad_init]))
# External data that escapes the model's folder, and external data missing.
for name, location in [("external-escape.onnx", "../secret.bin"),
                       ("external-missing.onnx", "weights-not-here.bin")]:
    w = helper.make_tensor("w", TensorProto.FLOAT, [3], [0.0, 0.0, 0.0])
    w.ClearField("float_data")
    w.data_location = TensorProto.EXTERNAL
    w.external_data.add(key="location", value=location)
    save(name, helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"])], "g", [vi("x", shape=(3,))],
        [vi("y", shape=(3,))], [w]))
# A range of 10^12 elements: too large to build at compile time.
save("huge-range.onnx", helper.make_graph(
    [helper.make_node("Constant", [], ["s"], value=helper.make_tensor("s", TensorProto.INT64, [], [0])),
     helper.make_node("Constant", [], ["l"], value=helper.make_tensor("l", TensorProto.INT64, [], [10**12])),
     helper.make_node("Constant", [], ["d"], value=helper.make_tensor("d", TensorProto.INT64, [], [1])),
     helper.make_node("Range", ["s", "l", "d"], ["y"], name="huge_range")],
    "g", [], [vi("y", TensorProto.INT64, (10**12,))]))
# Graph outputs declared other than computed: a data type ONNX does not
# define, another element type, other dims.
undefined_type = vi("y", shape=(2, 4))
undefined_type.type.tensor_type.elem_type = 999
for name, output in [("output-type-999.onnx", undefined_type),
                     ("output-type-mismatch.onnx", vi("y", TensorProto.INT64, (2, 4))),
                     ("output-dims-mismatch.onnx", vi("y", shape=(3, 5)))]:
    save(name, helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu0")], "g",
                                 [vi("x", shape=(2, 4))], [output]))
# A ConstantOfShape of 10^11 floats returned as the output: a splat at
# import, but far too large to store in an artifact.
save("huge-constant-of-shape.onnx", helper.make_graph(
    [helper.make_node("ConstantOfShape", ["shape"], ["y"], name="fill",
                      value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0]))],
    "g", [], [vi("y", shape=(100000, 1000000))],
    [helper.make_tensor("shape", TensorProto.INT64, [2], [100000, 1000000])]))
# Past the loader's limits (ModelLoader.h): an attribute of 2^20 + 1 ints,
# a string attribute over 1 MiB, 4,097 graph inputs, and 1,000,001 nodes
# (the node's bytes repeated: the limit is checked before anything else).
save("huge-attribute.onnx", helper.make_graph(
    [helper.make_node("Reshape", ["x", "s"], ["y"], name="wide_attr", junk=[1] * (2**20 + 1))],
    "g", [vi("x"), vi("s", TensorProto.INT64, (1,))], [vi("y")]))
save("huge-string.onnx", helper.make_graph(
    [helper.make_node("Relu", ["x"], ["y"], name="long_string", note="x" * (2**20 + 1))],
    "g", [vi("x")], [vi("y")]))
save("many-inputs.onnx", helper.make_graph(
    [helper.make_node("Relu", ["i0"], ["y"], name="relu0")], "g",
    [vi("i%d" % i) for i in range(4097)], [vi("y")]))
node_bytes = helper.make_node("Relu", ["x"], ["x"]).SerializeToString()
assert len(node_bytes) < 128  # a one-byte length
node_field = b"\x0a" + bytes([len(node_bytes)]) + node_bytes  # GraphProto.node = 1
model = helper.make_model(helper.make_graph([], "g", [vi("x")], [vi("x")]),
                          opset_imports=[helper.make_opsetid("", 17)])
model.graph.ParseFromString(node_field * 1000001 + model.graph.SerializeToString())
open(os.path.join(out, "many-nodes.onnx"), "wb").write(model.SerializeToString())
