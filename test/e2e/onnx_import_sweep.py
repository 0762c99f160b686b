#!/usr/bin/env python3
"""Import sweep: runs `kiln import` on every case of ONNX's backend test
suites (node, pytorch-converted, pytorch-operator, simple) and compares each
case's status with the expected list kept in the repository.

Statuses:
  imported     the model imports as it is
  frozen       it imports once the inputs it needs at compile time (shapes,
               axes, ...) are frozen to the case's test data
  unsupported  Kiln reports ops, attributes or types it does not support
  failed       a crash, a hang, or an `invalid` report on a valid model

The sweep fails on any `failed` case and on any case whose status is worse
than expected. Better-than-expected cases are listed; `--update` rewrites
the expected list.
"""
import argparse
import os
import sys

from onnx_cases import (first_reason, freeze_args, list_cases, read_expected, run_cases,
                        write_expected)

RANK = {"failed": 0, "unsupported": 1, "frozen": 2, "imported": 3}


def classify(kiln, case_dir, timeout):
    model = os.path.join(case_dir, "model.onnx")
    code, out, names, _ = freeze_args(kiln, "import", model, case_dir,
                                      ["-o", os.devnull], timeout)
    if code == 0:
        return ("frozen" if names else "imported"), ""
    if code == 1 and "invalid (" not in out:
        return "unsupported", first_reason(out)
    reason = "timeout" if code == "timeout" else f"exit {code}: {first_reason(out)}"
    return "failed", reason


OP_TYPES = {}


def load_op_types(data):
    """Op types per node-suite case (needs Debian's python3-onnx; the
    coverage line is left out without it)."""
    try:
        import onnx
    except ImportError:
        return
    root = os.path.join(data, "node")
    for case in os.listdir(root):
        path = os.path.join(root, case, "model.onnx")
        if os.path.exists(path):
            m = onnx.load(path, load_external_data=False)
            OP_TYPES[case] = {n.op_type for n in m.graph.node}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    ap.add_argument("--expected", required=True)
    ap.add_argument("--update", action="store_true")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()

    if not os.path.isdir(args.data):
        print(f"SKIPPED: ONNX test data not found at {args.data}")
        return 0
    load_op_types(args.data)
    cases = list_cases(args.data)

    results = run_cases(cases, lambda name, folder: classify(args.kiln, folder, args.timeout),
                        args.jobs)
    expected = read_expected(args.expected)

    counts = {s: 0 for s in RANK}
    regressions, improvements = [], []
    for name, (status, reason) in results.items():
        counts[status] += 1
        want = expected.get(name, "unsupported")
        if status == "failed" or RANK[status] < RANK[want]:
            regressions.append(f"{name}: {status} (expected {want}) {reason}")
        elif RANK[status] > RANK[want]:
            improvements.append(f"{name}: {status} (expected {want})")
        if args.verbose and status not in ("imported", "frozen"):
            print(f"{name}: {status}: {reason}")

    if args.update:
        write_expected(args.expected, results,
                       "Expected import status of every ONNX backend test case.",
                       "make import-sweep-update")

    for line in improvements:
        print("better than expected:", line)
    for line in regressions:
        print("REGRESSION:", line)
    # Op types of the node suite with at least one case that imports.
    covered, seen = set(), set()
    for name, (status, _) in results.items():
        suite, case = name.split("/", 1)
        if suite != "node":
            continue
        types = OP_TYPES.get(case)
        if types is None:
            continue
        seen |= types
        if status in ("imported", "frozen"):
            covered |= types
    imported = counts["imported"] + counts["frozen"]
    if seen:
        print(f"node op types with an importing case: {len(covered)} of {len(seen)}")
        if args.verbose:
            print("  not covered:", " ".join(sorted(seen - covered)))
    print(f"{imported} imported ({counts['frozen']} with frozen inputs), "
          f"{counts['unsupported']} unsupported, {counts['failed']} failed "
          f"of {len(results)} cases")
    if improvements and not args.update:
        print("(run with --update to record the improvements)")
    return 1 if regressions and not args.update else 0


if __name__ == "__main__":
    sys.exit(main())
