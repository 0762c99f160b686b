#!/usr/bin/env python3
"""Numerics users hit, checked against NumPy references (ONNX semantics):
NaN and infinities propagate, integer division and casts follow the ONNX
spec, reductions over empty axes and zero-size tensors work.

usage: numerics_test.py KILN WORK_DIR
Each case is a one- or two-node ONNX model built here, compiled with
`kiln compile`, run with `kiln run --output-dir` and compared bit-for-bit
where the result is exact (NaN matches NaN). Prints "N passed, N failed".
"""
import os
import subprocess
import sys

import numpy as np
import onnx

np.seterr(all="ignore")  # the references compute NaN and Inf on purpose
from onnx import TensorProto, helper, numpy_helper

NAN, INF = np.nan, np.inf
TYPES = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
         np.float16: TensorProto.FLOAT16,
         np.int64: TensorProto.INT64, np.int32: TensorProto.INT32,
         np.int16: TensorProto.INT16, np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8, np.bool_: TensorProto.BOOL}


def onnx_type(array):
    return TYPES[array.dtype.type]


def case(name, op, inputs, reference, attrs=None, consts=None, opset=17, dynamic=False,
         tolerance=0.0, order=None, before=None):
    """A model of one `op` node on `inputs` ({name: array}) plus constant
    inputs `consts` ({name: array}), expected to give `reference`; with
    `dynamic`, compiled with dim 0 dynamic and run on the inputs' size.
    `tolerance`: the absolute error allowed besides rtol 1e-6 (for results
    summed in another order than the reference's). `order`: the node's
    input names in order (default: the inputs, then the constants).
    `before`: nodes that run before `op` (their outputs named in `order`)."""
    return dict(name=name, op=op, inputs=inputs, reference=np.asarray(reference),
                attrs=attrs or {}, consts=consts or {}, opset=opset, dynamic=dynamic,
                tolerance=tolerance, order=order, before=before or [])


def build(c, path):
    ins = [helper.make_tensor_value_info(n, onnx_type(a), a.shape) for n, a in c["inputs"].items()]
    inits = [numpy_helper.from_array(a, n) for n, a in c["consts"].items()]
    names = c["order"] or list(c["inputs"]) + list(c["consts"])
    ref = c["reference"]
    shape = (["batch"] + list(ref.shape[1:])) if c["dynamic"] else ref.shape
    out = helper.make_tensor_value_info("y", onnx_type(ref), shape)
    node = helper.make_node(c["op"], names, ["y"], **c["attrs"])
    graph = helper.make_graph(c["before"] + [node], c["name"], ins, [out], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", c["opset"])])
    onnx.save(model, path)


def run_case(kiln, work, c):
    folder = os.path.join(work, c["name"])
    os.makedirs(folder, exist_ok=True)
    model = os.path.join(folder, "model.onnx")
    build(c, model)
    artifact = os.path.join(folder, "model.so")
    flags = ["--dynamic-batch"] if c["dynamic"] else []
    p = subprocess.run([kiln, "compile", model, "-o", artifact] + flags, capture_output=True,
                       text=True)
    if p.returncode != 0:
        return f"compile failed: {(p.stdout + p.stderr).strip()[-300:]}"
    args = [kiln, "run", artifact, "--output-dir", folder]
    for n, a in c["inputs"].items():
        np.save(os.path.join(folder, n + ".npy"), a)
        args += ["--input", f"{n}={os.path.join(folder, n + '.npy')}"]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        return f"run failed (exit {p.returncode}): {(p.stdout + p.stderr).strip()[-300:]}"
    got = np.load(os.path.join(folder, "y.npy"))
    want = c["reference"]
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"got {got.dtype}{list(got.shape)}, want {want.dtype}{list(want.shape)}"
    if want.dtype.kind == "f":
        same = np.array_equal(got, want, equal_nan=True) or (
            np.allclose(got, want, rtol=1e-6, atol=c["tolerance"], equal_nan=True)
            and np.array_equal(np.isnan(got), np.isnan(want))
            and np.array_equal(np.isinf(got), np.isinf(want)))
    else:
        same = np.array_equal(got, want)
    return "" if same else f"got {got.tolist()}, want {want.tolist()}"


def f32(*v):
    return np.array(v, np.float32)


def col2im_reference(x, image, block, dilations=None, pads=None, strides=None):
    """ONNX Col2Im: column l of block offset k adds to image position
    l * stride - pad_begin + k * dilation, where that lies in the image."""
    spatial = len(image)
    dilations = dilations or [1] * spatial
    pads = pads or [0] * (2 * spatial)
    strides = strides or [1] * spatial
    counts = [(image[d] + pads[d] + pads[spatial + d] - dilations[d] * (block[d] - 1) - 1)
              // strides[d] + 1 for d in range(spatial)]
    n, columns, _ = x.shape
    channels = columns // int(np.prod(block))
    blocks = x.reshape(n, channels, *block, *counts)
    out = np.zeros((n, channels, *image), x.dtype)
    for k in np.ndindex(*block):
        for l in np.ndindex(*counts):
            at = [l[d] * strides[d] - pads[d] + k[d] * dilations[d] for d in range(spatial)]
            if all(0 <= at[d] < image[d] for d in range(spatial)):
                out[(slice(None), slice(None), *at)] += blocks[(slice(None), slice(None), *k, *l)]
    return out


def tfidf_reference(x, min_gram, max_gram, max_skip, mode, counts, indexes, pool, weights=None):
    """TfIdfVectorizer by its definition: n-grams of the pool matched at
    every start with every distance 1..max_skip + 1 (unigrams once)."""
    rows = x.reshape(1, -1) if x.ndim == 1 else x
    columns = max(indexes) + 1
    grams = []  # (tokens, column) in id order
    for n, begin in enumerate(counts, start=1):
        end = counts[n] if n < len(counts) else len(pool)
        for g in range(begin, end, n):
            grams.append((tuple(pool[g:g + n]), indexes[len(grams)]))
    out = np.zeros((rows.shape[0], columns), np.float32)
    for b, row in enumerate(rows):
        for tokens, column in grams:
            n = len(tokens)
            if not min_gram <= n <= max_gram:
                continue
            for d in range(1, (1 if n == 1 else max_skip + 1) + 1):
                for start in range(len(row) - (n - 1) * d):
                    if all(row[start + k * d] == tokens[k] for k in range(n)):
                        out[b, column] += 1
    w = np.ones(columns, np.float32) if weights is None else np.asarray(weights, np.float32)
    if mode == "IDF":
        out = np.where(out > 0, w, 0).astype(np.float32)
    elif mode == "TFIDF":
        out = (out * w).astype(np.float32)
    return out.reshape(-1) if x.ndim == 1 else out


def tfidf_case(name, x, dynamic=False, **attrs):
    keys = ("min_gram_length", "max_gram_length", "max_skip_count", "mode", "ngram_counts",
            "ngram_indexes", "pool_int64s")
    reference = tfidf_reference(x, *(attrs[k] for k in keys), attrs.get("weights"))
    return case(name, "TfIdfVectorizer", {"x": x}, reference, attrs=attrs, dynamic=dynamic)


def cases():
    # TfIdfVectorizer's weighting modes and shapes ONNX's suite leaves out:
    # IDF and TFIDF with and without weights, one row, skip-grams, n-gram
    # sizes outside [min, max] (their ids still count), a row too short.
    tokens = np.array([[2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 2, 3],
                       [4, 4, 2, 5, 3, 7, 8, 6, 7, 6, 5, 4]], np.int64)
    pool = dict(ngram_counts=[0, 4, 10], pool_int64s=[2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 2, 5, 3])
    # float16 sums and means accumulate in float32 and round once, as
    # NumPy's (summed in float16, 4,096 tenths stalled near 256).
    tenths = np.full((2, 4096), 0.1, np.float16)
    tenths[1] = np.linspace(-3, 5, 4096).astype(np.float16)
    yield case("reduce_sum_f16_long", "ReduceSum", {"x": tenths},
               np.sum(tenths, axis=1, keepdims=True), attrs={"keepdims": 1},
               consts={"axes": np.array([1], np.int64)})
    yield case("reduce_mean_f16_long", "ReduceMean", {"x": tenths},
               np.mean(tenths, axis=1, keepdims=True), attrs={"axes": [1]})
    # QuantizeLinear's precision (opset 23): x / scale in float16, where
    # 1024.7 is 1025 (2050 after / 0.5; in float32 2049.4, so 2049).
    qx = f32(1024.7, -3.3, 100.2)
    half = qx.astype(np.float16) / np.float16(0.5)
    qconsts = {"s": f32(0.5), "z": np.array(0, np.int16)}
    yield case("quantize_precision_f16", "QuantizeLinear", {"x": qx},
               np.clip(np.rint(half), -32768, 32767).astype(np.int16),
               attrs={"precision": TensorProto.FLOAT16}, consts=qconsts, opset=25)
    yield case("quantize_precision_default", "QuantizeLinear", {"x": qx},
               np.clip(np.rint(qx / np.float32(0.5)), -32768, 32767).astype(np.int16),
               consts=qconsts, opset=25)
    # A float16 scale: the rounded value takes its zero point and the
    # int16 bounds exactly (in float16, 2050 + 3 is 2052 and 32767 is 32768).
    yield case("quantize_f16_scale_int16", "QuantizeLinear", {"x": f32(1025, 20000, -20000)},
               np.array([2053, 32767, -32768], np.int16),
               consts={"s": np.array(0.5, np.float16), "z": np.array(3, np.int16)}, opset=21)
    # A 32-bit result (beyond ONNX's types, which Kiln takes too) saturates
    # at its bounds, which float32 cannot hold (3e9 gave -2^31).
    yield case("quantize_int32_saturates", "QuantizeLinear",
               {"x": f32(3e9, -3e9, 2147483520.0, 100.5)},
               np.array([2147483647, -2147483648, 2147483521, 101], np.int32),
               consts={"s": np.array(1.0, np.float32), "z": np.array(1, np.int32)}, opset=21)
    # DequantizeLinear's output_dtype (opset 23): computed in float32 (as
    # ONNX's reference), then converted.
    dx = np.array([-128, 5, 127, 33], np.int8)
    dconsts = {"s": f32(0.1), "z": np.array(3, np.int8)}
    yield case("dequantize_output_f16", "DequantizeLinear", {"x": dx},
               ((dx.astype(np.float32) - 3) * np.float32(0.1)).astype(np.float16),
               attrs={"output_dtype": TensorProto.FLOAT16}, consts=dconsts, opset=23)
    h = np.array(0.1, np.float16)
    yield case("dequantize_f16_scale_output_f32", "DequantizeLinear", {"x": dx},
               (dx.astype(np.float32) - 3) * h.astype(np.float32),
               attrs={"output_dtype": TensorProto.FLOAT},
               consts={"s": h, "z": np.array(3, np.int8)}, opset=23)
    # Einsum with an ellipsis and with diagonals (a letter twice in a term).
    e = np.arange(2 * 3 * 3, dtype=np.float32).reshape(2, 3, 3)
    f = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4) / 7
    yield case("einsum_batch_diagonal", "Einsum", {"x": e}, np.einsum("...ii->...i", e),
               attrs={"equation": "...ii->...i"})
    yield case("einsum_trace_implicit", "Einsum", {"x": e[0]}, np.einsum("ii", e[0]),
               attrs={"equation": "ii"})
    yield case("einsum_ellipsis_matmul", "Einsum", {"a": e, "b": f},
               np.einsum("...ij,...jk", e, f), attrs={"equation": "...ij,...jk"})
    yield case("einsum_ellipsis_broadcast", "Einsum", {"a": e, "b": f[0]},
               np.einsum("...ij,jk->...ik", e, f[0]), attrs={"equation": "...ij,jk->...ik"})
    yield tfidf_case("tfidf_idf_weights", tokens, min_gram_length=1, max_gram_length=2,
                     max_skip_count=1, mode="IDF", ngram_indexes=[0, 1, 2, 3, 4, 5, 6, 0],
                     weights=[0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5], **pool)
    yield tfidf_case("tfidf_tfidf_one_row", tokens[1].astype(np.int32), min_gram_length=2,
                     max_gram_length=3, max_skip_count=2, mode="TFIDF",
                     ngram_indexes=[3, 2, 1, 0, 4, 5, 6, 7],
                     weights=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], **pool)
    yield tfidf_case("tfidf_idf_no_weights", tokens, min_gram_length=1, max_gram_length=3,
                     max_skip_count=0, mode="IDF", ngram_indexes=[0, 1, 2, 3, 4, 5, 6, 7],
                     **pool)
    # One row of run-time length (compiled with dim 0 dynamic), long and
    # too short for the trigrams.
    for name, row in (("tfidf_runtime_length", tokens[1]), ("tfidf_runtime_short", tokens[1, :2])):
        yield tfidf_case(name, row, dynamic=True, min_gram_length=1, max_gram_length=3,
                         max_skip_count=2, mode="TF", ngram_indexes=[0, 1, 2, 3, 4, 5, 6, 7],
                         **pool)
    yield tfidf_case("tfidf_row_too_short", tokens[:, :2], min_gram_length=3,
                     max_gram_length=3, max_skip_count=1, mode="TF",
                     ngram_indexes=[0, 1, 2, 3, 4, 5, 6, 7], **pool)
    x = f32(NAN, INF, -INF, 0.0, -0.0, 1.5, -2.5)
    yield case("relu_nan_inf", "Relu", {"x": x}, np.where(np.isnan(x), x, np.maximum(x, 0)))
    yield case("exp_nan_inf", "Exp", {"x": x}, np.exp(x))
    yield case("sigmoid_nan_inf", "Sigmoid", {"x": x}, (1 / (1 + np.exp(-x))).astype(np.float32))
    yield case("tanh_nan_inf", "Tanh", {"x": x}, np.tanh(x))
    yield case("abs_nan_inf", "Abs", {"x": x}, np.abs(x))
    yield case("sqrt_negative_is_nan", "Sqrt", {"x": f32(-1, 4, INF, NAN)}, f32(NAN, 2, INF, NAN))
    yield case("log_zero_is_minus_inf", "Log", {"x": f32(0, -1, INF, 1)}, f32(-INF, NAN, INF, 0))
    a, b = f32(NAN, 1, INF, -INF, INF), f32(1, NAN, 1, 1, -INF)
    yield case("add_nan_inf", "Add", {"a": a, "b": b}, a + b)
    yield case("max_propagates_nan", "Max", {"a": a, "b": b}, np.maximum(a, b))
    yield case("min_propagates_nan", "Min", {"a": a, "b": b}, np.minimum(a, b))
    yield case("div_by_zero", "Div", {"a": f32(1, -1, 0), "b": f32(0, 0, 0)}, f32(INF, -INF, NAN))
    m = np.array([[1, NAN, 3], [1, 2, INF]], np.float32)
    yield case("reduce_max_nan", "ReduceMax", {"x": m}, np.array([NAN, INF], np.float32),
               attrs={"axes": [1], "keepdims": 0})
    yield case("reduce_sum_inf_minus_inf", "ReduceSum",
               {"x": np.array([[INF, -INF], [INF, 1]], np.float32)}, f32(NAN, INF),
               consts={"axes": np.array([1], np.int64)}, attrs={"keepdims": 0})
    s = np.array([[0, -INF, 1], [-INF, -INF, -INF]], np.float32)
    e = np.exp(s[0] - s[0].max())
    yield case("softmax_minus_inf", "Softmax", {"x": s},
               np.array([e / e.sum(), [NAN, NAN, NAN]], np.float32))
    # Integer division truncates toward zero; Mod takes the divisor's sign
    # (fmod = 0) or the dividend's (fmod = 1).
    i, j = np.array([7, -7, 7, -7], np.int64), np.array([2, 2, -2, -2], np.int64)
    yield case("div_int_truncates", "Div", {"a": i, "b": j}, np.trunc(i / j).astype(np.int64))
    yield case("mod_int_sign_of_divisor", "Mod", {"a": i, "b": j}, np.mod(i, j))
    yield case("mod_fmod_sign_of_dividend", "Mod", {"a": i, "b": j}, np.fmod(i, j),
               attrs={"fmod": 1})
    yield case("mod_float_fmod", "Mod", {"a": f32(5.5, -5.5), "b": f32(2, 2)}, f32(1.5, -1.5),
               attrs={"fmod": 1})
    # Integer division by zero gives 0 (NumPy's answer; the instruction would
    # kill the process with SIGFPE), and INT_MIN / -1 the wrapped INT_MIN
    # with remainder 0, from inputs known only at run time.
    for t in (np.int64, np.int32, np.int8):
        low = np.iinfo(t).min
        a, b = np.array([7, -7, 0, low, low, 9], t), np.array([0, 0, 0, -1, 0, 4], t)
        name = np.dtype(t).name
        yield case("div_%s_by_zero_and_min_by_minus_one" % name, "Div", {"a": a, "b": b},
                   np.array([0, 0, 0, low, 0, 2], t))
        for fmod in (0, 1):
            yield case("mod_%s_fmod%d_by_zero_and_min_by_minus_one" % (name, fmod), "Mod",
                       {"a": a, "b": b}, np.array([0, 0, 0, 0, 0, 1], t), attrs={"fmod": fmod})
    u, v = np.array([200, 7, 0], np.uint8), np.array([0, 2, 0], np.uint8)
    yield case("div_uint8_by_zero", "Div", {"a": u, "b": v}, np.array([0, 3, 0], np.uint8))
    yield case("mod_uint8_by_zero", "Mod", {"a": u, "b": v}, np.array([0, 1, 0], np.uint8))
    # Casts: float -> int truncates toward zero, int -> narrower int keeps
    # the low bits, anything -> bool is "!= 0" (NaN is true).
    yield case("cast_float_to_int_truncates", "Cast", {"x": f32(2.7, -2.7, 0.5, -0.5)},
               np.array([2, -2, 0, 0], np.int32), attrs={"to": TensorProto.INT32})
    yield case("cast_int64_to_int8_wraps", "Cast", {"x": np.array([300, -129, 127], np.int64)},
               np.array([300, -129, 127], np.int64).astype(np.int8),
               attrs={"to": TensorProto.INT8})
    yield case("cast_float_to_bool", "Cast", {"x": f32(0, -0.0, NAN, 0.1)},
               np.array([False, False, True, True]), attrs={"to": TensorProto.BOOL})
    yield case("cast_uint8_to_float", "Cast", {"x": np.array([0, 200, 255], np.uint8)},
               f32(0, 200, 255), attrs={"to": TensorProto.FLOAT})
    yield case("cast_float_to_uint8", "Cast", {"x": f32(0, 200.9, 255)},
               np.array([0, 200, 255], np.uint8), attrs={"to": TensorProto.UINT8})
    # Reductions over empty axes, and zero-size tensors.
    r = np.arange(6, dtype=np.float32).reshape(2, 3)
    yield case("reduce_sum_no_axes_reduces_all", "ReduceSum", {"x": r},
               np.array([[15]], np.float32))
    yield case("reduce_sum_empty_axes_noop", "ReduceSum", {"x": r}, r,
               consts={"axes": np.zeros(0, np.int64)}, attrs={"noop_with_empty_axes": 1})
    z = np.zeros((0, 3), np.float32)
    yield case("reduce_sum_zero_size", "ReduceSum", {"x": z}, np.zeros(3, np.float32),
               consts={"axes": np.array([0], np.int64)}, attrs={"keepdims": 0})
    yield case("reduce_prod_zero_size", "ReduceProd", {"x": z}, np.ones(3, np.float32),
               attrs={"axes": [0], "keepdims": 0})
    yield case("add_zero_size", "Add", {"a": z, "b": f32(1, 2, 3)}, np.zeros((0, 3), np.float32))
    yield case("relu_zero_size", "Relu", {"x": z}, z)
    # A batch of 0 into [0, -1]: the -1 is total / 0 (the division trapped,
    # SIGFPE); it is 0.
    yield case("reshape_zero_batch_minus_one", "Reshape", {"x": np.zeros((0, 3, 4), np.float32)},
               np.zeros((0, 0), np.float32), consts={"shape": np.array([0, -1], np.int64)},
               dynamic=True)
    yield case("matmul_zero_inner", "MatMul", {"a": np.zeros((2, 0), np.float32),
                                               "b": np.zeros((0, 3), np.float32)},
               np.zeros((2, 3), np.float32))
    yield from deform_conv_cases()
    # Loop with a constant trip count, unrolled: y = 2 y + i over 4
    # iterations; and one whose body stops it (going on while i < 2, so
    # after 3) before the trip count.
    def loop_body(stop_early):
        again = (helper.make_node("Less", ["i", "two"], ["again"]) if stop_early else
                 helper.make_node("Identity", ["c"], ["again"]))
        return helper.make_graph(
            [helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["y", "y"], ["twice"]),
             helper.make_node("Add", ["twice", "fi"], ["y_out"]),
             helper.make_node("Constant", [], ["two"],
                              value=numpy_helper.from_array(np.array(2, np.int64))),
             again],
            "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                     helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                     helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
            [helper.make_tensor_value_info("again", TensorProto.BOOL, []),
             helper.make_tensor_value_info("y_out", TensorProto.FLOAT, [3])])
    y0 = np.array([1, -2, 0.5], np.float32)
    for name, stop_early, steps in (("loop_constant_trips", False, 4),
                                    ("loop_stops_early", True, 3)):
        y = y0
        for i in range(steps):
            y = 2 * y + i
        yield case(name, "Loop", {"start": y0}, y,
                   consts={"m": np.array(4, np.int64), "c": np.array(True)},
                   attrs={"body": loop_body(stop_early)}, order=["m", "c", "start"])
    # MaxUnpool with a batch known only at run time: each plane scatters by
    # indices that count over the whole tensor (MaxPool's).
    src = np.random.default_rng(5).standard_normal((3, 2, 4, 4)).astype(np.float32)
    windows = src.reshape(3, 2, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(3, 2, 2, 2, 4)
    pick = windows.argmax(-1)
    n, c, i, j = np.indices(pick.shape)
    flat = ((n * 2 + c) * 4 + (i * 2 + pick // 2)) * 4 + (j * 2 + pick % 2)
    pooled = windows.max(-1)
    unpooled = np.zeros(src.size, np.float32)
    unpooled[flat.ravel()] = pooled.ravel()
    yield case("maxunpool_runtime_batch", "MaxUnpool", {"x": pooled, "i": flat.astype(np.int64)},
               unpooled.reshape(src.shape), attrs={"kernel_shape": [2, 2], "strides": [2, 2]},
               dynamic=True)
    # Col2Im (PyTorch's fold): constant image and block shapes (a static
    # result), a batch known only at run time, one spatial dim on integers,
    # and shapes read at run time (the result's dims then too).
    rng = np.random.default_rng(11)
    fold = {"dilations": [1, 2], "pads": [1, 0, 0, 1], "strides": [2, 1]}
    image, block = np.array([5, 6], np.int64), np.array([2, 3], np.int64)
    for name, batch, dynamic in (("col2im_constant_shapes", 2, False),
                                 ("col2im_runtime_batch", 3, True)):
        x = rng.standard_normal((batch, 2 * 6, 9)).astype(np.float32)
        yield case(name, "Col2Im", {"x": x}, col2im_reference(x, image, block, **fold),
                   attrs=fold, consts={"image": image, "block": block}, opset=18,
                   dynamic=dynamic, tolerance=1e-6)
    x = rng.integers(-50, 50, (1, 2 * 3, 3)).astype(np.int64)
    line, window = np.array([7], np.int64), np.array([3], np.int64)
    yield case("col2im_1d_int64", "Col2Im", {"x": x},
               col2im_reference(x, line, window, strides=[2]),
               attrs={"strides": [2]}, consts={"image": line, "block": window}, opset=18)
    fold = {"dilations": [2, 1], "pads": [0, 1, 2, 0], "strides": [1, 2]}
    image, block = np.array([4, 5], np.int64), np.array([3, 2], np.int64)
    x = rng.standard_normal((2, 3 * 6, 6)).astype(np.float32)
    yield case("col2im_runtime_shapes", "Col2Im", {"x": x, "image": image, "block": block},
               col2im_reference(x, image, block, **fold), attrs=fold, opset=18,
               tolerance=1e-6)
    # A dynamic batch of 0 through a oneDNN matmul (constant weights).
    yield case("matmul_library_batch_zero", "MatMul", {"a": np.zeros((0, 4), np.float32)},
               np.zeros((0, 3), np.float32), consts={"w": np.ones((4, 3), np.float32)},
               dynamic=True)
    # GRU and LSTM (batch first) at a dynamic batch of 0: each step's oneDNN
    # matmul has a [1, 0, 3] input, an output with no elements whose first
    # dim is not 0 (oneDNN divided by 0 making its primitive: SIGFPE).
    rng = np.random.default_rng(3)
    for op, gates in (("GRU", 3), ("LSTM", 4)):
        yield case(f"{op.lower()}_batch_zero", op, {"x": np.zeros((0, 5, 3), np.float32)},
                   np.zeros((0, 5, 1, 4), np.float32),
                   consts={"w": rng.standard_normal((1, 4 * gates, 3)).astype(np.float32),
                           "r": rng.standard_normal((1, 4 * gates, 4)).astype(np.float32)},
                   attrs={"hidden_size": 4, "layout": 1}, opset=14, dynamic=True)
    # A row kernel (softmax(x + m)) at a dynamic batch of 0 and of 3, with
    # an input of size 1 along the rows (m): its loop ran max(batch, 1)
    # times, so a batch of 0 read a row of the empty x and gave one row.
    m = np.linspace(-1, 1, 10, dtype=np.float32).reshape(1, 10)
    add = [helper.make_node("Add", ["x", "m"], ["s"])]
    for batch in (0, 3):
        x = np.random.default_rng(7).standard_normal((batch, 10)).astype(np.float32)
        e = np.exp(x + m - (x + m).max(axis=1, keepdims=True))
        yield case(f"softmax_rows_batch_{batch}", "Softmax", {"x": x},
                   e / e.sum(axis=1, keepdims=True), attrs={"axis": 1}, consts={"m": m},
                   dynamic=True, order=["s"], before=add, tolerance=1e-7)
    w = np.arange(12, dtype=np.float32).reshape(4, 3)
    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    yield case("matmul_library_batch_two", "MatMul", {"a": a}, a @ w, consts={"w": w},
               dynamic=True)
    # SiLU (x * sigmoid(x)) after a convolution's and a linear layer's bias:
    # one oneDNN call each, the SiLU as its swish post-op (lit
    # tools/silu-epilogue.test checks that it is taken).
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 3, 4, 4)).astype(np.float32) * 3
    wc = rng.standard_normal((5, 3, 1, 1)).astype(np.float32)
    bc = np.linspace(-2, 2, 5, dtype=np.float32)
    pre = np.einsum("oc,nchw->nohw", wc[:, :, 0, 0], x) + bc.reshape(1, 5, 1, 1)
    yield case("conv_bias_silu", "Mul", {"x": x}, pre / (1 + np.exp(-pre)),
               consts={"w": wc, "b": bc}, order=["c", "s"], tolerance=1e-5,
               before=[helper.make_node("Conv", ["x", "w", "b"], ["c"]),
                       helper.make_node("Sigmoid", ["c"], ["s"])])
    m = rng.standard_normal((3, 6)).astype(np.float32) * 3
    wm = rng.standard_normal((6, 4)).astype(np.float32)
    bm = np.linspace(-1, 1, 4, dtype=np.float32)
    pre = m @ wm + bm
    yield case("linear_bias_silu", "Mul", {"m": m}, pre / (1 + np.exp(-pre)),
               consts={"w": wm, "b": bm}, order=["s", "l"], tolerance=1e-5,
               before=[helper.make_node("MatMul", ["m", "w"], ["p"]),
                       helper.make_node("Add", ["p", "b"], ["l"]),
                       helper.make_node("Sigmoid", ["l"], ["s"])])
    # HardSwish and HardSigmoid (the default alpha 0.2 and another) after a
    # convolution's bias and a linear layer's bias: one oneDNN call each,
    # as its hardswish post-op, or linear then clip (lit
    # tools/hard-activations.test checks that they are taken). Inputs
    # scaled so both clips are reached.
    def hard_sigmoid(v, alpha, beta):
        return np.clip(alpha * v + beta, 0, 1)
    x = rng.standard_normal((2, 3, 4, 4)).astype(np.float32) * 4
    wc = rng.standard_normal((5, 3, 1, 1)).astype(np.float32)
    bc = np.linspace(-2, 2, 5, dtype=np.float32)
    pre = np.einsum("oc,nchw->nohw", wc[:, :, 0, 0], x) + bc.reshape(1, 5, 1, 1)
    conv = [helper.make_node("Conv", ["x", "w", "b"], ["c"])]
    yield case("conv_bias_hardswish", "HardSwish", {"x": x},
               pre * hard_sigmoid(pre, 1 / 6, 0.5), consts={"w": wc, "b": bc},
               order=["c"], tolerance=1e-5, before=conv)
    for alpha, beta in ((0.2, 0.5), (0.3, 0.25)):
        yield case(f"conv_bias_hardsigmoid_{alpha}_{beta}", "HardSigmoid", {"x": x},
                   hard_sigmoid(pre, alpha, beta), consts={"w": wc, "b": bc}, order=["c"],
                   attrs={"alpha": alpha, "beta": beta}, tolerance=1e-5, before=conv)
    m = rng.standard_normal((3, 6)).astype(np.float32) * 4
    pre = m @ wm + bm
    yield case("linear_bias_hardswish", "HardSwish", {"m": m},
               pre * hard_sigmoid(pre, 1 / 6, 0.5), consts={"w": wm, "b": bm}, order=["l"],
               tolerance=1e-5, before=[helper.make_node("MatMul", ["m", "w"], ["p"]),
                                       helper.make_node("Add", ["p", "b"], ["l"])])
    # A squeeze-excitation: a convolution's output c scaled per sample and
    # channel by sigmoid(conv(mean(c))), the scale either operand of the
    # Mul, at a static batch and a dynamic one: a oneDNN scale call on the
    # convolution's channels-last output (lit tools/channel-scale.test
    # checks that it is taken).
    x = rng.standard_normal((2, 6, 5, 4)).astype(np.float32)
    wc = rng.standard_normal((8, 6, 1, 1)).astype(np.float32)
    bc = np.linspace(-1, 1, 8, dtype=np.float32)
    ws = rng.standard_normal((8, 8, 1, 1)).astype(np.float32)
    squeeze = [helper.make_node("Conv", ["x", "w", "b"], ["c"]),
               helper.make_node("GlobalAveragePool", ["c"], ["p"]),
               helper.make_node("Conv", ["p", "ws"], ["f"]),
               helper.make_node("Sigmoid", ["f"], ["s"])]
    for name, xs, order, dynamic in [("squeeze_excitation", x, ["s", "c"], False),
                                     ("squeeze_excitation_dynamic",
                                      np.concatenate([x, x[:1] * 2]), ["c", "s"], True)]:
        c = np.einsum("oc,nchw->nohw", wc[:, :, 0, 0], xs) + bc.reshape(1, 8, 1, 1)
        f = np.einsum("oc,nchw->nohw", ws[:, :, 0, 0], c.mean(axis=(2, 3), keepdims=True))
        yield case(name, "Mul", {"x": xs}, c / (1 + np.exp(-f)),
                   consts={"w": wc, "b": bc, "ws": ws}, order=order, tolerance=1e-5,
                   dynamic=dynamic, before=squeeze)


def deform_conv_cases():
    """DeformConv against torchvision's deform_conv2d (the same offset and
    mask layouts): groups, offset groups, strides, dilations, padding, a
    mask and a bias, offsets that move taps outside the image."""
    try:
        import torch
        from torchvision.ops import deform_conv2d
    except ImportError as e:
        print(f"SKIP: DeformConv cases: torchvision is not importable ({e})")
        return
    rng = np.random.default_rng(3)
    for name, n, c, o, hw, k, group, og, stride, pad, dil, masked in [
            ("deform_conv_groups", 2, 4, 6, (7, 6), (3, 3), 2, 2, (1, 1), (1, 1), (1, 1), True),
            ("deform_conv_strided", 1, 3, 2, (9, 8), (2, 3), 1, 3, (2, 1), (0, 2), (2, 1), False),
            ("deform_conv_offset_groups", 1, 4, 4, (5, 5), (3, 3), 4, 2, (1, 2), (2, 1), (1, 1),
             True)]:
        x = rng.standard_normal((n, c, *hw)).astype(np.float32)
        w = rng.standard_normal((o, c // group, *k)).astype(np.float32)
        b = rng.standard_normal(o).astype(np.float32)
        ho = (hw[0] + 2 * pad[0] - dil[0] * (k[0] - 1) - 1) // stride[0] + 1
        wo = (hw[1] + 2 * pad[1] - dil[1] * (k[1] - 1) - 1) // stride[1] + 1
        offset = (rng.standard_normal((n, og * k[0] * k[1] * 2, ho, wo)) * 2).astype(np.float32)
        mask = rng.random((n, og * k[0] * k[1], ho, wo)).astype(np.float32)
        want = deform_conv2d(torch.from_numpy(x), torch.from_numpy(offset), torch.from_numpy(w),
                             torch.from_numpy(b), stride=stride, padding=pad, dilation=dil,
                             mask=torch.from_numpy(mask) if masked else None).numpy()
        inputs = {"x": x, "w": w, "offset": offset, "b": b}
        if masked:
            inputs["mask"] = mask
        yield case(name, "DeformConv", inputs, want, opset=19, tolerance=1e-4,
                   attrs={"group": group, "offset_group": og, "strides": list(stride),
                          "pads": [pad[0], pad[1], pad[0], pad[1]],
                          "dilations": list(dil), "kernel_shape": list(k)})


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    kiln, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    passed = failed = 0
    for c in cases():
        why = run_case(kiln, work, c)
        if why:
            failed += 1
            print(f"FAIL: {c['name']}: {why}")
        else:
            passed += 1
            print(f"PASS: {c['name']}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
