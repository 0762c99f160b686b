#!/usr/bin/env python3
"""String tensors end to end: models with string inputs and outputs
compiled with `kiln compile`, run with `kiln run` (the C API: string
elements are `const char *`), their outputs compared string for string
with references written here from ONNX's definitions (NumPy's str for
Cast to string, C's strtod for Cast from string). StringNormalizer (each
case action, stopwords with and without case, every string a stopword,
[1, C] input, a length decided at run time), Cast and CastLike both ways
(NaN, infinities, -0, the 1e-4 and 1e16 bounds of positional notation,
integers), Equal of strings with broadcasting, strings moved by Reshape,
Transpose, Gather, Concat, Slice and Identity; StringConcat, StringSplit
(Python's str.split), RegexFullMatch (Python's re.fullmatch), LabelEncoder;
string constants (initializers, Constant, LabelEncoder's string values,
the classifiers' string labels).
Each case also runs for the CUDA
target's loop nests emulated on the CPU (`--emulate-gpu`: the string
operations on host copies of the device buffers, as on a GPU) and
compiles for sm_90 through ptxas (`kiln compile` saying that the host
runs the string operations is checked once). And the refusal: an arithmetic op reading strings names the
tensor.

usage: strings_test.py KILN WORK_DIR
Ends with the line `N passed, N failed`.
"""
import os
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

KILN, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
results = {"passed": 0, "failed": 0}
STRING = TensorProto.STRING


def report(name, ok, detail=""):
    results["passed" if ok else "failed"] += 1
    print(f"{'PASS' if ok else 'FAIL'} {name}" + (f": {detail}" if detail and not ok else ""))


def model(nodes, inputs, outputs, opset=17):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                              [helper.make_tensor_value_info(*o) for o in outputs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def write_pb(path, name, array):
    if array.dtype == object:
        t = helper.make_tensor(name, STRING, array.shape,
                               [s.encode() for s in array.flatten()])
    else:
        t = numpy_helper.from_array(array, name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


# Each case runs for the CPU and for the CUDA target's loop nests
# emulated on the CPU (the string operations then run on the host on
# copies of the device buffers, as on a GPU), and compiles for a GPU
# (sm_90, through ptxas).
TARGETS = [("", []), ("@cuda-emulated", ["--target=cuda", "--emulate-gpu"])]
CUDA_COMPILE = ["--target=cuda", "--gpu=sm_90"]


def compile_model(name, m, target_args=(), tag=""):
    folder = os.path.join(WORK, name)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    artifact = os.path.join(folder, f"model{tag.replace('@', '.')}.so")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    p = subprocess.run([KILN, "compile", path, "-o", artifact, *target_args],
                       capture_output=True, text=True)
    return (artifact if p.returncode == 0 else None), folder, p.stdout + p.stderr


def run_case(name, m, feeds_list, reference):
    """Compiles `m` once a target and runs it on each feeds dict of
    `feeds_list` against reference(feeds) -> {output name: array}."""
    for tag, target_args in TARGETS:
        run_target(name, tag, target_args, m, feeds_list, reference)
    artifact, _, out = compile_model(name, m, CUDA_COMPILE, "@cuda")
    report(f"{name}@cuda compile", artifact is not None, out.strip())


def run_target(name, tag, target_args, m, feeds_list, reference):
    artifact, folder, out = compile_model(name, m, target_args, tag)
    name += tag
    if not artifact:
        report(name, False, "compile: " + out.strip().splitlines()[-1] if out.strip() else "")
        return
    for k, feeds in enumerate(feeds_list):
        args = [KILN, "run", artifact]
        for n, a in feeds.items():
            path = os.path.join(folder, f"in{k}_{n}.pb")
            write_pb(path, n, a)
            args += ["--input", f"{n}={path}"]
        for n, a in reference(feeds).items():
            path = os.path.join(folder, f"want{k}_{n}.pb")
            write_pb(path, n, a)
            args += ["--expected", f"{n}={path}"]
        p = subprocess.run(args, capture_output=True, text=True)
        if p.returncode != 0:
            report(f"{name}[{k}]", False, (p.stdout + p.stderr).strip().replace("\n", " | "))
        else:
            report(f"{name}[{k}]", True)


def strings(*items, shape=None):
    a = np.array(list(items), dtype=object)
    return a.reshape(shape) if shape else a


# --- StringNormalizer ------------------------------------------------------

def normalizer(x, action, stopwords, case_sensitive):
    flat = list(x.flatten())
    if stopwords:
        if case_sensitive:
            flat = [s for s in flat if s not in stopwords]
        else:
            lowered = {w.lower() for w in stopwords}
            flat = [s for s in flat if s.lower() not in lowered]
    if action == "LOWER":
        flat = [s.lower() for s in flat]
    elif action == "UPPER":
        flat = [s.upper() for s in flat]
    if not flat:
        flat = [""]
    out = np.array(flat, dtype=object)
    return out.reshape(1, -1) if x.ndim == 2 else out


WORDS = strings("Monday", "tuesday", "WEDNESDAY", "monday", "thursday", "Été", "ça", "")
for action in ["NONE", "LOWER", "UPPER"]:
    for stop, sensitive in [([], 1), (["monday", "Thursday"], 1), (["monday", "Thursday"], 0)]:
        attrs = {"case_change_action": action, "is_case_sensitive": sensitive}
        if stop:
            attrs["stopwords"] = stop
        name = f"normalizer_{action.lower()}_{len(stop)}stop_{'case' if sensitive else 'nocase'}"
        node = helper.make_node("StringNormalizer", ["x"], ["y"], **attrs)
        m = model([node], [("x", STRING, ["C"])], [("y", STRING, ["D"])])
        feeds = [{"x": WORDS}, {"x": strings("MONDAY", "friday")}, {"x": strings("monday")}]
        run_case(name, m, feeds, lambda f, a=action, s=stop, c=sensitive: {
            "y": normalizer(f["x"], a, s, c)})

node = helper.make_node("StringNormalizer", ["x"], ["y"], case_change_action="UPPER",
                        stopwords=["a", "the"])
m = model([node], [("x", STRING, [1, "C"])], [("y", STRING, [1, "D"])])
run_case("normalizer_rows", m,
         [{"x": strings("the", "cat", "and", "a", "dog", shape=(1, 5))},
          {"x": strings("the", "a", shape=(1, 2))}],
         lambda f: {"y": normalizer(f["x"], "UPPER", ["a", "the"], 1)})

# --- Cast and CastLike -----------------------------------------------------

SPECIAL = np.array([0.47892547, -0.0, 0.0, 1.0, 1e-4, 9e-5, 1e16, 9.9e15, 123456789.0,
                    -3.25, np.nan, np.inf, -np.inf, 1e-45, 3.4e38, 2.5e-7], np.float64)


def numpy_str(a):
    return np.array([str(v) for v in a.flatten()], dtype=object).reshape(a.shape)


for dtype, onnx_type in [(np.float32, TensorProto.FLOAT), (np.float64, TensorProto.DOUBLE)]:
    tag = np.dtype(dtype).name
    m = model([helper.make_node("Cast", ["x"], ["y"], to=STRING)], [("x", onnx_type, ["N"])],
              [("y", STRING, ["N"])])
    run_case(f"cast_{tag}_to_string", m, [{"x": SPECIAL.astype(dtype)},
                                         {"x": np.random.default_rng(3).random(50).astype(dtype)}],
             lambda f: {"y": numpy_str(f["x"])})

m = model([helper.make_node("Cast", ["x"], ["y"], to=STRING)], [("x", TensorProto.INT32, [2, 3])],
          [("y", STRING, [2, 3])])
run_case("cast_int32_to_string", m,
         [{"x": np.array([[0, -1, 7], [2147483647, -2147483648, 42]], np.int32)}],
         lambda f: {"y": numpy_str(f["x"])})

TEXT = strings("0.47892547", "NaN", "INF", "+INF", "-INF", "-0", "1e-3", "  12.5", "abc", "",
               "3.4e38", "1e39")


def parse(a, dtype):
    def one(s):
        try:
            return float(s)
        except ValueError:
            return float("nan")
    return np.array([one(s) for s in a.flatten()], np.float64).astype(dtype).reshape(a.shape)


for dtype, onnx_type in [(np.float32, TensorProto.FLOAT), (np.float64, TensorProto.DOUBLE)]:
    tag = np.dtype(dtype).name
    m = model([helper.make_node("Cast", ["x"], ["y"], to=onnx_type)], [("x", STRING, ["N"])],
              [("y", onnx_type, ["N"])])
    run_case(f"cast_string_to_{tag}", m, [{"x": TEXT}], lambda f, d=dtype: {"y": parse(f["x"], d)})

m = model([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.INT64)], [("x", STRING, [3])],
          [("y", TensorProto.INT64, [3])])
run_case("cast_string_to_int64", m, [{"x": strings("12", "-9000000000000", "7")}],
         lambda f: {"y": np.array([12, -9000000000000, 7], np.int64)})

m = model([helper.make_node("CastLike", ["x", "like"], ["y"])],
          [("x", TensorProto.FLOAT, [4]), ("like", STRING, [1])], [("y", STRING, [4])])
run_case("castlike_float_to_string", m,
         [{"x": np.array([1.5, -2.0, 1e20, 0.1], np.float32), "like": strings("")}],
         lambda f: {"y": numpy_str(f["x"])})

# A round trip: strings to floats and back (the shortest digits read back).
m = model([helper.make_node("Cast", ["x"], ["f"], to=TensorProto.FLOAT),
           helper.make_node("Cast", ["f"], ["y"], to=STRING)],
          [("x", STRING, ["N"])], [("y", STRING, ["N"])])
run_case("cast_round_trip", m, [{"x": strings("0.1", "2.50", "1e-5", "100")}],
         lambda f: {"y": numpy_str(parse(f["x"], np.float32))})

# --- Equal and element moves -----------------------------------------------

m = model([helper.make_node("Equal", ["a", "b"], ["y"])],
          [("a", STRING, ["N", 3]), ("b", STRING, [3])], [("y", TensorProto.BOOL, ["N", 3])])
run_case("equal_broadcast", m,
         [{"a": strings("x", "y", "z", "x", "", "zz", shape=(2, 3)), "b": strings("x", "", "z")}],
         lambda f: {"y": np.array([[a == b for a, b in zip(row, f["b"])] for row in f["a"]])})

m = model([helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
           helper.make_node("Reshape", ["t", "shape"], ["r"]),
           helper.make_node("Gather", ["r", "idx"], ["g"], axis=0),
           helper.make_node("Concat", ["g", "g"], ["c"], axis=0),
           helper.make_node("Slice", ["c", "starts", "ends"], ["s"]),
           helper.make_node("Identity", ["s"], ["y"]),
           helper.make_node("Shape", ["x"], ["shape_of_x"])],
          [("x", STRING, [2, 3]), ("shape", TensorProto.INT64, [1]),
           ("idx", TensorProto.INT64, [2]), ("starts", TensorProto.INT64, [1]),
           ("ends", TensorProto.INT64, [1])],
          [("y", STRING, ["K"]), ("shape_of_x", TensorProto.INT64, [2])])


def moves(f):
    g = f["x"].T.reshape(-1)[f["idx"]]
    c = np.concatenate([g, g])
    return {"y": c[f["starts"][0]:f["ends"][0]], "shape_of_x": np.array([2, 3], np.int64)}


run_case("element_moves", m, [{"x": strings("a", "bb", "ccc", "dddd", "", "f", shape=(2, 3)),
                               "shape": np.array([-1], np.int64),
                               "idx": np.array([5, 0], np.int64),
                               "starts": np.array([1], np.int64),
                               "ends": np.array([4], np.int64)}], moves)

# --- StringConcat, StringSplit, RegexFullMatch, LabelEncoder ----------------

m = model([helper.make_node("StringConcat", ["a", "b"], ["y"])],
          [("a", STRING, ["N", 2]), ("b", STRING, [2])], [("y", STRING, ["N", 2])], opset=20)
run_case("string_concat", m,
         [{"a": strings("ab", "", "Été", "x", shape=(2, 2)), "b": strings("-1", "")}],
         lambda f: {"y": np.array([[a + b for a, b in zip(row, f["b"])] for row in f["a"]],
                                  dtype=object)})


def python_split(x, sep, maxsplit):
    pieces = [s.split(sep or None, maxsplit) for s in x.flatten()]
    width = max([len(p) for p in pieces] + [0])
    y = np.array([p + [""] * (width - len(p)) for p in pieces], dtype=object)
    return {"y": y.reshape(x.shape + (width,)),
            "n": np.array([len(p) for p in pieces], np.int64).reshape(x.shape)}


SENTENCES = strings("a-b--c-", "  hello   world  ! ", "", "x", "-", shape=(5,))
for sep, maxsplit in [("-", -1), ("", -1), ("-", 1), ("", 1), ("--", -1)]:
    attrs = {}
    if sep:
        attrs["delimiter"] = sep
    if maxsplit >= 0:
        attrs["maxsplit"] = maxsplit
    m = model([helper.make_node("StringSplit", ["x"], ["y", "n"], **attrs)],
              [("x", STRING, ["N"])], [("y", STRING, ["N", "K"]), ("n", TensorProto.INT64, ["N"])],
              opset=20)
    run_case(f"string_split_{len(sep)}_{maxsplit}", m,
             [{"x": SENTENCES}, {"x": strings("a b", "c d e", shape=(2,))}],
             lambda f, d=sep, k=maxsplit: python_split(f["x"], d, k))

for pattern, texts in [(r"www\.[\w.-]+\.\bcom\b", ["www.google.com", "www.bbc.co.uk", "www.a-b.com"]),
                       (r"(\W|^)[\w.\-]{0,25}@(yahoo|gmail)\.com(\W|$)",
                        ["joe@gmail.com", "x@hotmail.com", " a.b@yahoo.com!"]),
                       (r"[0-9]+(?:\.[0-9]+)?", ["12", "1.5", "1.", "a1"]),
                       (r"\d{2,3}-\s*x*?", ["12-", "123- xx", "1-"])]:
    import re
    m = model([helper.make_node("RegexFullMatch", ["x"], ["y"], pattern=pattern)],
              [("x", STRING, ["N"])], [("y", TensorProto.BOOL, ["N"])], opset=20)
    run_case(f"regex_{len(pattern)}", m, [{"x": np.array(texts, dtype=object)}],
             lambda f, p=pattern: {"y": np.array([re.fullmatch(p, t) is not None
                                                  for t in f["x"]])})

label = helper.make_node("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml",
                         keys_strings=["cat", "dog", ""], values_int64s=[7, 8, 9],
                         default_int64=-5)
m = helper.make_model(helper.make_graph(
    [label], "g", [helper.make_tensor_value_info("x", STRING, ["N"])],
    [helper.make_tensor_value_info("y", TensorProto.INT64, ["N"])]),
    opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 2)])
run_case("label_encoder_strings", m, [{"x": strings("dog", "cow", "", "cat")}],
         lambda f: {"y": np.array([{"cat": 7, "dog": 8, "": 9}.get(s, -5) for s in f["x"]],
                                  np.int64)})
label = helper.make_node("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml",
                         keys_int64s=[3, 1, 4], values_floats=[0.5, 1.5, 2.5])
m = helper.make_model(helper.make_graph(
    [label], "g", [helper.make_tensor_value_info("x", TensorProto.INT64, [2, 3])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])]),
    opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 2)])
run_case("label_encoder_ints", m, [{"x": np.array([[3, 1, 4], [1, 5, 9]], np.int64)}],
         lambda f: {"y": np.array([[{3: 0.5, 1: 1.5, 4: 2.5}.get(int(v), -0.0) for v in row]
                                   for row in f["x"]], np.float32)})

# --- String constants: initializers, Constant, string values and labels ----

ml = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 2)]


def ml_model(nodes, inputs, outputs, initializers=(), opsets=ml):
    return helper.make_model(helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
        [helper.make_tensor_value_info(*o) for o in outputs], list(initializers)),
        opset_imports=opsets)


names = helper.make_tensor("names", STRING, [2, 2], [b"ant", b"bee", b"", b"D\xc3\xa9j\xc3\xa0"])
m = ml_model([helper.make_node("Constant", [], ["suffix"], value_strings=["-x", "-y"]),
              helper.make_node("StringConcat", ["names", "suffix"], ["joined"]),
              helper.make_node("Equal", ["x", "names"], ["same"])],
             [("x", STRING, [2, 2])], [("joined", STRING, [2, 2]), ("same", TensorProto.BOOL, [2, 2])],
             [names], [helper.make_opsetid("", 20)])
NAMES = np.array([["ant", "bee"], ["", "Déjà"]], dtype=object)
run_case("string_constants", m, [{"x": strings("ant", "cow", "", "déjà", shape=(2, 2))}],
         lambda f: {"joined": np.array([[a + b for a, b in zip(row, ["-x", "-y"])] for row in NAMES],
                                       dtype=object),
                    "same": f["x"] == NAMES})

m = ml_model([helper.make_node("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml",
                               keys_strings=["cat", "dog"], values_strings=["CAT", "DOG"],
                               default_string="?")],
             [("x", STRING, ["N"])], [("y", STRING, ["N"])])
run_case("label_encoder_to_strings", m, [{"x": strings("dog", "emu", "cat")}],
         lambda f: {"y": np.array([{"cat": "CAT", "dog": "DOG"}.get(s, "?") for s in f["x"]],
                                  dtype=object)})
m = ml_model([helper.make_node("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml",
                               keys_int64s=[5, 7], values_strings=["five", "seven"])],
             [("x", TensorProto.INT64, [3])], [("y", STRING, [3])])
run_case("label_encoder_ints_to_strings", m, [{"x": np.array([7, 1, 5], np.int64)}],
         lambda f: {"y": np.array(["seven", "_Unused", "five"], dtype=object)})
m = ml_model([helper.make_node("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml",
                               classes_strings=["a", "b", "c"], default_string="none")],
             [("x", TensorProto.INT64, [4])], [("y", STRING, [4])],
             opsets=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 1)])
run_case("label_encoder_1_ints_to_strings", m, [{"x": np.array([2, 0, 3, -1], np.int64)}],
         lambda f: {"y": np.array(["c", "a", "none", "none"], dtype=object)})

tree = helper.make_node(
    "TreeEnsembleClassifier", ["x"], ["label", "scores"], domain="ai.onnx.ml",
    nodes_treeids=[0, 0, 0], nodes_nodeids=[0, 1, 2], nodes_featureids=[0, 0, 0],
    nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF"], nodes_values=[0.5, 0.0, 0.0],
    nodes_truenodeids=[1, 0, 0], nodes_falsenodeids=[2, 0, 0],
    class_treeids=[0, 0], class_nodeids=[1, 2], class_ids=[0, 1], class_weights=[1.0, 1.0],
    classlabels_strings=["cat", "dog"])
m = ml_model([tree], [("x", TensorProto.FLOAT, ["N", 1])],
             [("label", STRING, ["N"]), ("scores", TensorProto.FLOAT, ["N", 2])])
run_case("tree_classifier_string_labels", m,
         [{"x": np.array([[0.2], [0.9], [0.5]], np.float32)}],
         lambda f: {"label": np.array(["cat" if v <= 0.5 else "dog" for v in f["x"][:, 0]],
                                      dtype=object)})
linear = helper.make_node("LinearClassifier", ["x"], ["label", "scores"], domain="ai.onnx.ml",
                          coefficients=[1.0, 0.0, 0.0, 1.0], intercepts=[0.0, 0.0],
                          classlabels_strings=["a", "b"])
m = ml_model([linear], [("x", TensorProto.FLOAT, ["N", 2])],
             [("label", STRING, ["N"]), ("scores", TensorProto.FLOAT, ["N", 2])])
run_case("linear_classifier_string_labels", m,
         [{"x": np.array([[2, 1], [0, 3], [-1, -2]], np.float32)}],
         lambda f: {"label": np.array(["a" if r[0] >= r[1] else "b" for r in f["x"]],
                                      dtype=object),
                    "scores": f["x"]})

# --- Refusals ----------------------------------------------------------------

m = model([helper.make_node("Add", ["x", "x"], ["y"])], [("x", STRING, [2])],
          [("y", STRING, [2])])
path = os.path.join(WORK, "add_strings.onnx")
with open(path, "wb") as f:
    f.write(m.SerializeToString())
p = subprocess.run([KILN, "check", path], capture_output=True, text=True)
out = p.stdout + p.stderr
report("refuse_arithmetic_on_strings", p.returncode != 0 and "reads the string tensor 'x'" in out,
       out.strip())

m = model([helper.make_node("StringNormalizer", ["x"], ["y"], case_change_action="LOWER")],
          [("x", STRING, [2])], [("y", STRING, [2])])
path = os.path.join(WORK, "normalizer_cuda.onnx")
with open(path, "wb") as f:
    f.write(m.SerializeToString())
p = subprocess.run([KILN, "compile", path, "--target=cuda", "-o",
                    os.path.join(WORK, "normalizer_cuda.so")], capture_output=True, text=True)
out = p.stdout + p.stderr
report("strings_on_cuda_noted",
       p.returncode == 0 and "the host runs 1 string operation(s) on copies of their GPU buffers"
       in out and "not captured into a CUDA Graph" in out,
       out.strip())

print(f"{results['passed']} passed, {results['failed']} failed")
sys.exit(1 if results["failed"] else 0)
