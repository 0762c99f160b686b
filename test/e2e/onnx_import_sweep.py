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
import concurrent.futures
import os
import re
import subprocess
import sys

SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple"]
RANK = {"failed": 0, "unsupported": 1, "frozen": 2, "imported": 3}
FREEZE = re.compile(r"--freeze-input (\S+)=<file>")


def tensor_name(pb_path):
    """The `name` field of a serialised TensorProto (field 8), read without
    the onnx package so the sweep has no Python dependencies."""
    data = open(pb_path, "rb").read()
    i = 0
    while i < len(data):
        key = data[i]
        i += 1
        # Multi-byte keys do not occur for TensorProto's fields below 16.
        field, wire = key >> 3, key & 7
        if wire == 0:
            while data[i] & 0x80:
                i += 1
            i += 1
        elif wire == 2:
            length, shift = 0, 0
            while True:
                b = data[i]
                i += 1
                length |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
            if field == 8:
                return data[i:i + length].decode("utf-8", "replace")
            i += length
        elif wire == 5:
            i += 4
        elif wire == 1:
            i += 8
        else:
            return None
    return None


def run_kiln(kiln, args, timeout):
    try:
        p = subprocess.run([kiln, "import", *args, "-o", os.devnull],
                           capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", ""


def classify(kiln, case_dir, timeout):
    model = os.path.join(case_dir, "model.onnx")
    code, err = run_kiln(kiln, [model], timeout)
    frozen, names = [], set()
    data_dir = os.path.join(case_dir, "test_data_set_0")
    files = {}
    if os.path.isdir(data_dir):
        for f in sorted(os.listdir(data_dir)):
            if f.startswith("input_"):
                path = os.path.join(data_dir, f)
                files[tensor_name(path)] = path
    # Each round freezes the inputs the importer asked for; a node asks for
    # one input at a time, so repeat while it asks for new ones.
    while code == 1 and "needs a constant" in err and "invalid (" not in err:
        wanted = set(FREEZE.findall(err)) - names
        if not wanted or not wanted <= set(files):
            break
        names |= wanted
        frozen = []
        for name in sorted(names):
            frozen += ["--freeze-input", f"{name}={files[name]}"]
        code, err = run_kiln(kiln, [model] + frozen, timeout)
    if code == 0:
        return ("frozen" if frozen else "imported"), ""
    if code == 1 and "invalid (" not in err:
        return "unsupported", first_reason(err)
    reason = "timeout" if code == "timeout" else f"exit {code}: {first_reason(err)}"
    return "failed", reason


def first_reason(err):
    lines = [l.strip() for l in err.splitlines() if l.startswith("  ")]
    return lines[0] if lines else err.strip().splitlines()[-1] if err.strip() else ""


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
    cases = []
    for suite in SUITES:
        root = os.path.join(args.data, suite)
        for case in sorted(os.listdir(root)):
            if os.path.exists(os.path.join(root, case, "model.onnx")):
                cases.append((f"{suite}/{case}", os.path.join(root, case)))

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = dict(zip([c[0] for c in cases],
                           pool.map(lambda c: classify(args.kiln, c[1], args.timeout),
                                    cases)))

    expected = {}
    if os.path.exists(args.expected):
        for line in open(args.expected):
            line = line.split("#")[0].strip()
            if line:
                name, status = line.split()
                expected[name] = status

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
        with open(args.expected, "w") as f:
            f.write("# Expected import status of every ONNX backend test case.\n"
                    "# Regenerate with: make import-sweep-update\n")
            for name in sorted(results):
                f.write(f"{name} {results[name][0]}\n")

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
