#!/usr/bin/env python3
"""The classical-ML domain (ai.onnx.ml) against references written here
from ONNX's definitions. Scaler, Normalizer, Imputer, LinearRegressor and
LinearClassifier (frontends/onnx/ops/ML.cpp) on random data; tree
ensembles (frontends/onnx/ops/Trees.cpp) against a walk of the
trees written here from ONNX's definitions: random forests of random
trees (every rule, NaN features with and without missing_value_tracks_true,
several targets per leaf, set membership for TreeEnsemble 5), each
aggregation (SUM, AVERAGE, MIN, MAX), base values, the post transforms,
TreeEnsembleClassifier's labels and scores (multi-class and binary), a
batch decided at run time. Each model is compiled once with `kiln compile` and run with
`kiln run` on a batch that hits every rule.

usage: tree_ensemble_test.py KILN WORK_DIR
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
rng = np.random.default_rng(7)
results = {"passed": 0, "failed": 0}
RULES = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"]
FEATURES = 5
# Values the features take: few, so that EQ / NEQ / membership hit.
GRID = np.array([-1.0, 0.0, 0.5, 1.0, 2.0], np.float32)


def random_tree(depth, rules):
    """Nested dicts: {"rule", "feature", "value", "tracks", "true", "false"}
    or {"leaf": [(target, weight), ...]}."""
    if depth == 0 or rng.random() < 0.2:
        return {"leaf": [(int(t), float(rng.normal())) for t in
                         rng.choice(3, size=rng.integers(1, 3), replace=False)]}
    return {"rule": rules[rng.integers(len(rules))], "feature": int(rng.integers(FEATURES)),
            "value": float(rng.choice(GRID)), "tracks": int(rng.integers(2)),
            "members": sorted(set(float(v) for v in rng.choice(GRID, 2))),
            "true": random_tree(depth - 1, rules), "false": random_tree(depth - 1, rules)}


def holds(node, x, nan_by_flag):
    v = x[node["feature"]]
    if np.isnan(v) and nan_by_flag:
        return bool(node["tracks"])
    rule, t = node["rule"], node["value"]
    r = {"BRANCH_LEQ": v <= t, "BRANCH_LT": v < t, "BRANCH_GTE": v >= t, "BRANCH_GT": v > t,
         "BRANCH_EQ": v == t, "BRANCH_NEQ": v != t,
         "MEMBER": v in node["members"]}[rule]
    return bool(r) or (bool(node["tracks"]) and bool(np.isnan(v)))


def walk(tree, x, nan_by_flag):
    while "leaf" not in tree:
        tree = tree["true"] if holds(tree, x, nan_by_flag) else tree["false"]
    return tree["leaf"]


def reference(trees, x, how, base, nan_by_flag, dtype):
    info = np.finfo(dtype)
    out = np.zeros((len(x), 3), np.float64)
    for n, row in enumerate(x):
        acc = {t: [] for t in range(3)}
        for tree in trees:
            for target, w in walk(tree, row, nan_by_flag):
                acc[target].append(w)
        for t in range(3):
            if how in ("SUM", "AVERAGE"):
                out[n, t] = sum(acc[t]) / (len(trees) if how == "AVERAGE" else 1)
            elif how == "MIN":
                out[n, t] = min(acc[t]) if acc[t] else info.max
            else:
                out[n, t] = max(acc[t]) if acc[t] else info.min
    return (out + np.array(base)).astype(dtype)


def post_transform(scores, name):
    """ONNX's reference's formulas, row by row."""
    s = scores.astype(np.float64)
    if name == "LOGISTIC":
        return 1 / (1 + np.exp(-s))
    if name == "SOFTMAX":
        e = np.exp(s - s.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    if name == "SOFTMAX_ZERO":
        out = np.empty_like(s)
        for r, row in enumerate(s):
            top = row.max()
            e = np.where(np.abs(row) > 1e-7, np.exp(row - top), row * np.exp(-top))
            out[r] = 0.5 if e.sum() == 0 else e / e.sum()
        return out
    if name == "PROBIT":
        def erf_inv(x):
            sign = np.where(x < 0, -1.0, 1.0)
            t = (1 - x) * (1 + x)
            log = np.log(np.where(t == 0, 1, t))
            v = 2 / (np.pi * 0.147) + 0.5 * log
            return np.where(t == 0, 0, sign * np.sqrt(-v + np.sqrt(v * v - log / 0.147)))
        return 1.41421356 * erf_inv(2 * s - 1)
    return s


def classify(trees, x, labels, base, post):
    """TreeEnsembleClassifier as ONNX's reference computes it."""
    res = np.zeros((len(x), len(labels))) + np.array(base or [0.0] * len(labels))
    for n, row in enumerate(x):
        for tree in trees:
            for cls, w in walk(tree, row, True):
                res[n, cls] += w
    binary = len({cls for t in trees for cls, _ in leaves_of(t)}) == 1
    names = list(labels)
    if binary:
        if len(labels) == 1:
            res = np.stack([np.zeros(len(x)), res[:, 0]], 1)
            names = [0, labels[0]]
        else:
            res[:, 1] = res[:, 0]
        res[:, 0] = 1 - res[:, 1] if post in ("NONE", "PROBIT") else -res[:, 1]
    scores = post_transform(res.astype(np.float32), post).astype(np.float32)
    return np.array(names, np.int64)[np.argmax(scores, axis=1)], scores


def leaves_of(tree):
    if "leaf" in tree:
        return tree["leaf"]
    return leaves_of(tree["true"]) + leaves_of(tree["false"])


def regressor_model(trees, how, base, op="TreeEnsembleRegressor", post="NONE", labels=None):
    a = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes",
                         "nodes_values", "nodes_truenodeids", "nodes_falsenodeids",
                         "nodes_missing_value_tracks_true", "target_treeids", "target_nodeids",
                         "target_ids", "target_weights")}
    for tid, tree in enumerate(trees):
        numbered = []

        def number(node):
            numbered.append(node)
            node["id"] = len(numbered) - 1
            if "leaf" not in node:
                number(node["true"])
                number(node["false"])
        number(tree)
        # Listed in reverse, so that the root is not the first entry.
        for node in reversed(numbered):
            leaf = "leaf" in node
            a["nodes_treeids"].append(tid)
            a["nodes_nodeids"].append(node["id"])
            a["nodes_featureids"].append(0 if leaf else node["feature"])
            a["nodes_modes"].append("LEAF" if leaf else node["rule"])
            a["nodes_values"].append(0.0 if leaf else node["value"])
            a["nodes_truenodeids"].append(0 if leaf else node["true"]["id"])
            a["nodes_falsenodeids"].append(0 if leaf else node["false"]["id"])
            a["nodes_missing_value_tracks_true"].append(0 if leaf else node["tracks"])
            for target, w in node.get("leaf", []):
                a["target_treeids"].append(tid)
                a["target_nodeids"].append(node["id"])
                a["target_ids"].append(target)
                a["target_weights"].append(w)
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])]
    if op == "TreeEnsembleRegressor":
        node = helper.make_node(op, ["x"], ["y"], domain="ai.onnx.ml", n_targets=3,
                                aggregate_function=how, base_values=base, post_transform=post,
                                **a)
    else:
        a = {k.replace("target_", "class_"): v for k, v in a.items()}
        extra = {"base_values": base} if base else {}
        node = helper.make_node(op, ["x"], ["label", "y"], domain="ai.onnx.ml",
                                classlabels_int64s=labels, post_transform=post, **a, **extra)
        outputs = [helper.make_tensor_value_info("label", TensorProto.INT64, ["batch"]),
                   helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", None])]
    graph = helper.make_graph([node], "forest",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                             ["batch", FEATURES])],
                              outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid("ai.onnx.ml", 3)])


def ensemble5_model(trees, how):
    """TreeEnsemble (ai.onnx.ml 5): nodes and leaves numbered apart."""
    nodes, leaves = [], []

    def number(node):
        if "leaf" in node:
            node["index"] = len(leaves)
            leaves.append(node)
        else:
            node["index"] = len(nodes)
            nodes.append(node)
            number(node["true"])
            if node["false"] is not node["true"]:
                number(node["false"])
    roots = []
    for tree in trees:
        if "leaf" in tree:
            # A tree that is one leaf: a root whose both branches name it.
            tree = {"rule": "BRANCH_LEQ", "feature": 0, "value": 0.0, "tracks": 0,
                    "true": tree, "false": tree}
        number(tree)
        roots.append(tree["index"])
    # TreeEnsemble 5 gives one (target, weight) per leaf: keep the first.
    for leaf in leaves:
        leaf["leaf"] = leaf["leaf"][:1]
    modes = {r: i for i, r in enumerate(RULES)}
    modes["MEMBER"] = 6
    members = []
    for n in nodes:
        if n["rule"] == "MEMBER":
            members += n["members"] + [np.nan]
    attrs = dict(
        nodes_featureids=[n["feature"] for n in nodes],
        nodes_modes=numpy_helper.from_array(np.array([modes[n["rule"]] for n in nodes],
                                                     np.uint8)),
        nodes_splits=numpy_helper.from_array(np.array([n["value"] for n in nodes], np.float32)),
        nodes_truenodeids=[n["true"]["index"] for n in nodes],
        nodes_trueleafs=[int("leaf" in n["true"]) for n in nodes],
        nodes_falsenodeids=[n["false"]["index"] for n in nodes],
        nodes_falseleafs=[int("leaf" in n["false"]) for n in nodes],
        nodes_missing_value_tracks_true=[n["tracks"] for n in nodes],
        leaf_targetids=[l["leaf"][0][0] for l in leaves],
        leaf_weights=numpy_helper.from_array(np.array([l["leaf"][0][1] for l in leaves],
                                                      np.float32)),
        tree_roots=roots, n_targets=3,
        aggregate_function={"AVERAGE": 0, "SUM": 1, "MIN": 2, "MAX": 3}[how])
    if members:
        attrs["membership_values"] = numpy_helper.from_array(np.array(members, np.float32))
    node = helper.make_node("TreeEnsemble", ["x"], ["y"], domain="ai.onnx.ml", **attrs)
    graph = helper.make_graph([node], "forest",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                             ["batch", FEATURES])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                             ["batch", 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                                   helper.make_opsetid("ai.onnx.ml", 5)])


def compile_model(name, model):
    """(folder, artifact path) of `model` compiled; artifact None (the
    failure counted) when it does not compile."""
    folder = os.path.join(WORK, name)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    onnx.save(model, path)
    artifact = os.path.join(folder, "model.so")
    p = subprocess.run([KILN, "compile", path, "-o", artifact], capture_output=True, text=True)
    if p.returncode != 0:
        results["failed"] += 1
        print(f"FAIL {name}: compile: {(p.stdout + p.stderr).strip()[-300:]}")
        return folder, None
    return folder, artifact


def run_case(name, model, trees, how, base, nan_by_flag, post="NONE", labels=None):
    folder, artifact = compile_model(name, model)
    if not artifact:
        return
    for batch in (1, 37):
        x = rng.choice(GRID, size=(batch, FEATURES)).astype(np.float32)
        x[rng.random(x.shape) < 0.15] = np.nan
        np.save(os.path.join(folder, "x.npy"), x)
        p = subprocess.run([KILN, "run", artifact, "--input", f"x={folder}/x.npy",
                            "--output-dir", folder], capture_output=True, text=True)
        if labels is None:
            want = post_transform(reference(trees, x, how, base, nan_by_flag, np.float32),
                                  post).astype(np.float32)
        else:
            want_labels, want = classify(trees, x, labels, base, post)
        if p.returncode != 0:
            results["failed"] += 1
            print(f"FAIL {name} batch {batch}: run: {(p.stdout + p.stderr).strip()[-300:]}")
            continue
        got = np.load(os.path.join(folder, "y.npy"))
        if labels is not None and not np.array_equal(
                np.load(os.path.join(folder, "label.npy")), want_labels):
            results["failed"] += 1
            print(f"FAIL {name} batch {batch}: labels "
                  f"{np.load(os.path.join(folder, 'label.npy'))[:8]}, want {want_labels[:8]}")
        elif got.shape != want.shape or not np.allclose(got, want, rtol=1e-5, atol=1e-5):
            results["failed"] += 1
            print(f"FAIL {name} batch {batch}: got {got[:3]}, want {want[:3]}")
        else:
            results["passed"] += 1
            print(f"PASS {name} batch {batch}")


for how in ("SUM", "AVERAGE", "MIN", "MAX"):
    trees = [random_tree(5, RULES) for _ in range(6)]
    base = [float(v) for v in rng.normal(size=3)] if how in ("SUM", "AVERAGE") else [0.0] * 3
    run_case(f"regressor_{how.lower()}", regressor_model(trees, how, base), trees, how, base,
             nan_by_flag=True)
for post in ("LOGISTIC", "SOFTMAX"):
    trees = [random_tree(5, RULES) for _ in range(4)]
    run_case(f"regressor_{post.lower()}", regressor_model(trees, "SUM", [0.0] * 3, post=post),
             trees, "SUM", [0.0] * 3, nan_by_flag=True, post=post)
# Classifiers: three classes (scores as they are, softmax, softmax_zero),
# and binary ones (every weight names class 0) with logistic and probit.
for post, base in (("NONE", [0.1, 0.0, -0.2]), ("SOFTMAX", None), ("SOFTMAX_ZERO", None)):
    trees = [random_tree(5, RULES) for _ in range(5)]
    run_case(f"classifier_{post.lower()}",
             regressor_model(trees, "SUM", base, "TreeEnsembleClassifier", post, [3, 5, 9]),
             trees, "SUM", base, True, post=post, labels=[3, 5, 9])
for post, labels in (("LOGISTIC", [0, 1]), ("PROBIT", [1])):
    trees = [random_tree(4, RULES) for _ in range(4)]

    def only_class_zero(t):
        if "leaf" in t:
            t["leaf"] = [(0, float(rng.uniform(0, 0.2)))]
        else:
            only_class_zero(t["true"])
            only_class_zero(t["false"])
    for tree in trees:
        only_class_zero(tree)
    run_case(f"classifier_binary_{post.lower()}",
             regressor_model(trees, "SUM", None, "TreeEnsembleClassifier", post, labels),
             trees, "SUM", None, True, post=post, labels=labels)
for how in ("SUM", "MAX"):
    trees = [random_tree(4, RULES + ["MEMBER"]) for _ in range(5)]
    model = ensemble5_model(trees, how)
    run_case(f"ensemble5_{how.lower()}", model, trees, how, [0.0] * 3, nan_by_flag=False)



def check_node(name, node, outputs, x, want):
    """Compiles one ai.onnx.ml node over `x` ([batch, features], batch
    decided at run time) and compares each output with `want` ({name:
    array})."""
    graph = helper.make_graph(
        [node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", x.shape[1]])],
        [helper.make_tensor_value_info(n, t, ["batch"] + [None] * (r - 1)) for n, t, r in outputs])
    folder, artifact = compile_model(name, helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)]))
    if not artifact:
        return
    np.save(os.path.join(folder, "x.npy"), x)
    p = subprocess.run([KILN, "run", artifact, "--input", f"x={folder}/x.npy", "--output-dir",
                        folder], capture_output=True, text=True)
    if p.returncode != 0:
        results["failed"] += 1
        print(f"FAIL {name}: run: {(p.stdout + p.stderr).strip()[-300:]}")
        return
    for n, w in want.items():
        got = np.load(os.path.join(folder, n + ".npy"))
        same = (np.array_equal(got, w) if w.dtype.kind == "i" else
                got.shape == w.shape and np.allclose(got, w, rtol=1e-5, atol=1e-6, equal_nan=True))
        if not same:
            results["failed"] += 1
            print(f"FAIL {name}: output {n}: got {got.ravel()[:6]}, want {w.ravel()[:6]}")
            return
    results["passed"] += 1
    print(f"PASS {name}")


ml = "ai.onnx.ml"
x = rng.standard_normal((9, 4)).astype(np.float32)
offset, scale = [0.5, -1.0, 0.0, 2.0], [2.0, 0.5, 1.0, -1.0]
check_node("scaler", helper.make_node("Scaler", ["x"], ["y"], domain=ml, offset=offset,
                                      scale=scale),
           [("y", TensorProto.FLOAT, 2)], x, {"y": (x - offset) * np.float32(scale)})
for norm, size in (("MAX", np.abs(x).max(1)), ("L1", np.abs(x).sum(1)),
                   ("L2", np.sqrt((x * x).sum(1)))):
    check_node(f"normalizer_{norm.lower()}",
               helper.make_node("Normalizer", ["x"], ["y"], domain=ml, norm=norm),
               [("y", TensorProto.FLOAT, 2)], x, {"y": x / np.maximum(size, 1e-30)[:, None]})
holes = x.copy()
holes[rng.random(x.shape) < 0.3] = np.nan
fill = [9.0, 8.0, 7.0, 6.0]
check_node("imputer", helper.make_node("Imputer", ["x"], ["y"], domain=ml,
                                       imputed_value_floats=fill,
                                       replaced_value_float=float("nan")),
           [("y", TensorProto.FLOAT, 2)], holes,
           {"y": np.where(np.isnan(holes), np.float32(fill), holes)})
w = rng.standard_normal((3, 4)).astype(np.float32)
b = rng.standard_normal(3).astype(np.float32)
check_node("linear_regressor", helper.make_node("LinearRegressor", ["x"], ["y"], domain=ml,
                                                coefficients=w.ravel().tolist(),
                                                intercepts=b.tolist(), targets=3),
           [("y", TensorProto.FLOAT, 2)], x, {"y": x @ w.T + b})
for post in ("NONE", "SOFTMAX", "LOGISTIC"):
    scores = post_transform(x @ w.T + b, post).astype(np.float32)
    check_node(f"linear_classifier_{post.lower()}",
               helper.make_node("LinearClassifier", ["x"], ["label", "y"], domain=ml,
                                coefficients=w.ravel().tolist(), intercepts=b.tolist(),
                                classlabels_ints=[4, 2, 7], post_transform=post),
               [("label", TensorProto.INT64, 1), ("y", TensorProto.FLOAT, 2)], x,
               {"label": np.array([4, 2, 7], np.int64)[np.argmax(scores, 1)], "y": scores})
# One coefficient row for two labels: scores [-s, s].
s1 = x @ w[:1].T + b[:1]
two = post_transform(np.concatenate([-s1, s1], 1), "LOGISTIC").astype(np.float32)
check_node("linear_classifier_binary",
           helper.make_node("LinearClassifier", ["x"], ["label", "y"], domain=ml,
                            coefficients=w[0].tolist(), intercepts=b[:1].tolist(),
                            classlabels_ints=[0, 1], post_transform="LOGISTIC"),
           [("label", TensorProto.INT64, 1), ("y", TensorProto.FLOAT, 2)], x,
           {"label": np.argmax(two, 1).astype(np.int64), "y": two})
# One row, one label: the label where the score reaches 0, else 0.
check_node("linear_classifier_one_score",
           helper.make_node("LinearClassifier", ["x"], ["label", "y"], domain=ml,
                            coefficients=w[0].tolist(), intercepts=b[:1].tolist(),
                            classlabels_ints=[5]),
           [("label", TensorProto.INT64, 1), ("y", TensorProto.FLOAT, 2)], x,
           {"label": np.where(s1[:, 0] >= 0, 5, 0).astype(np.int64), "y": s1.astype(np.float32)})

print(f"{results['passed']} passed, {results['failed']} failed")
sys.exit(1 if results["failed"] else 0)
