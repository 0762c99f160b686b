#!/usr/bin/env python3
"""Run-time shape operands (docs/Contracts.md, "Shapes read at run time").

Each model takes its shape-defining operand (Reshape's shape, Slice's
starts, Tile's repeats, Range's limits, ...) as a graph input. It is
compiled once, as it is (nothing frozen), and run with several values of
that operand: every run's outputs, dims included, must equal NumPy's.
An invalid run-time shape must fail the run with KILN_ERROR_SHAPE and leave
the session usable, never crash.

usage: runtime_shapes_test.py KILN WORK_DIR
Ends with the line `N passed, N failed`.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

KILN, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
TYPES = {np.dtype("float32"): TensorProto.FLOAT, np.dtype("int64"): TensorProto.INT64,
         np.dtype("int32"): TensorProto.INT32, np.dtype("bool"): TensorProto.BOOL}
results = {"passed": 0, "failed": 0}


def fail(name, why):
    results["failed"] += 1
    print(f"FAIL {name}: {why}")


def model(name, op, inputs, outputs, attrs=None, opset=18):
    """A one-node model whose graph inputs are `inputs` [(name, array)]
    (declared with the first run's dtype and rank; every dim dynamic but
    the shape operands' lengths, which ONNX fixes) and outputs [(name,
    dtype, rank)]."""
    declared = []
    for n, a in inputs:
        if not n:  # an optional input left out ("" in the node)
            continue
        dims = list(a.shape)
        declared.append(helper.make_tensor_value_info(n, TYPES[a.dtype], dims))
    outs = [helper.make_tensor_value_info(n, TYPES[np.dtype(t)], [None] * r)
            for n, t, r in outputs]
    node = helper.make_node(op, [n for n, _ in inputs], [n for n, _, _ in outputs],
                            **(attrs or {}))
    graph = helper.make_graph([node], name, declared, outs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    path = os.path.join(WORK, name + ".onnx")
    onnx.save(m, path)
    return path


def compile_model(name, path):
    artifact = os.path.join(WORK, name + ".so")
    p = subprocess.run([KILN, "compile", path, "-o", artifact], capture_output=True, text=True)
    if p.returncode != 0:
        fail(name, "compile: " + (p.stdout + p.stderr).strip().splitlines()[-1])
        return None
    return artifact


def run(name, artifact, feeds, tag):
    """Runs once; returns ({output: array}, None) or (None, error text)."""
    folder = os.path.join(WORK, f"{name}-{tag}")
    os.makedirs(folder, exist_ok=True)
    args = [KILN, "run", artifact, "--output-dir", folder]
    for n, a in feeds:
        if not n:
            continue
        f = os.path.join(folder, f"in-{n}.npy")
        np.save(f, a)
        args += ["--input", f"{n}={f}"]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        # (A process killed by a signal prints nothing: the code says so.)
        return None, f"{(p.stdout + p.stderr).strip()} (exit {p.returncode})"
    return {f[:-4]: np.load(os.path.join(folder, f)) for f in os.listdir(folder)
            if f.endswith(".npy") and not f.startswith("in-")}, None


def check(name, op, runs, reference, outputs=None, attrs=None, opset=18, errors=()):
    """Compiles `op` once and runs it on every feed list of `runs`; the
    outputs must equal reference(*arrays). Each feed list of `errors` must
    fail with KILN_ERROR_SHAPE."""
    outputs = outputs or [("y", "float32", None)]
    first = runs[0]
    want0 = reference(*[a for _, a in first])
    want0 = want0 if isinstance(want0, tuple) else (want0,)
    outs = [(n, t, r if r is not None else want0[i].ndim) for i, (n, t, r) in enumerate(outputs)]
    artifact = compile_model(name, model(name, op, first, outs, attrs, opset))
    if not artifact:
        return
    for k, feeds in enumerate(runs):
        want = reference(*[a for _, a in feeds])
        want = want if isinstance(want, tuple) else (want,)
        got, error = run(name, artifact, feeds, f"run{k}")
        if error:
            fail(f"{name} run {k}", error.strip().splitlines()[-1])
            continue
        for (n, _, _), w in zip(outs, want):
            g = got.get(n)
            if g is None or g.shape != w.shape or not np.allclose(g, w, rtol=1e-5, atol=1e-6):
                fail(f"{name} run {k}", f"output {n}: got {None if g is None else g.shape} "
                     f"{g if g is not None and g.size < 30 else ''}, want {w.shape} "
                     f"{w if w.size < 30 else ''}")
                break
        else:
            results["passed"] += 1
    for k, feeds in enumerate(errors):
        _, error = run(name, artifact, feeds, f"error{k}")
        if error and "KILN_ERROR_SHAPE" in error and "Segmentation" not in error:
            results["passed"] += 1
        else:
            fail(f"{name} error {k}", f"expected KILN_ERROR_SHAPE, got {error!r}")


def i64(*v):
    return np.array(v, dtype=np.int64)


rng = np.random.default_rng(0)
x234 = rng.standard_normal((2, 3, 4)).astype(np.float32)
x65 = rng.standard_normal((6, 5)).astype(np.float32)
x23 = rng.standard_normal((2, 3)).astype(np.float32)

# Reshape: 0 copies, -1 infers; a count that changes is a run-time error.
check("reshape", "Reshape",
      [[("x", x234), ("s", i64(4, -1))], [("x", x234), ("s", i64(0, 12))],
       [("x", x234), ("s", i64(-1, 2))], [("x", x234), ("s", i64(1, 24))]],
      lambda x, s: x.reshape([x.shape[i] if v == 0 else v for i, v in enumerate(s)]),
      errors=[[("x", x234), ("s", i64(5, 5))], [("x", x234), ("s", i64(-1, -1))],
              [("x", x234), ("s", i64(-3, 8))]])
check("reshape_allowzero", "Reshape",
      [[("x", np.zeros((0, 4), np.float32)), ("s", i64(4, 0))],
       [("x", np.zeros((0, 4), np.float32)), ("s", i64(2, 0))]],
      lambda x, s: x.reshape(s), attrs={"allowzero": 1})
# Unsqueeze and Squeeze with run-time axes (their count is the input's length).
check("unsqueeze", "Unsqueeze",
      [[("x", x23), ("a", i64(0, 3))], [("x", x23), ("a", i64(1, 2))],
       [("x", x23), ("a", i64(-1, 0))]],
      lambda x, a: np.expand_dims(x, tuple(int(v) for v in a)))
x1314 = rng.standard_normal((1, 3, 1, 4)).astype(np.float32)
check("squeeze", "Squeeze",
      [[("x", x1314), ("a", i64(0))], [("x", x1314), ("a", i64(2))],
       [("x", x1314), ("a", i64(-4))]],
      lambda x, a: np.squeeze(x, tuple(int(v) for v in a)))


def np_slice(x, starts, ends, axes, steps):
    index = [slice(None)] * x.ndim
    for s, e, a, t in zip(starts, ends, axes, steps):
        index[a] = slice(s, e, t)
    return x[tuple(index)]


check("slice", "Slice",
      [[("x", x65), ("s", i64(1, 0)), ("e", i64(5, 3)), ("a", i64(0, 1)), ("t", i64(2, 1))],
       [("x", x65), ("s", i64(-1, 4)), ("e", i64(-7, 0)), ("a", i64(1, 0)), ("t", i64(-1, -2))],
       [("x", x65), ("s", i64(0, 10)), ("e", i64(100, 20)), ("a", i64(-1, 0)), ("t", i64(1, 1))]],
      np_slice, errors=[[("x", x65), ("s", i64(0, 0)), ("e", i64(3, 3)), ("a", i64(0, 1)),
                         ("t", i64(0, 1))]])
x31 = rng.standard_normal((3, 1)).astype(np.float32)
check("expand", "Expand",
      [[("x", x31), ("s", i64(2, 3, 4))], [("x", x31), ("s", i64(1, 1, 1))],
       [("x", x31), ("s", i64(2, 1, 6))]],
      lambda x, s: x * np.ones(s, np.float32))
check("tile", "Tile", [[("x", x23), ("r", i64(1, 2))], [("x", x23), ("r", i64(3, 1))]],
      lambda x, r: np.tile(x, r))
check("pad_constant", "Pad",
      [[("x", x23), ("p", i64(1, 0, 0, 2)), ("v", np.array(5.0, np.float32))],
       [("x", x23), ("p", i64(0, 1, 2, -1)), ("v", np.array(-1.0, np.float32))]],
      lambda x, p, v: np.pad(x, ((p[0], p[2]), (p[1], max(p[3], 0))), constant_values=v)
      [:, :x.shape[1] + p[1] + p[3]])
check("pad_reflect", "Pad",
      [[("x", x23), ("p", i64(1, 2, 0, 1))], [("x", x23), ("p", i64(0, 0, 1, 2))]],
      lambda x, p: np.pad(x, ((p[0], p[2]), (p[1], p[3])), mode="reflect"),
      attrs={"mode": "reflect"})
check("pad_edge", "Pad",
      [[("x", x23), ("p", i64(2, 0, 1, 3))]],
      lambda x, p: np.pad(x, ((p[0], p[2]), (p[1], p[3])), mode="edge"), attrs={"mode": "edge"})
check("range", "Range",
      [[("a", np.array(0.0, np.float32)), ("b", np.array(10.0, np.float32)),
        ("c", np.array(3.0, np.float32))],
       [("a", np.array(10.0, np.float32)), ("b", np.array(0.0, np.float32)),
        ("c", np.array(-2.5, np.float32))],
       [("a", np.array(1.0, np.float32)), ("b", np.array(0.0, np.float32)),
        ("c", np.array(1.0, np.float32))]],
      lambda a, b, c: np.arange(a, b, c, dtype=np.float32))
check("range_int", "Range",
      [[("a", i64(3)[0]), ("b", i64(20)[0]), ("c", i64(4)[0])],
       [("a", i64(-2)[0]), ("b", i64(-9)[0]), ("c", i64(-3)[0])]],
      lambda a, b, c: np.arange(a, b, c, dtype=np.int64), outputs=[("y", "int64", None)])
check("onehot", "OneHot",
      [[("i", i64(0, 2, -1)), ("d", i64(3)), ("v", np.array([0, 1], np.float32))],
       [("i", i64(0, 2, -1)), ("d", i64(5)), ("v", np.array([2, 7], np.float32))]],
      lambda i, d, v: np.where(np.arange(d[0])[None, :] == np.where(i < 0, i + d[0], i)[:, None],
                               v[1], v[0]).astype(np.float32))
check("constant_of_shape", "ConstantOfShape",
      [[("s", i64(2, 3))], [("s", i64(4, 1))], [("s", i64(0, 2))]],
      lambda s: np.full(s, 1.5, np.float32),
      attrs={"value": helper.make_tensor("value", TensorProto.FLOAT, [1], [1.5])},
      errors=[[("s", i64(-1, 2))]])
x38 = rng.standard_normal((3, 8)).astype(np.float32)


def topk(x, k):
    order = np.argsort(-x, axis=1, kind="stable")[:, :k[0]]
    return np.take_along_axis(x, order, 1), order


check("topk", "TopK", [[("x", x38), ("k", i64(1))], [("x", x38), ("k", i64(5))]], topk,
      outputs=[("v", "float32", 2), ("i", "int64", 2)])
check("split", "Split", [[("x", x65), ("s", i64(2, 4))], [("x", x65), ("s", i64(5, 1))]],
      lambda x, s: tuple(np.split(x, [s[0]], axis=0)),
      outputs=[("a", "float32", 2), ("b", "float32", 2)],
      errors=[[("x", x65), ("s", i64(2, 3))], [("x", x65), ("s", i64(7, -1))]])
check("trilu", "Trilu", [[("x", x65), ("k", i64(-1)[0])], [("x", x65), ("k", i64(2)[0])]],
      lambda x, k: np.triu(x, k))
check("cumsum", "CumSum",
      [[("x", x65), ("a", i64(0)[0])], [("x", x65), ("a", i64(1)[0])],
       [("x", x65), ("a", i64(-2)[0])]],
      lambda x, a: np.cumsum(x, axis=int(a)))
check("hann_window", "HannWindow", [[("n", i64(5)[0])], [("n", i64(8)[0])]],
      lambda n: (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)).astype(np.float32))



def rnn(x, w, r, b, lens, reverse=False):
    """ONNX RNN (tanh, one direction) with per-batch lengths: a batch entry's
    steps past its length leave its state and output zeros."""
    steps, batch, hidden = x.shape[0], x.shape[1], w.shape[1]
    y = np.zeros((steps, 1, batch, hidden), np.float32)
    yh = np.zeros((1, batch, hidden), np.float32)
    for n in range(batch):
        h = np.zeros(hidden, np.float32)
        order = range(lens[n] - 1, -1, -1) if reverse else range(lens[n])
        for t in order:
            h = np.tanh(x[t, n] @ w[0].T + h @ r[0].T + b[0, :hidden] + b[0, hidden:])
            y[t, 0, n] = h
        yh[0, n] = h
    return y, yh


x425 = rng.standard_normal((4, 2, 5)).astype(np.float32)
w135 = (0.5 * rng.standard_normal((1, 3, 5))).astype(np.float32)
r133 = (0.5 * rng.standard_normal((1, 3, 3))).astype(np.float32)
b16 = (0.1 * rng.standard_normal((1, 6))).astype(np.float32)
for direction in ("forward", "reverse"):
    check(f"rnn_sequence_lens_{direction}", "RNN",
          [[("x", x425), ("w", w135), ("r", r133), ("b", b16), ("l", np.array([4, 2], np.int32))],
           [("x", x425), ("w", w135), ("r", r133), ("b", b16), ("l", np.array([1, 3], np.int32))]],
          lambda x, w, r, b, l, rev=direction == "reverse": rnn(x, w, r, b, l, rev),
          outputs=[("y", "float32", 4), ("yh", "float32", 3)],
          attrs={"hidden_size": 3, "direction": direction})
# MaxUnpool with its output shape read at run time: zeros beyond the
# unpooled [1, 1, 4, 4]; a smaller shape is a run-time error.
x1122 = rng.standard_normal((1, 1, 2, 2)).astype(np.float32)
idx1122 = i64(5, 7, 13, 15).reshape(1, 1, 2, 2)


def unpool(x, idx, shape):
    out = np.zeros(int(np.prod(shape)), np.float32)
    flat = np.zeros(16, np.float32)
    flat[idx.ravel()] = x.ravel()
    full = np.zeros(tuple(shape), np.float32)
    full[:, :, :4, :4] = flat.reshape(1, 1, 4, 4)
    del out
    return full


check("maxunpool_output_shape", "MaxUnpool",
      [[("x", x1122), ("i", idx1122), ("s", i64(1, 1, 5, 6))],
       [("x", x1122), ("i", idx1122), ("s", i64(1, 1, 4, 4))]],
      unpool, attrs={"kernel_shape": [2, 2], "strides": [2, 2]},
      errors=[[("x", x1122), ("i", idx1122), ("s", i64(1, 1, 3, 4))]])

# Unique over a run-time length: sorted values and counts as NumPy's; more
# than 4,096 entries (its comparisons are quadratic) stop the run.
def unique_model(name, dims, **attrs):
    """Unique (sorted) over x of `dims` (names: read at run time), its four
    outputs y, i, inv and c."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * len(dims))] + [
        helper.make_tensor_value_info(n, TensorProto.INT64, [None]) for n in ("i", "inv", "c")]
    node = helper.make_node("Unique", ["x"], ["y", "i", "inv", "c"], sorted=1, **attrs)
    m = helper.make_model(helper.make_graph([node], name, [x], outs),
                          opset_imports=[helper.make_opsetid("", 17)])
    path = os.path.join(WORK, name + ".onnx")
    onnx.save(m, path)
    return path


unique_artifact = compile_model("unique_runtime", unique_model("unique_runtime", ["n"]))
if unique_artifact:
    for k, x in enumerate([np.array([2, 1, 1, 3, 4, 3], np.float32),
                           rng.integers(0, 50, 300).astype(np.float32)]):
        got, error = run("unique_runtime", unique_artifact, [("x", x)], f"run{k}")
        y, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                              return_counts=True)
        if error:
            fail(f"unique_runtime run {k}", error.strip().splitlines()[-1])
        elif not all(np.array_equal(got[n], w) for n, w in
                     (("y", y), ("i", first), ("inv", inverse), ("c", counts))):
            fail(f"unique_runtime run {k}", f"got {got['y'][:8]}, want {y[:8]}")
        else:
            results["passed"] += 1
    _, error = run("unique_runtime", unique_artifact,
                   [("x", np.zeros(5000, np.float32))], "too-many")
    if error and "KILN_ERROR_SHAPE" in error:
        results["passed"] += 1
    else:
        fail("unique_runtime too many", f"expected KILN_ERROR_SHAPE, got {error!r}")


# Unique along an axis whose entries have dims read at run time: columns
# of a [rows, columns] matrix with both dims dynamic, sorted as NumPy's.
unique_axis_artifact = compile_model("unique_axis_runtime",
                                     unique_model("unique_axis_runtime", ["r", "c"], axis=1))
if unique_axis_artifact:
    for k, x in enumerate([np.array([[1, 0, 1, 2], [3, 5, 3, 3]], np.float32),
                           rng.integers(0, 3, (3, 40)).astype(np.float32)]):
        got, error = run("unique_axis_runtime", unique_axis_artifact, [("x", x)], f"run{k}")
        y, first, inverse, counts = np.unique(x, axis=1, return_index=True,
                                              return_inverse=True, return_counts=True)
        if error:
            fail(f"unique_axis_runtime run {k}", error.strip().splitlines()[-1])
        elif not all(np.array_equal(got[n], w) for n, w in
                     (("y", y), ("i", first), ("inv", inverse.ravel()), ("c", counts))):
            fail(f"unique_axis_runtime run {k}", f"got {got['y']}, want {y}")
        else:
            results["passed"] += 1

# STFT with its frame step and length read at run time, against NumPy's
# FFT of the frames; MelWeightMatrix with its dims read at run time,
# against ONNX's definition. A frame longer than the signal or a zero step
# stops the run.
def stft(x, step, length, window=None):
    n = int(length)
    frames = 1 + (x.shape[1] - n) // int(step)
    signal = x[..., 0].astype(np.float64)
    cut = np.stack([signal[:, f * step:f * step + n] for f in range(frames)], 1)
    spectrum = np.fft.fft(cut * (1 if window is None else window), axis=-1)[..., :n // 2 + 1]
    return np.stack([spectrum.real, spectrum.imag], -1).astype(np.float32)


def mel_weights(bins, dft_length, rate, lower, upper):
    bins, dft_length, rate = int(bins), int(dft_length), int(rate)
    low, high = (2595 * np.log10(1 + float(f) / 700) for f in (lower, upper))
    mel = np.arange(bins + 2) * (high - low) / (bins + 2) + low
    edges = np.floor((dft_length + 1) * (700 * (10 ** (mel / 2595) - 1)) / rate).astype(int)
    out = np.zeros((dft_length // 2 + 1, bins))
    for i in range(bins):
        lo, centre, hi = edges[i:i + 3]
        if centre == lo:
            out[centre, i] = 1
        for j in range(lo, centre + 1 if centre > lo else lo):
            out[j, i] = (j - lo) / (centre - lo)
        for j in range(centre, hi):
            out[j, i] = (hi - j) / (hi - centre)
    return out.astype(np.float32)


signal = rng.standard_normal((2, 100, 1)).astype(np.float32)
check("stft_runtime", "STFT",
      [[("x", signal), ("step", np.array(step, np.int64)), ("", None),
        ("len", np.array(n, np.int64))] for step, n in ((8, 16), (5, 33), (1, 100))],
      lambda x, step, _, length: stft(x, step, length),
      errors=[[("x", signal), ("step", np.array(step, np.int64)), ("", None),
               ("len", np.array(n, np.int64))] for step, n in ((4, 101), (0, 16))])
window = np.hanning(24).astype(np.float32)
check("stft_window", "STFT",
      [[("x", signal), ("step", np.array(step, np.int64)), ("w", window)] for step in (6, 25)],
      lambda x, step, w: stft(x, step, 24, w))
check("mel_weight_matrix", "MelWeightMatrix",
      [[("bins", np.array(b, np.int32)), ("n", np.array(n, np.int32)),
        ("rate", np.array(r, np.int32)), ("lo", np.array(lo, np.float32)),
        ("hi", np.array(hi, np.float32))]
       for b, n, r, lo, hi in ((8, 16, 8192, 0, 4096), (10, 64, 16000, 20, 7600),
                               (4, 256, 22050, 100, 4000))],
      mel_weights, opset=17)

# Sequences (ops/Sequence.cpp): a SplitToSequence with sizes read at run
# time, squared by a SequenceMap, its first tensor moved last, concatenated;
# and a SequenceAt whose position is read at run time. Sizes that do not
# cover the dim, and positions out of range, stop the run.
def sequence_model(name, nodes, inputs, output, opset=17):
    declared = [helper.make_tensor_value_info(n, t, dims) for n, t, dims in inputs]
    out = helper.make_tensor_value_info(output, TensorProto.FLOAT, None)
    m = helper.make_model(helper.make_graph(nodes, name, declared, [out]),
                          opset_imports=[helper.make_opsetid("", opset)])
    path = os.path.join(WORK, name + ".onnx")
    onnx.save(m, path)
    return path


def run_sequence(name, path, runs, reference, errors):
    artifact = compile_model(name, path)
    if not artifact:
        return
    for k, feeds in enumerate(runs):
        got, error = run(name, artifact, feeds, f"run{k}")
        want = reference(*[a for _, a in feeds])
        if error:
            fail(f"{name} run {k}", error.strip().splitlines()[-1])
        elif got["y"].shape != want.shape or not np.array_equal(got["y"], want):
            fail(f"{name} run {k}", f"got {got['y']}, want {want}")
        else:
            results["passed"] += 1
    for k, feeds in enumerate(errors):
        _, error = run(name, artifact, feeds, f"error{k}")
        if error and "KILN_ERROR_SHAPE" in error:
            results["passed"] += 1
        else:
            fail(f"{name} error {k}", f"expected KILN_ERROR_SHAPE, got {error!r}")


square = helper.make_graph([helper.make_node("Mul", ["e", "e"], ["sq"])], "square",
                           [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)],
                           [helper.make_tensor_value_info("sq", TensorProto.FLOAT, None)])
x9 = np.arange(9, dtype=np.float32) - 4
run_sequence(
    "sequence_split_map",
    sequence_model("sequence_split_map", [
        helper.make_node("SplitToSequence", ["x", "s"], ["seq"]),
        helper.make_node("SequenceMap", ["seq"], ["squared"], body=square),
        helper.make_node("SequenceAt", ["squared", "zero"], ["first"]),
        helper.make_node("Constant", [], ["zero"], value_int=0),
        helper.make_node("SequenceErase", ["squared", "zero"], ["rest"]),
        helper.make_node("SequenceInsert", ["rest", "first"], ["moved"]),
        helper.make_node("ConcatFromSequence", ["moved"], ["y"], axis=0)],
        [("x", TensorProto.FLOAT, ["n"]), ("s", TensorProto.INT64, [3])], "y"),
    [[("x", x9), ("s", i64(2, 3, 4))], [("x", x9), ("s", i64(0, 9, 0))],
     [("x", x9[:4]), ("s", i64(1, 1, 2))]],
    lambda x, s: np.concatenate([p * p for p in np.split(x, np.cumsum(s)[:-1])][1:] +
                                [x[:s[0]] * x[:s[0]]]),
    errors=[[("x", x9), ("s", i64(2, 3, 3))], [("x", x9), ("s", i64(-1, 5, 5))]])
a23 = np.arange(6, dtype=np.float32).reshape(2, 3)
run_sequence(
    "sequence_at_runtime",
    sequence_model("sequence_at_runtime", [
        helper.make_node("Neg", ["a"], ["na"]),
        helper.make_node("SequenceConstruct", ["a", "b", "na"], ["seq"]),
        helper.make_node("SequenceAt", ["seq", "p"], ["y"])],
        [("a", TensorProto.FLOAT, [2, 3]), ("b", TensorProto.FLOAT, [2, 3]),
         ("p", TensorProto.INT64, [])], "y"),
    [[("a", a23), ("b", a23 + 10), ("p", np.array(p, np.int64))] for p in (0, 1, 2, -1, -3)],
    lambda a, b, p: [a, b, -a][int(p)],
    errors=[[("a", a23), ("b", a23), ("p", np.array(p, np.int64))] for p in (3, -4)])

# Reads from an input with no elements (a batch of 0) into a result with
# some: an edge, reflect or wrap pad of the empty dim. Nothing can be read (the edge pad read past the buffer,
# SIGSEGV; the wrap pad divided by 0, SIGFPE): the run stops. An empty
# result reads nothing and runs. Known when compiling, such a shape is
# refused then.
x43 = rng.standard_normal((4, 3)).astype(np.float32)
empty = np.zeros((0, 3), np.float32)
for mode in ("edge", "reflect", "wrap"):
    pads = numpy_helper.from_array(i64(1, 0, 2, 0), "p")
    path = sequence_model(f"pad_{mode}_batch", [helper.make_node("Pad", ["x", "p"], ["y"], mode=mode),
                                               helper.make_node("Constant", [], ["p"], value=pads)],
                          [("x", TensorProto.FLOAT, ["n", 3])], "y", opset=19)
    run_sequence(f"pad_{mode}_batch", path, [[("x", x43)]],
                 lambda x, mode=mode: np.pad(x, ((1, 2), (0, 0)), mode=mode),
                 errors=[[("x", empty)]])
    static = sequence_model(f"pad_{mode}_empty", [helper.make_node("Pad", ["x", "p"], ["y"],
                                                                  mode=mode),
                                                 helper.make_node("Constant", [], ["p"],
                                                                  value=pads)],
                            [("x", TensorProto.FLOAT, [0, 3])], "y", opset=19)
    p = subprocess.run([KILN, "compile", static, "-o", os.path.join(WORK, "refused.so")],
                       capture_output=True, text=True)
    if p.returncode == 1 and "reads its result from a tensor with no elements" in p.stderr:
        results["passed"] += 1
    else:
        fail(f"pad_{mode}_empty", f"expected a refusal, got exit {p.returncode}: {p.stderr[-300:]}")
# Negative pads crop a dynamic batch: a batch smaller than the crop stops
# the run (it made a negative size: the allocator aborted, or a [-1, 3]
# result came back).
for mode in ("constant", "edge"):
    crop = numpy_helper.from_array(i64(-2, 0, 0, 0), "p")
    path = sequence_model(f"pad_{mode}_crop_batch",
                          [helper.make_node("Pad", ["x", "p"], ["y"], mode=mode),
                           helper.make_node("Constant", [], ["p"], value=crop)],
                          [("x", TensorProto.FLOAT, ["n", 3])], "y", opset=19)
    run_sequence(f"pad_{mode}_crop_batch", path, [[("x", x43)], [("x", x43[:2])]],
                 lambda x: x[2:], errors=[[("x", x43[:1])]])
gather = sequence_model("gather_batch", [helper.make_node("Gather", ["x", "i"], ["y"], axis=0)],
                        [("x", TensorProto.FLOAT, ["n", 3]), ("i", TensorProto.INT64, ["k"])], "y")
# A gather from an axis with no elements reads nothing and gives zeros (it
# read past the data before).
run_sequence("gather_batch", gather,
             [[("x", x43), ("i", i64(3, 0, -1))], [("x", empty), ("i", np.zeros(0, np.int64))],
              [("x", empty), ("i", i64(0, 2, -1))]],
             lambda x, i: x[i] if len(x) else np.zeros((len(i), 3), np.float32), errors=[])
gather = sequence_model("gather_static_empty",
                        [helper.make_node("Gather", ["x", "i"], ["y"], axis=0)],
                        [("x", TensorProto.FLOAT, [0, 3]), ("i", TensorProto.INT64, [2])], "y")
run_sequence("gather_static_empty", gather, [[("x", empty), ("i", i64(0, 1))]],
             lambda x, i: np.zeros((2, 3), np.float32), errors=[])


# ArgMax / ArgMin over an axis with no elements have no position to give
# (ONNX Runtime stops; Kiln gave 0): the run stops, or, known when
# compiling, the model is refused.
for op in ("ArgMax", "ArgMin"):
    for dims, name in ((["n", "k"], f"{op.lower()}_runtime_empty"),
                       ([2, 0], f"{op.lower()}_empty")):
        graph = helper.make_graph(
            [helper.make_node(op, ["x"], ["y"], axis=1, keepdims=1)], name,
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
            [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
        path = os.path.join(WORK, name + ".onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
        if dims[1] == 0:
            p = subprocess.run([KILN, "compile", path, "-o", os.path.join(WORK, "refused.so")],
                               capture_output=True, text=True)
            if p.returncode == 1 and "axis 1 has no elements" in p.stderr:
                results["passed"] += 1
            else:
                fail(name, f"expected a refusal, got exit {p.returncode}: {p.stderr[-300:]}")
            continue
        artifact = compile_model(name, path)
        if not artifact:
            continue
        x23 = np.array([[1, 5, 2], [7, 0, 7]], np.float32)
        got, error = run(name, artifact, [("x", x23)], "run0")
        want = (np.argmax if op == "ArgMax" else np.argmin)(x23, axis=1).reshape(2, 1)
        if error or not np.array_equal(got["y"], want):
            fail(f"{name} run 0", error or f"got {got['y'].tolist()}, want {want.tolist()}")
        else:
            results["passed"] += 1
        _, error = run(name, artifact, [("x", np.zeros((2, 0), np.float32))], "error0")
        if error and "KILN_ERROR_SHAPE" in error:
            results["passed"] += 1
        else:
            fail(f"{name} error 0", f"expected KILN_ERROR_SHAPE, got {error!r}")


# Convolutions and pools over spatial dims known only at run time: one
# artifact run on several image sizes (they were refused; f32 2-D ones run
# in oneDNN, a primitive per input shape, others in Kiln's own loops).
def windows(x, kernel, strides, pads, dilations, fill):
    """x padded by `pads` with `fill`, as [N, C, out..., k...] windows."""
    spatial = len(kernel)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[i + spatial]) for i in range(spatial)],
                constant_values=fill)
    outs = [(xp.shape[2 + i] - ((kernel[i] - 1) * dilations[i] + 1)) // strides[i] + 1
            for i in range(spatial)]
    taps = np.zeros(x.shape[:2] + tuple(outs) + tuple(kernel), x.dtype)
    for k in np.ndindex(*kernel):
        index = tuple(slice(k[i] * dilations[i], k[i] * dilations[i] +
                            (outs[i] - 1) * strides[i] + 1, strides[i]) for i in range(spatial))
        taps[(slice(None), slice(None)) + tuple(slice(None) for _ in outs) + k] = \
            xp[(slice(None), slice(None)) + index]
    return taps


def conv_reference(x, w, b, strides, pads, dilations, group):
    spatial = w.ndim - 2
    taps = windows(x, w.shape[2:], strides, pads, dilations, 0)
    per = x.shape[1] // group
    outs = []
    for g in range(group):
        wg = w[g * (w.shape[0] // group):(g + 1) * (w.shape[0] // group)]
        tg = taps[:, g * per:(g + 1) * per]
        letters = "hwd"[:spatial]
        outs.append(np.einsum(f"nc{letters}{letters.upper()},oc{letters.upper()}->no{letters}",
                              tg, wg))
    return (np.concatenate(outs, axis=1) + b.reshape([1, -1] + [1] * spatial)).astype(np.float32)


def ceil_pads(x, kernel, strides, pads):
    """`pads` with ceil mode's extra high padding: ONNX's count
    ceil((size + pads - kernel) / stride) + 1, less the last window when it
    would start past the input and the low padding."""
    spatial = len(kernel)
    extra = []
    for i in range(spatial):
        size, low = x.shape[2 + i], pads[i]
        have = size + low + pads[spatial + i]
        count = -(-(have - kernel[i]) // strides[i]) + 1
        if (count - 1) * strides[i] >= size + low:
            count -= 1
        extra.append(max(0, (count - 1) * strides[i] + kernel[i] - have))
    return list(pads[:spatial]) + [pads[spatial + i] + extra[i] for i in range(spatial)], extra


def pool_reference(x, kernel, strides, pads, dilations, mode, include_pad=0, ceil_mode=0):
    if ceil_mode:
        spatial = len(kernel)
        padded, extra = ceil_pads(x, kernel, strides, pads)
        if mode == "max":
            return pool_reference(x, kernel, strides, padded, dilations, mode)
        # The extra padding is never counted.
        sums = windows(x, kernel, strides, padded, dilations, 0).sum(
            axis=tuple(range(-spatial, 0)))
        mask = np.pad(np.ones((1, 1) + x.shape[2:], np.float32),
                      [(0, 0), (0, 0)] + [(pads[i], pads[i + spatial]) for i in range(spatial)],
                      constant_values=float(include_pad))
        mask = np.pad(mask, [(0, 0), (0, 0)] + [(0, e) for e in extra])
        counts = windows(mask, kernel, strides, [0] * 2 * spatial, dilations, 0).sum(
            axis=tuple(range(-spatial, 0)))
        return (sums / counts).astype(np.float32)
    if mode == "max":
        return windows(x, kernel, strides, pads, dilations, -np.inf).max(
            axis=tuple(range(-len(kernel), 0))).astype(np.float32)
    sums = windows(x, kernel, strides, pads, dilations, 0).sum(axis=tuple(range(-len(kernel), 0)))
    ones = np.ones((1, 1) + x.shape[2:], np.float32)
    spatial = len(kernel)
    mask = np.pad(ones, [(0, 0), (0, 0)] + [(pads[i], pads[i + spatial]) for i in range(spatial)],
                  constant_values=float(include_pad))
    counts = windows(mask, kernel, strides, [0] * 2 * spatial, dilations, 0).sum(
        axis=tuple(range(-len(kernel), 0)))
    return (sums / counts).astype(np.float32)


w2 = rng.standard_normal((6, 2, 3, 3)).astype(np.float32)
b2 = rng.standard_normal(6).astype(np.float32)
w1 = rng.standard_normal((4, 3, 2)).astype(np.float32)
w3 = rng.standard_normal((5, 4, 2, 3)).astype(np.float32)
spatial_cases = [
    ("conv_dynamic_hw", "Conv", ["N", 4, "H", "W"], (w2, b2),
     dict(strides=[2, 1], pads=[1, 0, 2, 1], dilations=[1, 2], group=2),
     lambda x, a: conv_reference(x, w2, b2, **a), [(2, 4, 12, 10), (1, 4, 7, 9), (3, 4, 5, 5)]),
    ("conv_dynamic_length", "Conv", [1, 3, "L"], (w1,),
     dict(strides=[2], pads=[0, 1], dilations=[1], group=1),
     lambda x, a: conv_reference(x, w1, np.zeros(4, np.float32), **a), [(1, 3, 9), (1, 3, 2)]),
    # auto_pad SAME at stride 1: the pads are the kernel's span less one,
    # whatever the size (they were refused over dims known at run time).
    ("conv_dynamic_same_upper", "Conv", ["N", 4, "H", "W"], (w3,),
     dict(kernel_shape=[2, 3], auto_pad="SAME_UPPER"),
     lambda x, a: conv_reference(x, w3, np.zeros(5, np.float32), [1, 1], [0, 1, 1, 1],
                                 [1, 1], 1), [(1, 4, 6, 7), (2, 4, 3, 11)]),
    ("max_pool_dynamic_same_lower", "MaxPool", ["N", 3, "H", "W"], (),
     dict(kernel_shape=[2, 2], auto_pad="SAME_LOWER"),
     lambda x, a: pool_reference(x, [2, 2], [1, 1], [1, 1, 0, 0], [1, 1], "max"),
     [(1, 3, 5, 4), (2, 3, 9, 2)]),
    ("max_pool_dynamic_hw", "MaxPool", ["N", 3, "H", "W"], (),
     dict(kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 1], dilations=[1, 1]),
     lambda x, a: pool_reference(x, a["kernel_shape"], a["strides"], a["pads"],
                                 a["dilations"], "max"), [(2, 3, 8, 8), (1, 3, 5, 11)]),
    ("avg_pool_dynamic_hw", "AveragePool", ["N", 3, "H", "W"], (),
     dict(kernel_shape=[3, 3], strides=[2, 1], pads=[1, 1, 1, 1]),
     lambda x, a: pool_reference(x, a["kernel_shape"], a["strides"], a["pads"], [1, 1],
                                 "avg"), [(2, 3, 8, 8), (1, 3, 5, 11)]),
    ("avg_pool_dynamic_hw_include_pad", "AveragePool", ["N", 3, "H", "W"], (),
     dict(kernel_shape=[2, 3], strides=[1, 2], pads=[1, 0, 0, 1], count_include_pad=1),
     lambda x, a: pool_reference(x, a["kernel_shape"], a["strides"], a["pads"], [1, 1],
                                 "avg", 1), [(2, 3, 6, 7), (1, 3, 4, 12)]),
    # ceil_mode: the extra high padding is counted when the model runs (it
    # was refused); a last window that would start in the high padding is
    # dropped (3 wide, pads 1: 2 windows, not 3).
    ("max_pool_dynamic_ceil", "MaxPool", ["N", 3, "H", "W"], (),
     dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
     lambda x, a: pool_reference(x, [2, 2], [2, 2], [0, 0, 0, 0], [1, 1], "max", ceil_mode=1),
     [(1, 3, 5, 5), (2, 3, 6, 7), (1, 3, 1, 1)]),
    ("max_pool_dynamic_ceil_3d", "MaxPool", ["N", 2, "D", "H", "W"], (),
     dict(kernel_shape=[3, 2, 2], strides=[2, 2, 1], pads=[1, 0, 1, 1, 1, 0], ceil_mode=1),
     lambda x, a: pool_reference(x, a["kernel_shape"], a["strides"], a["pads"], [1, 1, 1],
                                 "max", ceil_mode=1), [(1, 2, 4, 5, 3), (2, 2, 7, 2, 4)]),
    ("avg_pool_dynamic_ceil", "AveragePool", ["N", 3, "H", "W"], (),
     dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1),
     lambda x, a: pool_reference(x, [3, 3], [2, 2], a["pads"], [1, 1], "avg", ceil_mode=1),
     [(1, 3, 6, 6), (2, 3, 7, 4)]),
    # One oneDNN runs (no padded position counted; the low padding 0 or
    # the padding at most the window less a stride): 2-D ceil-mode pools
    # over run-time dims are library calls since 2026-12-06.
    ("avg_pool_dynamic_ceil_library", "AveragePool", ["N", 3, "H", "W"], (),
     dict(kernel_shape=[3, 3], strides=[2, 2], pads=[0, 1, 1, 0], ceil_mode=1),
     lambda x, a: pool_reference(x, [3, 3], [2, 2], a["pads"], [1, 1], "avg", ceil_mode=1),
     [(1, 3, 6, 6), (2, 3, 7, 4), (1, 3, 1, 2)]),
    ("avg_pool_dynamic_ceil_include_pad", "AveragePool", ["N", 3, "H", "W"], (),
     dict(kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1,
          count_include_pad=1),
     lambda x, a: pool_reference(x, [2, 2], [2, 2], a["pads"], [1, 1], "avg", 1, ceil_mode=1),
     [(1, 3, 3, 5), (2, 3, 1, 4)]),
]
for name, op, dims, weights, attrs, reference, shapes in spatial_cases:
    names = ["x"] + [f"w{i}" for i in range(len(weights))]
    nodes = [helper.make_node("Constant", [], [n], value=numpy_helper.from_array(a, n))
             for n, a in zip(names[1:], weights)]
    nodes.append(helper.make_node(op, names, ["y"], **attrs))
    artifact = compile_model(name, sequence_model(name, nodes, [("x", TensorProto.FLOAT, dims)],
                                                  "y"))
    for k, shape in enumerate(shapes if artifact else []):
        x = rng.standard_normal(shape).astype(np.float32)
        got, error = run(name, artifact, [("x", x)], f"run{k}")
        want = reference(x, {a: v for a, v in attrs.items()
                             if a not in ("count_include_pad", "ceil_mode")})
        if error:
            fail(f"{name} run {k}", error.strip().splitlines()[-1])
        elif got["y"].shape != want.shape or not np.allclose(got["y"], want, rtol=1e-5,
                                                              atol=1e-5):
            fail(f"{name} run {k}", f"got {got['y'].shape}, want {want.shape}")
        else:
            results["passed"] += 1

print(f"{results['passed']} passed, {results['failed']} failed")
sys.exit(1 if results["failed"] else 0)
