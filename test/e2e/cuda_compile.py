#!/usr/bin/env python3
"""CUDA compile coverage: every ONNX backend test case that the CPU backend
passes (its static expected list) is compiled with `kiln compile
--target=cuda`, which lowers every kernel to PTX and runs ptxas on it for
each GPU (default sm_80 and sm_90); a case passes when the artifact is
written. The model is compiled as it is, as the CPU conformance driver
does: nothing is frozen, and shapes, axes and counts given as inputs or
computed from data (NonZero, Unique) are read when the model runs (on
the GPU, the host reads them back). Nothing runs (no GPU here):
test/gpu/run.sh runs the artifacts on a GPU.

Statuses: passed (compiled, ptxas accepted every kernel), failed (with the
compiler's first reason). The run fails on any case of the expected list
that passed and does not now; --update rewrites it. Ends with
`N passed, N failed, N skipped` and the coverage figure.
"""
import argparse
import os
import shutil
import sys
import tempfile
import threading

from onnx_cases import first_reason, list_cases, read_expected, run, run_cases
from onnx_conformance import stable_reason

# What decides coverage besides the compiler: recorded in --update's header.
GPUS = "sm_80,sm_90"


def compile_case(kiln, name, case_dir, work, timeout):
    model = os.path.join(case_dir, "model.onnx")
    out = os.path.join(work, f"{threading.get_ident()}.so")
    code, text = run([kiln, "compile", model, "--target=cuda", f"--gpu={GPUS}", "-q", "-o", out],
                     timeout)
    for f in (out, out[:-3] + ".h"):
        if os.path.exists(f):
            os.remove(f)
    if code == 0:
        return "passed", ""
    return "failed", stable_reason(first_reason(text))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    ap.add_argument("--cpu-expected", required=True,
                    help="the CPU backend's static conformance list: its passed cases are "
                         "the ones compiled")
    ap.add_argument("--expected", required=True)
    ap.add_argument("--update", action="store_true")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--shard", default="1/1", help="I/N: every N-th case from the I-th")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    shard, shards = (int(x) for x in args.shard.split("/"))
    if args.update and shards != 1:
        ap.error("--update records every case: run it without --shard")
    if not os.path.isdir(args.data):
        print(f"SKIPPED: ONNX test data not found at {args.data}")
        return 0
    ptxas = shutil.which("ptxas") or next(
        (p for p in (os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "ptxas"),)
         if os.access(p, os.X_OK)), None)
    if not ptxas:
        print("SKIPPED: no ptxas (the CUDA toolkit) on this machine")
        return 0
    cpu = read_expected(args.cpu_expected)
    cases = [c for c in list_cases(args.data) if cpu.get(c[0]) == "passed"][shard - 1::shards]
    work = tempfile.mkdtemp(prefix="kiln-cuda-compile-")
    try:
        results = run_cases(cases, lambda name, folder: compile_case(args.kiln, name, folder,
                                                                     work, args.timeout),
                            args.jobs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    expected = read_expected(args.expected)
    counts = {"passed": 0, "failed": 0}
    regressions, improvements = [], []
    for n, (status, reason) in sorted(results.items()):
        counts[status] += 1
        if expected.get(n) == "passed" and status != "passed":
            regressions.append(f"{n}: {reason}")
        elif status == "passed" and expected.get(n) != "passed":
            improvements.append(n)
        if args.verbose and status != "passed":
            print(f"{n}: {reason}")
    if args.update:
        with open(args.expected, "w") as f:
            f.write("# CUDA compile status (kiln compile --target=cuda, ptxas for "
                    f"{GPUS}) of every case the CPU backend passes.\n"
                    "# Regenerate with: make cuda-compile-update\n")
            for n, (status, reason) in sorted(results.items()):
                f.write(f"{n} {status}" + (f"  # {reason}" if reason else "") + "\n")
        print(f"recorded {len(results)} cases in {args.expected}")
    for r in regressions:
        print(f"REGRESSION {r}")
    if improvements and not args.update:
        print(f"{len(improvements)} cases compile now that the list says not: "
              "make cuda-compile-update")
    total = len(results)
    share = 100.0 * counts["passed"] / total if total else 0.0
    print(f"CUDA compile coverage: {counts['passed']} of {total} cases the CPU backend passes "
          f"({share:.1f}%), every kernel through ptxas for {GPUS}")
    print(f"{counts['passed']} passed, {counts['failed']} failed, 0 skipped")
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main())
