#!/usr/bin/env python3
"""Large graphs compile in near-linear time and compute the right values.

usage: large_graphs.py --kiln KILN --work DIR

A chain of 20,000 Add/Relu nodes (its elementwise fusion used to be
quadratic: 148 s; now a few seconds) and 2,000 Add/Relu pairs into one
Concat (its bufferisation used to grow faster than quadratically: 200
inputs took 72 s) are each compiled within a time limit far above their
cost and checked against NumPy. Prints "N passed, N failed".
"""

import argparse
import os
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper


def chain_model(path, n):
    """x -> Add(x) -> Relu -> Add(x) -> ... (n nodes), [4, 16] floats."""
    nodes, prev = [], "x"
    for i in range(n):
        out = f"t{i}"
        if i % 2:
            nodes.append(helper.make_node("Relu", [prev], [out], name=f"relu{i}"))
        else:
            nodes.append(helper.make_node("Add", [prev, "x"], [out], name=f"add{i}"))
        prev = out
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [4, 16])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return prev


def wide_model(path, n):
    """n Relu(x + i) side by side, concatenated along dim 1: [4, 16 n]."""
    nodes, inits, parts = [], [], []
    for i in range(n):
        inits.append(helper.make_tensor(f"c{i}", TensorProto.FLOAT, [], [float(i % 7) - 3.0]))
        nodes.append(helper.make_node("Add", ["x", f"c{i}"], [f"a{i}"], name=f"add{i}"))
        nodes.append(helper.make_node("Relu", [f"a{i}"], [f"r{i}"], name=f"relu{i}"))
        parts.append(f"r{i}")
    nodes.append(helper.make_node("Concat", parts, ["y"], axis=1, name="concat"))
    graph = helper.make_graph(
        nodes, "wide", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16 * n])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return "y"


def chain_reference(x, n):
    want = x
    for i in range(n):
        want = np.maximum(want, 0) if i % 2 else want + x
    return want


def wide_reference(x, n):
    return np.concatenate([np.maximum(x + (float(i % 7) - 3.0), 0) for i in range(n)], axis=1)


def check(kiln, work, name, what, build, reference, limit):
    """Compiles `name` within `limit` seconds and compares it with NumPy;
    returns (passed, failed)."""
    model = os.path.join(work, name + ".onnx")
    output = build(model)
    start = time.time()
    try:
        result = subprocess.run([kiln, "compile", model, "-o", os.path.join(work, name + ".so")],
                                capture_output=True, text=True, timeout=limit)
        ok = result.returncode == 0
        detail = result.stderr.strip()
    except subprocess.TimeoutExpired:
        ok, detail = False, f"still compiling after {limit:.0f} s"
    took = time.time() - start
    print(f"{'PASS' if ok else 'FAIL'}: {what} compiles in {took:.1f} s "
          f"(limit {limit:.0f} s) {detail if not ok else ''}", flush=True)
    if not ok:
        return 0, 1
    x = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
    np.save(os.path.join(work, name + ".x.npy"), x)
    np.save(os.path.join(work, name + ".want.npy"), reference(x))
    run = subprocess.run([kiln, "run", os.path.join(work, name + ".so"), "--input",
                          "x=" + os.path.join(work, name + ".x.npy"), "--expected",
                          f"{output}=" + os.path.join(work, name + ".want.npy"),
                          "--max-relative-error", "1e-5"], capture_output=True, text=True)
    ok = run.returncode == 0
    print(f"{'PASS' if ok else 'FAIL'}: its output matches NumPy "
          f"{run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr}",
          flush=True)
    return (2, 0) if ok else (1, 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--nodes", type=int, default=20000, help="length of the Add/Relu chain")
    ap.add_argument("--concat", type=int, default=2000, help="inputs of the wide concat")
    ap.add_argument("--limit", type=float, default=120, help="seconds a compile may take")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    passed = failed = 0
    for name, what, build, reference in [
            ("chain", f"a {args.nodes}-node Add/Relu chain",
             lambda path: chain_model(path, args.nodes), lambda x: chain_reference(x, args.nodes)),
            ("wide", f"{args.concat} Add/Relu pairs into one Concat",
             lambda path: wide_model(path, args.concat), lambda x: wide_reference(x, args.concat))]:
        p, f = check(args.kiln, args.work, name, what, build, reference, args.limit)
        passed, failed = passed + p, failed + f
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
