#!/usr/bin/env python3
"""Large graphs compile in near-linear time and compute the right values.

usage: large_graphs.py --kiln KILN --work DIR

A chain of 20,000 Add/Relu nodes (its elementwise fusion used to be
quadratic: 148 s; now a few seconds) is compiled within a time limit far
above its cost and checked against NumPy. Prints "N passed, N failed".
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


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--nodes", type=int, default=20000)
    ap.add_argument("--limit", type=float, default=120, help="seconds the compile may take")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    passed = failed = 0
    model = os.path.join(args.work, "chain.onnx")
    output = chain_model(model, args.nodes)
    start = time.time()
    try:
        result = subprocess.run([args.kiln, "compile", model, "-o",
                                 os.path.join(args.work, "chain.so")],
                                capture_output=True, text=True, timeout=args.limit)
        ok = result.returncode == 0
        detail = result.stderr.strip()
    except subprocess.TimeoutExpired:
        ok, detail = False, f"still compiling after {args.limit:.0f} s"
    took = time.time() - start
    print(f"{'PASS' if ok else 'FAIL'}: a {args.nodes}-node chain compiles in {took:.1f} s "
          f"(limit {args.limit:.0f} s) {detail if not ok else ''}")
    passed, failed = (passed + 1, failed) if ok else (passed, failed + 1)
    if ok:
        x = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
        want = x
        for i in range(args.nodes):
            want = np.maximum(want, 0) if i % 2 else want + x
        np.save(os.path.join(args.work, "x.npy"), x)
        np.save(os.path.join(args.work, "want.npy"), want)
        run = subprocess.run([args.kiln, "run", os.path.join(args.work, "chain.so"), "--input",
                              "x=" + os.path.join(args.work, "x.npy"), "--expected",
                              f"{output}=" + os.path.join(args.work, "want.npy"),
                              "--max-relative-error", "1e-5"], capture_output=True, text=True)
        ok = run.returncode == 0
        print(f"{'PASS' if ok else 'FAIL'}: its output matches NumPy "
              f"{run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr}")
        passed, failed = (passed + 1, failed) if ok else (passed, failed + 1)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
