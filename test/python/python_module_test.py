"""The `kiln` Python module (python/), installed with pip into a venv.

python_module_test.py KILN MODELS_DIR WORK_DIR
Runs the reference models' artifacts (mlp, squeezenet1_1, bert_encoder) on
their inputs and compares with torch's outputs saved beside them; checks
the errors (unknown/missing input, dtype, shape, non-contiguous, missing
file, wrong SHA-256), DLPack out (numpy and torch), sessions on two threads,
the session's own input buffers (session.input_buffer),
string tensors in (str or bytes) and out (NumPy arrays of str),
and prints the per-call time of a one-element model. Prints
"N passed, N failed".
"""
import hashlib
import os
import subprocess
import sys
import threading
import time

import numpy as np

import kiln

kiln_bin, models, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok: {what}")
    else:
        failed += 1
        print(f"FAIL: {what}")


def raises(fn, fragment, status=None):
    try:
        fn()
    except kiln.Error as e:
        return fragment in str(e) and (status is None or e.status == status), str(e)
    except TypeError as e:
        return fragment in str(e), str(e)
    return False, "no error"


# Reference models against torch's outputs (the same files models-compile-run uses).
for name in ["mlp", "squeezenet1_1", "bert_encoder"]:
    model = kiln.load(os.path.join(models, f"{name}.so"))
    session = model.session(threads=2)
    for suffix in ["", "8"]:
        x = np.load(os.path.join(models, f"{name}.input{suffix}.npy"))
        expected = np.load(os.path.join(models, f"{name}.output{suffix}.npy"))
        out = session.run({model.inputs[0][0]: x})[model.outputs[0][0]]
        err = float(np.abs(out - expected).max() / max(np.abs(expected).max(), 1e-30))
        check(out.shape == expected.shape and err <= 2e-6,
              f"{name} batch {x.shape[0]}: {out.shape}, max relative error {err:.1e} (<= 2e-6)")

# What ran each library call (the last session made above: bert_encoder's,
# its last run at batch 8): the kernel, in order, and oneDNN's kernel.
calls = session.library_calls()
kernels = [c["kernel"] for c in calls]
check(len(calls) > 0 and None not in kernels and kernels == sorted(kernels) and
      all(":" in c["implementation"] for c in calls),
      f"library_calls(): {len(calls)} calls, each with its kernel and implementation ({calls[:2]})")
check(all(c["kernel"] is None and c["implementation"] == ""
          for c in model.session().library_calls()),
      "library_calls() of a session that has not run: no kernel, no implementation")

# The thread policy (off by default): bert_encoder's 2-thread session,
# turned on, times its runs and tries 1 thread at the 4th.
stats = session.thread_stats()
check(stats["threads"] == 2 and not stats["adaptive"] and stats["reduced_runs"] == 0,
      f"thread_stats() of a 2-thread session, policy off: {stats}")
session.set_adaptive_threads(True)
x = np.load(os.path.join(models, "bert_encoder.input.npy"))
for _ in range(5):
    session.run({model.inputs[0][0]: x})
stats = session.thread_stats()
check(stats["adaptive"] and stats["reduced_threads"] == 1 and stats["runs"] == 5 and
      stats["tries"] >= 1 and stats["reduced_runs"] >= 1,
      f"set_adaptive_threads(True): 5 runs timed, 1 thread tried: {stats}")
session.set_adaptive_threads(False)
check(not session.thread_stats()["adaptive"], "set_adaptive_threads(False)")

mlp_path = os.path.join(models, "mlp.so")
mlp = kiln.load(mlp_path)
check(mlp.inputs == [("input", "float32", (None, 784))] and
      mlp.outputs == [("output", "float32", (None, 10))], f"mlp's signature {mlp.inputs} -> {mlp.outputs}")
s = mlp.session()
x = np.random.default_rng(0).random((3, 784), dtype=np.float32)
by_name = s.run({"input": x})["output"]
by_order = s.run([x])["output"]
check(np.array_equal(by_name, by_order), "inputs by name and in order give the same result")
check(by_name.flags["OWNDATA"] is False and by_name.base is not None,
      "outputs reach numpy over DLPack (a view of kiln's memory, no second copy)")
again = s.run([x * 2])["output"]
check(not np.array_equal(by_name, again) and np.array_equal(by_name, by_order),
      "an output survives the next run (it owns its memory)")

# An input written into the session's own buffer (session.input_buffer):
# the same result; a wrong shape or name is refused.
buf = s.input_buffer("input", (3, 784))
check(buf.shape == (3, 784) and buf.dtype == np.float32 and buf.flags["WRITEABLE"],
      f"input_buffer gives a writable array {buf.shape} {buf.dtype}")
buf[...] = x
check(np.array_equal(s.run({"input": buf})["output"], by_name),
      "a run from the session's input buffer gives the same result")
# An empty batch has a buffer too, asked first (it was refused as out of
# memory).
fresh = mlp.session()
empty = fresh.input_buffer("input", (0, 784))
check(empty.shape == (0, 784) and fresh.run({"input": empty})["output"].shape == (0, 10),
      f"an empty batch's input buffer {empty.shape} runs")
del fresh
for fn, fragment, what in [
    (lambda: s.input_buffer("input", (3, 5)), "784", "an input buffer of the wrong dims"),
    (lambda: s.input_buffer("nope", (3, 784)), "no input 'nope'", "an unknown input's buffer"),
    (lambda: s.input_buffer("input", (784,)), "rank 2", "an input buffer of the wrong rank"),
]:
    ok, message = raises(fn, fragment)
    check(ok, f"{what}: {message}")

# Errors, each with the runtime's message.
for fn, fragment, status, what in [
    (lambda: s.run({"inputs": x}), "has no input 'inputs'", None, "unknown input name"),
    (lambda: s.run({}), "input 'input' is missing", None, "missing input"),
    (lambda: s.run([x, x]), "sequence of 1", None, "too many inputs"),
    (lambda: s.run([x.astype(np.float64)]), "", "KILN_ERROR_DTYPE", "wrong dtype"),
    (lambda: s.run([np.zeros((3, 5), np.float32)]), "784", "KILN_ERROR_SHAPE", "wrong dims"),
    (lambda: s.run([np.zeros((784, 3), np.float32).T]), "C-contiguous", None, "non-contiguous"),
    (lambda: kiln.load(os.path.join(work, "missing.so")), "missing.so", "KILN_ERROR_LOAD", "missing file"),
    (lambda: kiln.load(mlp_path, sha256="0" * 64), "", "KILN_ERROR_VERIFY", "wrong SHA-256"),
]:
    ok, message = raises(fn, fragment, status)
    check(ok, f"{what}: {message}")
digest = hashlib.sha256(open(mlp_path, "rb").read()).hexdigest()
verified = kiln.load(mlp_path, sha256=digest)
check(np.array_equal(verified.session().run([x])["output"], by_name), "load with the right SHA-256")

# DLPack: kiln.Tensor into numpy and torch.
t = s.run([x], dlpack=True)["output"]
check(isinstance(t, kiln.Tensor) and t.shape == (3, 10) and t.dtype == "float32", "dlpack=True gives kiln.Tensor")
check(np.array_equal(np.from_dlpack(t), by_name), "numpy.from_dlpack(kiln.Tensor)")
try:
    import torch
    tt = torch.from_dlpack(s.run([x], dlpack=True)["output"])
    check(torch.equal(tt, torch.from_numpy(by_name)), f"torch.from_dlpack (torch {torch.__version__})")
except ImportError:
    print("skip: torch.from_dlpack (no torch in this python)")

# Two sessions on two threads at once (the GIL is released while a session runs).
results = {}
def worker(i):
    sess = mlp.session(threads=1)
    for _ in range(50):
        results[i] = sess.run([x * (i + 1)])["output"]
threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
for th in threads:
    th.start()
for th in threads:
    th.join()
check(all(np.allclose(results[i], s.run([x * (i + 1)])["output"]) for i in range(2)),
      "two sessions on two threads give each its own results")

# String tensors: in as str or bytes (a list, an object or 'U' array), out
# as NumPy arrays of str, through a model that upper-cases [N] strings and
# parses [2, 2] numbers, then formats them back.
import onnx
from onnx import TensorProto, helper

graph = helper.make_graph(
    [helper.make_node("StringNormalizer", ["x"], ["upper"], case_change_action="UPPER"),
     helper.make_node("Cast", ["v"], ["number"], to=TensorProto.FLOAT),
     helper.make_node("Cast", ["number"], ["text"], to=TensorProto.STRING)],
    "strings",
    [helper.make_tensor_value_info("x", TensorProto.STRING, ["N"]),
     helper.make_tensor_value_info("v", TensorProto.STRING, [2, 2])],
    [helper.make_tensor_value_info("upper", TensorProto.STRING, ["N"]),
     helper.make_tensor_value_info("number", TensorProto.FLOAT, [2, 2]),
     helper.make_tensor_value_info("text", TensorProto.STRING, [2, 2])])
strings_onnx = os.path.join(work, "strings.onnx")
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), strings_onnx)
strings_so = os.path.join(work, "strings.so")
subprocess.run([kiln_bin, "compile", strings_onnx, "-o", strings_so, "--quiet"], check=True)
strings_model = kiln.load(strings_so)
check(strings_model.inputs == [("x", "string", (None,)), ("v", "string", (2, 2))] and
      strings_model.outputs[0] == ("upper", "string", (None,)),
      f"string inputs and outputs described: {strings_model.inputs}, {strings_model.outputs}")
ss = strings_model.session(threads=1)
words = ["café", "Kiln", "", "x y"]
numbers = [["1.5", "-2"], ["1e3", "0.25"]]
for form, x, v in [("object arrays", np.array(words, dtype=object), np.array(numbers, dtype=object)),
                   ("lists", words, numbers),
                   ("'U' arrays", np.array(words), np.array(numbers)),
                   ("bytes", [w.encode() for w in words], np.array([[n.encode() for n in r] for r in numbers], dtype=object))]:
    out = ss.run({"x": x, "v": v})
    check(out["upper"].dtype == object and out["upper"].tolist() == [w.upper() for w in words] and
          np.array_equal(out["number"], np.array([[1.5, -2], [1000, 0.25]], np.float32)) and
          out["text"].shape == (2, 2) and out["text"].tolist() == [["1.5", "-2.0"], ["1000.0", "0.25"]],
          f"strings in as {form}: {out['upper'].tolist()}, {out['text'].tolist()}")
empty = ss.run({"x": np.array([], dtype=object), "v": numbers})["upper"]
check(empty.shape == (0,) or empty.tolist() == [""], f"no strings in: {empty.tolist()}")
check(ss.run({"x": words, "v": numbers}, dlpack=True)["upper"].dtype == object,
      "dlpack=True: a string output is still a NumPy array of str")
ok, msg = raises(lambda: ss.run({"x": [1, 2], "v": numbers}), "element 0 is int")
check(ok, f"a number for a string input: {msg}")
ok, msg = raises(lambda: ss.run({"x": ["a\0b"], "v": numbers}), "NUL character")
check(ok, f"a string holding NUL: {msg}")
ok, msg = raises(lambda: ss.run({"x": words, "v": [["1", "2"]]}), "v")
check(ok, f"a string input of the wrong shape: {msg}")

# A bool output (NumPy 1.24 imports no bool over DLPack: it failed with
# "Unsupported dtype in DLTensor").
graph = helper.make_graph(
    [helper.make_node("Greater", ["a", "b"], ["gt"])], "compare",
    [helper.make_tensor_value_info("a", TensorProto.FLOAT, [3]),
     helper.make_tensor_value_info("b", TensorProto.FLOAT, [3])],
    [helper.make_tensor_value_info("gt", TensorProto.BOOL, [3])])
compare_onnx = os.path.join(work, "compare.onnx")
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), compare_onnx)
compare_so = os.path.join(work, "compare.so")
subprocess.run([kiln_bin, "compile", compare_onnx, "-o", compare_so, "--quiet"], check=True)
a, b = np.array([1, 2, 3], np.float32), np.array([2, 2, 2], np.float32)
gt = kiln.load(compare_so).session(threads=1).run({"a": a, "b": b})["gt"]
check(gt.dtype == np.bool_ and gt.tolist() == [False, False, True],
      f"a bool output as a NumPy bool array: {gt!r}")

# Per-call time of a one-element model (Kiln's own run is ~0.05 us of it).
tiny_src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "tiny.mlir")
tiny_so = os.path.join(work, "tiny.so")
subprocess.run([kiln_bin, "compile", tiny_src, "-o", tiny_so, "--quiet"], check=True)
tiny = kiln.load(tiny_so).session(threads=1)
one = np.ones(1, np.float32)
feed = {"x": one}
for _ in range(1000):
    tiny.run(feed)
best = float("inf")
for _ in range(5):
    n = 20000
    start = time.perf_counter()
    for _ in range(n):
        tiny.run(feed)
    best = min(best, (time.perf_counter() - start) / n * 1e6)
check(tiny.run(feed)["y"][0] == 1.0, "the one-element model runs")
print(f"per call: session.run({{'x': array}}) on a one-element model: {best:.2f} us (best of 5 x 20,000)")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
